"""What every stage shares, derived from the validated config alone (docs/workflow.md): output
paths, the `srrg` command environment, the code each rule runs (computed from the import closure
of its stage module), the runs, judge and meta-evaluation settings, and the final targets.
Nothing here refers to names that a later rule file defines.
"""

import json
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

REPO = Path(workflow.basedir)
SRC = REPO / "src"
sys.path.insert(0, str(SRC))

from srrg.codedeps import stage_files
from srrg.config_tree import check_workflow_config
from srrg.errors import UserError
from srrg.run_tables import compared_methods, structure_score_options
from srrg.settings.image_cache import cache_roots, cache_sizes
from srrg.settings.model import run_slice, run_specs
from srrg.settings.splits import SPLITS

try:
    _checked = check_workflow_config(config, workflow.configfiles)
except UserError as err:
    raise WorkflowError(f"config.yaml / --config / --configfile: {err}") from None
config.clear()
config.update(_checked)

# Snakemake locks its working directory only: two working directories sharing one results_dir are
# kept apart by a lock in results_dir (srrg.io.lock_results), taken when jobs are about to run.
_WORKDIR = str(Path.cwd().resolve())


onstart:
    from srrg.io import lock_results

    try:
        lock_results(config["results_dir"], _WORKDIR)
    except UserError as err:
        raise WorkflowError(str(err)) from None


onsuccess:
    from srrg.io import unlock_results

    unlock_results(config["results_dir"], _WORKDIR)


onerror:
    from srrg.io import unlock_results

    unlock_results(config["results_dir"], _WORKDIR)


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


def benchmarks_dir(rule_name, *parts):
    """Snakemake's benchmark TSV of one job of a rule (wall time, max RSS, I/O), under
    <results_dir>/benchmarks/<rule>/: what docs/workflow.md sizes `resources:` from."""
    return results("benchmarks", rule_name, *parts)


def stage_code(rule_name):
    """The source and data files `python -m srrg <rule>` runs (srrg.codedeps): declared as inputs,
    so editing a module reruns exactly the rules whose stage imports it."""
    return [_local(p) for p in stage_files(rule_name, SRC / "srrg")]


def as_json(data):
    """A config slice as the compact, key-sorted JSON string a stage CLI takes via --config."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def section(name):
    return as_json(config[name])


def extraction_table():
    """The extractor's per-label table (rule eval_extraction) when stats.extraction_gold is set, else nothing."""
    return (
        [results("stats", "extraction_accuracy.csv")]
        if config["stats"].get("extraction_gold")
        else []
    )


def wildcard_choice(names):
    """A wildcard constraint that matches exactly the given names (none: matches nothing)."""
    return "|".join(re.escape(n) for n in names) or "^$"


def ingest_slice():
    """The ingest section without the inactive source, so editing MIMIC paths does not rerun an
    IU X-ray ingest (and vice versa)."""
    cfg = dict(config["ingest"])
    for source in ("iu_xray", "mimic_cxr", "srrg"):
        if source != cfg["source"]:
            cfg.pop(source, None)
    return cfg


def ingest_data():
    """The source files ingest reads (when configured): changing them reruns ingest."""
    cfg = config["ingest"][config["ingest"]["source"]]
    keys = {
        "iu_xray": ("archive", "metadata"),
        "mimic_cxr": ("reports", "split_csv", "metadata_csv"),
        "srrg": ("findings", "impression"),
    }[config["ingest"]["source"]]
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
    try:  # a truncated or edited plan is one line (docs/workflow.md)
        files = json.loads(plan.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError, TypeError) as err:
        raise WorkflowError(
            f"{plan}: not a readable plan ({type(err).__name__}: {err}); delete it and rerun `snakemake data`"
        ) from None
    return [str(plan.parent / f) for f in files]


def dataset_checksums(wildcards):
    """The checksum file each shard job writes beside its shard (srrg.dataset.checksum_path)."""
    return [f"{shard}.sha256" for shard in dataset_shards(wildcards)]


# Runs (train, infer, score, tables): model x target, names checked by the config validation.
RUNS = {spec.name: spec for spec in run_specs(config["train"])}
RUN_NAMES = wildcard_choice(RUNS)
# Metrics that need structured reports on both sides; Sentence-Direct runs skip them (an SRRG-text
# run is read into structured reports by S-Score itself: docs/inputs.md, "SRRG text").
STRUCTURED_METRICS = {"s_score"}
STRUCTURED_TARGETS = {"json", "srrg"}
# Table 2's runs (a method with a Structured-First and a Sentence-Direct run) -> that method's
# Structured-First run, whose pairs hold the studies' structured references: each run also gets the
# S-Score of what its outputs are read into (rule score_structure; docs/model.md, "Table 2")
TABLE2_REFS = {
    r.name: next(j.name for j in group if j.target == "json")
    for group in compared_methods(RUNS.values()).values()
    for r in group
}


def run_config(name, section):
    """One run's fully merged `train` or `infer` slice, as its stage gets it (srrg.settings.model.
    run_slice: the section deep-merged with the run's overrides); train checkpoints default under
    cache_dir."""
    cfg = run_slice(config, name, section)
    if section == "train":
        cfg.setdefault("checkpoint_dir", str(Path(config["cache_dir"], "checkpoints")))
        # a run's name in model.encoder.init_from stands for its model file (docs/model.md)
        encoder = cfg.get("model", {}).get("encoder", {})
        if encoder.get("init_from") in RUNS:
            encoder["init_from"] = results("runs", encoder["init_from"], "model.pt")
    return cfg


def encoder_init(wildcards):
    """The model file a run's encoder starts from (model.encoder.init_from), so the run waits for it."""
    encoder = run_config(wildcards.run, "train").get("model", {}).get("encoder", {})
    init = encoder.get("init_from")
    return [] if init is None else [init]


# infer.samples (docs/model.md, "Per-image test sets"): one for every run, so Table 1's rows and the
# reference runs written from them count the same samples; per-image pairs are scored by sample_id
_SAMPLES = {n: run_config(n, "infer").get("samples", "study") for n in RUNS}
if len(set(_SAMPLES.values())) > 1:
    raise WorkflowError(
        f"infer.samples differs between runs {_SAMPLES}: the tables compare runs on the same samples; "
        "set infer.samples (study or image) for all runs alike"
    )
SCORE_ID = "sample_id" if "image" in _SAMPLES.values() else "study_id"


# The image cache (image_cache.smk): run -> the cache size it reads (runs on real images only:
# phantom runs, the embedded default, plan none), and size -> the image_root its jobs resolve under.
try:
    IMAGE_CACHE_SIZES = cache_sizes(config)
    IMAGE_CACHE_ROOTS = cache_roots(config)
except ValueError as err:
    raise WorkflowError(f"config.yaml / --config / --configfile: {err}") from None


def image_cache_files(size, wildcards):
    """The array and index of the cache shard of every dataset shard, at one size."""
    dataset = Path(results("dataset"))
    out = []
    for shard in dataset_shards(wildcards):
        rel = Path(shard).relative_to(dataset).with_suffix("")
        out += [
            results("dataset", "image_cache", f"{size}px", f"{rel}.{ext}")
            for ext in ("npy", "json")
        ]
    return out


def run_image_cache(wildcards):
    """The image cache a run's train and infer jobs read (none for phantom runs)."""
    size = IMAGE_CACHE_SIZES.get(wildcards.run)
    return [] if size is None else image_cache_files(size, wildcards)


def image_root_option(wildcards):
    """--image-root of an image_cache job, when the runs of its size set one."""
    root = IMAGE_CACHE_ROOTS.get(int(wildcards.size))
    return "" if root is None else f"--image-root {shlex.quote(root)}"


def infer_parts(wc):
    """The part files of one run's infer.shards shards (docs/model.md, "Sharded inference")."""
    shards = run_config(wc.run, "infer").get("shards", 1)
    return [
        results("runs", wc.run, "infer", f"part-{k}.parquet") for k in range(shards)
    ]


def ddp_tasks_per_node(name):
    """SLURM launches one task per device; 0 (unset) unless the run uses several devices."""
    devices = run_config(name, "train").get("trainer", {}).get("devices", "auto")
    return devices if isinstance(devices, int) and devices > 1 else 0


def run_metrics(name):
    metrics = config["score"]["metrics"]
    if RUNS[name].target not in STRUCTURED_TARGETS:
        metrics = [m for m in metrics if m not in STRUCTURED_METRICS]
    return ",".join(metrics)


def table_runs():
    """The run entries `srrg tables` reads (labels and targets from train.runs, files per run)."""
    return [
        {
            "name": s.name,
            "label": s.label,
            "target": s.target,
            "summary": results("runs", s.name, "score", "summary.csv"),
            "predictions": results("runs", s.name, "predictions.parquet"),
            **(
                {"structure_summary": structure_summary(s.name)}
                if s.name in TABLE2_REFS
                else {}
            ),
        }
        for s in RUNS.values()
    ]


def structure_summary(run):
    """The summary of a Table 2 run's structured scoring (rule score_structure)."""
    return results("runs", run, "score", "structure", "summary.csv")


# The cases pages (cases.smk): every other run is a comparison column of a run's page.
def cases_other_runs(run):
    return [
        results("runs", r, f)
        for r in RUNS
        if r != run
        for f in ("predictions.parquet", "score/per_report.parquet")
    ]


def cases_compare(run):
    """`--compare NAME PREDICTIONS SCORES` for every other run."""
    return " ".join(
        f"--compare {shlex.quote(r)} {shlex.quote(results('runs', r, 'predictions.parquet'))}"
        f" {shlex.quote(results('runs', r, 'score', 'per_report.parquet'))}"
        for r in RUNS
        if r != run
    )


def cases_judge(run):
    """The judges' per-report table when this is the judged run (judge.smk)."""
    return [results("judge", run, "per_report.parquet")] if run == JUDGE_RUN else []


def cases_image_root(run):
    """--image-root of a run on real images with relative image paths (train.data.image_root)."""
    root = run_config(run, "train").get("data", {}).get("image_root")
    return f"--image-root {shlex.quote(root)}" if root else ""


# LLM judges on a subset of one run's predictions (judge.smk).
JUDGE = config["judge"]
JUDGE_RUN = JUDGE["run"] or next(iter(RUNS), None)
if JUDGE_RUN is not None and JUDGE_RUN not in RUNS:
    raise WorkflowError(
        f"judge.run {JUDGE_RUN!r} is not a run of train.runs {sorted(RUNS)}"
    )


def judge_llm():
    """The judges' llm slice: top-level llm, then judge.llm, with the judges' cache (no secrets:
    keys stay in the environment variable named by api_key_env)."""
    return {
        "cache_dir": str(Path(config["cache_dir"], "llm")),
        **config.get("llm", {}),
        **JUDGE["llm"],
    }


def judge_options():
    """Per-metric options for the judges: every judge gets the merged llm slice (judge_llm)."""
    llm = judge_llm()
    options = {m: dict(o) for m, o in JUDGE["options"].items()}
    for metric in JUDGE["metrics"]:
        options.setdefault(metric, {})["llm"] = llm
        if JUDGE["max_tokens"] is not None:  # null: each judge's own default
            options[metric].setdefault("max_tokens", JUDGE["max_tokens"])
    return as_json(options)


# Meta-evaluation on rating datasets (metaeval.smk); judges there use the judge stage's llm slice.
METAEVAL = config["metaeval"]
METAEVAL_DATASETS = METAEVAL["datasets"]
METAEVAL_NAMES = wildcard_choice(METAEVAL_DATASETS)


def metaeval_dataset_options():
    return judge_options()


# Fine-tuned judges (judge_train.smk): off while judge_train.datasets is empty.
JUDGE_TRAIN = config["judge_train"]
JT_DATASETS = list(JUDGE_TRAIN["datasets"])
_unknown = [d for d in JT_DATASETS if d not in METAEVAL_DATASETS]
if _unknown:
    raise WorkflowError(
        f"judge_train.datasets {_unknown} are not in metaeval.datasets {sorted(METAEVAL_DATASETS)}"
    )
_ranking = [d for d in JT_DATASETS if METAEVAL_DATASETS[d]["adapter"] == "radjudge"]
if _ranking:
    raise WorkflowError(
        f"judge_train.datasets {_ranking} are RadJudge ranking cases (adapter radjudge), not rating sets to train on"
    )
JT_NAMES = wildcard_choice(JT_DATASETS)


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
    # the tuned VERT judge is asked with the prompt it was trained on (judge_train.train.vert_variant)
    variant = {"vert": {"variant": JUDGE_TRAIN["train"]["vert_variant"]}}
    return as_json(
        {
            m: {
                "llm": llm,
                "max_tokens": JUDGE_TRAIN["max_tokens"],
                **variant.get(m, {}),
            }
            for m in JUDGE_TRAIN["metrics"]
        }
    )
