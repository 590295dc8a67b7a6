"""Helpers every stage shares: the validated config, output paths, the `srrg` command, the
source files a rule runs (declared as inputs so code edits rerun it) and the final targets.
"""

import json
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

REPO = Path(workflow.basedir)
SRC = REPO / "src"
sys.path.insert(0, str(SRC))

from srrg.config import ConfigError, validate as validate_config

try:
    _checked = validate_config(config)
except ConfigError as err:
    raise WorkflowError(f"config.yaml / --config / --configfile: {err}") from None
config.clear()
config.update(_checked)

# Jobs run `python -m srrg` from this source tree (PYTHONPATH), so the code a rule declares as
# input is the code it runs. Without conda, `python` is the interpreter running Snakemake (its
# bin folder goes first on PATH); with --software-deployment-method conda it is the rule's env's.
_CONDA = DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
_PATH = "" if _CONDA else f"PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH "
# (the prefix is formatted like a shell command: literal braces are doubled)
shell.prefix(
    "export "
    + _PATH
    + "PYTHONPATH="
    + shlex.quote(str(SRC))
    + "${{PYTHONPATH:+:$PYTHONPATH}}; "
)

SPLITS = ("train", "validate", "test")
_CODE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".csv", ".txt", ".tsv"}

# Final targets: each stage file appends what `snakemake` (rule all) should build.
ALL_TARGETS = []


def add_targets(*paths):
    """Register final targets of a stage for rule `all`."""
    ALL_TARGETS.extend(paths)


def _local(path):
    """Paths inside the working directory stay relative (portable logs and metadata)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def results(*parts):
    return str(Path(config["results_dir"], *parts))


def logs(*parts):
    return str(Path(config["logs_dir"], *parts))


def srrg_code(*names):
    """Source files of srrg modules or sub-packages (with their data files), e.g.
    srrg_code("ingest", "sources"): a rule lists the code it runs so that editing it reruns the rule.
    """
    files = []
    for name in names:
        target = SRC / "srrg" / name
        if target.is_dir():
            files.extend(
                p
                for p in sorted(target.rglob("*"))
                if p.is_file()
                and p.suffix in _CODE_SUFFIXES
                and "__pycache__" not in p.parts
            )
        elif target.is_file():
            files.append(target)
        elif target.with_suffix(".py").is_file():
            files.append(target.with_suffix(".py"))
        else:
            raise WorkflowError(f"srrg_code: no module or package srrg/{name} in {SRC}")
    return [_local(p) for p in files]


def as_json(data):
    """A config slice as the compact, key-sorted JSON string a stage CLI takes via --config."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def section(name):
    return as_json(config[name])


def ingest_slice():
    """The ingest section without the inactive source, so editing MIMIC paths does not rerun an
    IU X-ray ingest (and vice versa)."""
    cfg = dict(config["ingest"])
    for source in ("iu_xray", "mimic_cxr"):
        if source != cfg["source"]:
            cfg.pop(source)
    return cfg


def ingest_data():
    """The source files ingest reads (when configured): changing them reruns ingest."""
    cfg = config["ingest"][config["ingest"]["source"]]
    keys = (
        ("archive", "metadata")
        if config["ingest"]["source"] == "iu_xray"
        else ("reports", "split_csv", "metadata_csv")
    )
    return [cfg[k] for k in keys if cfg.get(k)]


def llm_api(uses_llm=True):
    """The `llm_api` resource of a rule: one token when it calls a real LLM backend (not rules).
    The profiles cap the total (`resources: llm_api=N`) to respect endpoint rate limits.
    """
    return 1 if uses_llm and config["llm"]["backend"] != "rules" else 0


def normalize_slice():
    """The normalize section, with the llm section under `llm` only when an LLM is used (so
    LLM settings do not rerun a rules-only normalization)."""
    cfg = dict(config["normalize"])
    if cfg["method"] == "llm":
        cfg["llm"] = config["llm"]
    return cfg


def dataset_shards(wildcards):
    """The shard files of the current dataset plan (known once the dataset_plan checkpoint ran)."""
    plan = Path(checkpoints.dataset_plan.get().output.plan)
    root = plan.parent
    return [str(root / f) for f in json.loads(plan.read_text())["files"]]


# Helpers of the stage files (kept here so that those files hold only rules). They refer to
# names a stage file defines (RUNS, STRUCTURED_METRICS, run_config, JUDGE, JUDGE_TRAIN): Python
# looks them up when a helper is called, which happens only after that stage file was included.


# train.smk


def train_run_config(name):
    """One run's train config (slice + its overrides); checkpoints default under cache_dir."""
    cfg = run_config(config["train"], name)
    cfg.setdefault("checkpoint_dir", str(Path(config["cache_dir"], "checkpoints")))
    return cfg


def ddp_tasks_per_node(name):
    """SLURM launches one task per device; 0 (unset) unless the run uses several devices."""
    devices = train_run_config(name).get("trainer", {}).get("devices", "auto")
    return devices if isinstance(devices, int) and devices > 1 else 0


# score.smk


def run_metrics(name):
    metrics = config["score"]["metrics"]
    if RUNS[name].target != "json":
        metrics = [m for m in metrics if m not in STRUCTURED_METRICS]
    return ",".join(metrics)


# tables.smk


def table_runs():
    """The run entries `srrg tables` reads (labels and targets from train.runs, files per run)."""
    return [
        {
            "name": s.name,
            "label": s.label,
            "target": s.target,
            "summary": results("runs", s.name, "score", "summary.csv"),
            "predictions": results("runs", s.name, "predictions.parquet"),
        }
        for s in RUNS.values()
    ]


# judge.smk


def judge_options():
    """Per-metric options for `srrg score`: every judge gets the merged llm slice (no secrets:
    keys stay in the environment variable named by api_key_env)."""
    llm = {
        "cache_dir": str(Path(config["cache_dir"], "llm")),
        **config.get("llm", {}),
        **JUDGE["llm"],
    }
    options = {m: dict(o) for m, o in JUDGE["options"].items()}
    for metric in JUDGE["metrics"]:
        options.setdefault(metric, {})["llm"] = llm
        options[metric].setdefault("max_tokens", JUDGE["max_tokens"])
    return as_json(options)


# metaeval.smk


def metaeval_dataset_options():
    """Judges on rating datasets use the same llm slice as the judge stage."""
    return judge_options()


# judge_train.smk


def jt(*parts):
    return results("judge_train", *parts)


def jt_llm_cache(dataset):
    """Answers of one tuned model: emptied when the model is retrained, so a new model at the same
    path never reuses the old model's cached answers."""
    return str(Path(config["cache_dir"], "judge_train", dataset, "llm"))


def jt_score_options(wc):
    llm = {
        **JUDGE_TRAIN["llm"],
        "backend": "local",
        "model": jt(wc.dataset, "model", "merged"),
        "cache_dir": jt_llm_cache(wc.dataset),
    }
    return as_json(
        {
            m: {"llm": llm, "max_tokens": JUDGE_TRAIN["max_tokens"]}
            for m in JUDGE_TRAIN["metrics"]
        }
    )
