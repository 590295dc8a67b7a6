"""The one typed config tree (docs/config.md): every section of config.yaml is a settings class in
srrg.settings (SECTIONS), and the JSON Schema that the workflow and the stage commands validate
against is generated from these classes (`srrg config-schema`), so each default and each rule is
written once, in its class. Per-metric options are the classes of srrg.settings.metrics.METRIC_OPTIONS,
a ratings dataset's options those of srrg.settings.metaeval.ADAPTER_OPTIONS. A field's metadata may
add JSON Schema keywords (`schema`: e.g. minimum), a description (`doc`) or a hook that builds its
schema here. The generated file is committed (srrg/schemas/config.schema.json); a test fails when
it is stale.

The pre-check (check_sections) builds every section from the merged config, with all it nests.
Everything here stays on the floor of the settings: it imports srrg.settings, the door
(srrg.config), the privacy guard and the plain-text layer, nothing that loads a model or a table
(tests/config/test_import_floors.py).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from srrg.config import ConfigError, check_installed, check_results_dir, validate
from srrg.errors import one_line
from srrg.privacy import check_usable
from srrg.settings.dataset import DatasetConfig
from srrg.settings.extract import ExtractConfig
from srrg.settings.fields import SettingsError, build
from srrg.settings.image_cache import ImageCacheConfig
from srrg.settings.ingest import IngestConfig
from srrg.settings.judge import LLM_JUDGES, JudgeSection
from srrg.settings.judge_train import JudgeTrainSection
from srrg.settings.llm import LLMConfig
from srrg.settings.metaeval import ADAPTER_OPTIONS, Adapter, MetaevalSection, RatingsSource
from srrg.settings.metrics import METRIC_OPTIONS
from srrg.settings.model import (
    InferConfig,
    RunSpec,
    TrainConfig,
    check_context,
    check_decoding,
    run_slice,
    run_specs,
)
from srrg.settings.normalize import NormalizeConfig
from srrg.settings.rl import FROM, RLConfig
from srrg.settings.score import ScoreSection
from srrg.settings.stats import StatsConfig
from srrg.text.decode import read_mapping_file

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"
GENERATED = "Generated from the config dataclasses by `srrg config-schema`; do not edit (docs/config.md)."

SECTIONS: dict[str, type] = {
    "ingest": IngestConfig,
    "extract": ExtractConfig,
    "normalize": NormalizeConfig,
    "llm": LLMConfig,
    "dataset": DatasetConfig,
    "stats": StatsConfig,
    "image_cache": ImageCacheConfig,
    "train": TrainConfig,
    "infer": InferConfig,
    "rl": RLConfig,
    "score": ScoreSection,
    "judge": JudgeSection,
    "metaeval": MetaevalSection,
    "judge_train": JudgeTrainSection,
}
# keys of a section class that are not part of its config.yaml section (normalize gets the
# top-level llm section from the workflow, not a copy of its own)
NOT_IN_SECTION: dict[str, frozenset[str]] = {"normalize": frozenset({"llm"})}


# ---- schema generation ------------------------------------------------------------------------

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def type_schema(tp: Any, with_defaults: bool = True) -> dict[str, Any]:
    """JSON Schema of a type hint (the subset the config classes use)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return {}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if origin is Literal:
        values = list(typing.get_args(tp))
        return {"type": "string", "enum": values} if all(isinstance(v, str) for v in values) else {"enum": values}
    if origin in (typing.Union, types.UnionType):
        members = [type_schema(a, with_defaults) for a in typing.get_args(tp)]
        if all(set(m) == {"type"} for m in members):
            return {"type": [m["type"] for m in members]}
        return {"anyOf": members}
    if origin in (tuple, list) or origin is getattr(typing, "Sequence", None) or _is_abc(origin, "Sequence"):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return {"type": "array", "items": type_schema(args[0], with_defaults) if args else {}}
    if origin is dict or _is_abc(origin, "Mapping"):
        args = typing.get_args(tp)
        values = type_schema(args[1], with_defaults) if len(args) == 2 else {}
        return {"type": "object", **({"additionalProperties": values} if values else {})}
    if dataclasses.is_dataclass(tp):
        return dataclass_schema(tp, with_defaults=with_defaults)
    raise TypeError(f"no JSON Schema for type {tp!r}")


def _is_abc(origin: Any, name: str) -> bool:
    import collections.abc

    return origin is getattr(collections.abc, name)


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {}  # nested sections fill their own defaults
    if isinstance(value, tuple):
        return [_json_default(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _json_default(v) for k, v in value.items()}
    return value


def _description(cls: type) -> str | None:
    text = (cls.__doc__ or "").strip()
    return " ".join(text.split()) if text and not text.startswith(f"{cls.__name__}(") else None


def dataclass_schema(cls: type, skip: frozenset[str] = frozenset(), with_defaults: bool = True) -> dict[str, Any]:
    """An object schema: one property per init field (type, default, metadata), no other keys."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name in skip:
            continue
        hook = f.metadata.get("schema_hook")
        prop = HOOKS[hook]() if hook else type_schema(hints[f.name], with_defaults)
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
            required.append(f.name)
        if with_defaults and default is not dataclasses.MISSING and "default" not in prop:
            prop["default"] = _json_default(default)
        prop.update(f.metadata.get("schema", {}))
        if f.metadata.get("doc"):
            prop["description"] = f.metadata["doc"]
        properties[f.name] = prop
    out: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        out["required"] = required
    description = _description(cls)
    if description:
        out["description"] = description
    return out


def _metric_options() -> dict[str, Any]:
    """Each registered metric's options: the schema of its class in METRIC_OPTIONS (an empty
    object for a metric that takes none)."""
    none = {"type": "object", "maxProperties": 0, "description": "Takes no options."}
    props = {
        name: dataclass_schema(cls, with_defaults=False) if cls else none
        for name, cls in sorted(METRIC_OPTIONS.items())
    }
    return {"type": "object", "additionalProperties": False, "properties": props}


def _metric_names() -> dict[str, Any]:
    return {"type": "array", "items": {"enum": sorted(METRIC_OPTIONS)}}


def adapter_options_schema(adapter: str) -> dict[str, Any]:
    """The options of a ratings adapter (docs/metaeval.md): its class in
    srrg.settings.metaeval.ADAPTER_OPTIONS (what its reader in srrg.metaeval.readers takes and
    `srrg metaeval-prepare --options` builds; RankingOptions for RadJudge ranking cases); no other keys."""
    return dataclass_schema(ADAPTER_OPTIONS[adapter], with_defaults=False)


def _ratings_datasets() -> dict[str, Any]:
    """name -> RatingsSource, whose options are checked against its adapter's options."""
    dataset = dataclass_schema(RatingsSource)
    dataset["allOf"] = [
        {
            "if": {"properties": {"adapter": {"const": adapter}}, "required": ["adapter"]},
            "then": {"properties": {"options": adapter_options_schema(adapter)}},
        }
        for adapter in typing.get_args(Adapter)
    ]
    return {"type": "object", "additionalProperties": dataset}


def _llm_overrides() -> dict[str, Any]:
    return dataclass_schema(LLMConfig, with_defaults=False)


def _runs() -> dict[str, Any]:
    run = dataclass_schema(RunSpec)
    run["properties"]["name"]["pattern"] = "^[A-Za-z0-9_]+$"
    # a run's overrides are train settings and its infer a slice of `infer`: the same keys, types
    # and ranges, without defaults (what a run leaves out comes from the sections)
    for key, section in (("overrides", "train"), ("infer", "infer")):
        run["properties"][key] = {**dataclass_schema(SECTIONS[section], with_defaults=False), "default": {}}
    # an RL run's `rl`: the run it starts from, and rl settings over the rl section (srrg.settings.rl)
    rl = dataclass_schema(SECTIONS["rl"], with_defaults=False)
    rl["properties"] = {
        FROM: {"type": "string", "description": "The supervised run this one starts from."},
        **rl["properties"],
    }
    rl["required"] = [FROM]  # an object needs it; null (a supervised run) passes
    run["properties"]["rl"] = {
        **rl,
        "type": ["object", "null"],
        "default": None,
        "description": run["properties"]["rl"].get("description", ""),
    }
    return {"type": "array", "items": run, "description": "One model x target per run; names: letters, digits, '_'."}


HOOKS = {
    "metric_options": _metric_options,
    "metric_names": _metric_names,
    "ratings_datasets": _ratings_datasets,
    "llm_overrides": _llm_overrides,
    "runs": _runs,
}


def _generated_section(name: str) -> dict[str, Any]:
    """The schema of one section, generated from its class (srrg.config.section_schema reads a
    section back from the generated file)."""
    if name == "train":  # the TrainConfig keys and `runs` side by side in one section
        schema = dataclass_schema(SECTIONS[name], with_defaults=False)  # defaults: TrainConfig, per run
        schema["properties"] = {"runs": _runs(), **schema["properties"]}
        schema["description"] = (
            "Models and runs (srrg train; docs/model.md): the train settings, and `runs` with per-run overrides."
        )
        return {**schema, "default": {}}
    return {**dataclass_schema(SECTIONS[name], NOT_IN_SECTION.get(name, frozenset())), "default": {}}


def config_schema() -> dict[str, Any]:
    """The whole workflow config schema (JSON Schema 2020-12)."""
    properties: dict[str, Any] = {
        "results_dir": {
            "type": "string",
            "default": "results",
            "description": "Folder that receives every stage output.",
        },
        "logs_dir": {"type": "string", "default": "logs", "description": "Folder for one log file per job."},
        "cache_dir": {
            "type": "string",
            "default": ".cache/srrg",
            "description": "Persistent caches kept outside declared outputs.",
        },
    }
    properties.update({name: _generated_section(name) for name in SECTIONS})
    return {
        "$schema": SCHEMA_URI,
        "title": "srrg workflow configuration",
        "description": (
            "Every key has a default, so an empty config runs the embedded default; unknown keys are errors."
        ),
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }


def render(schema: Mapping[str, Any]) -> str:
    """JSON (which is also YAML): it loads in milliseconds when Snakemake parses the workflow."""
    import json

    return json.dumps({"$comment": GENERATED, **schema}, indent=1, ensure_ascii=False) + "\n"


def run_config_schema(path: Path, check: bool) -> str:
    """The config-schema stage: the generated schema written to path or, with check, compared with
    it (StageFailed when stale); returns the line it prints."""
    from srrg.errors import StageFailed
    from srrg.io import write_text

    text = render(config_schema())
    if check:
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            raise StageFailed(f"{path} is stale: run `srrg config-schema` and commit the result")
        return f"{path}: up to date"
    write_text(path, text)
    return f"wrote {path}"


# ---- checks before the first job ---------------------------------------------------------------


def check_workflow_config(data: Mapping[str, Any], files: typing.Iterable[Any] = ()) -> dict[str, Any]:
    """Everything the workflow checks before its first job (docs/config.md): duplicate keys in the
    config files (YAML alone would keep the last), the schema (unknown keys, types, ranges, run
    names, metric names and option keys, defaults), then the typed sections' own checks.
    Returns the config with every default filled."""
    for path in files:
        read_mapping_file(path)
    checked = validate(data)
    check_sections(checked)
    return checked


def check_sections(cfg: Mapping[str, Any]) -> None:
    """Build every section's settings class (SECTIONS) from the merged config, with all they nest
    (metaeval.correlate, each ratings dataset and its adapter's options, judge_train.train), so
    their own checks (ranges, allowed values, weights that sum to 1, secrets in llm settings) run
    at `snakemake -n`; then what lies across sections: each run's slice, each metric's options,
    the llm settings every LLM user gets and whether its endpoint may be used."""
    checks: list[tuple[str, Any]] = [("results_dir", lambda: check_results_dir(cfg["results_dir"]))]
    checks += [(name, lambda n=name: build_section(cfg, n)) for name in SECTIONS]
    checks += [
        ("extract", lambda: check_installed(cfg["extract"].get("spacy_model"), "extract.spacy_model")),
        ("judge.llm", lambda: _check_judges(cfg)),
        ("judge_train.llm", lambda: _check_judge_train_llm(cfg)),
    ]
    try:
        specs = run_specs(cfg["train"])  # a ValueError (names not unique): one line, like the checks below
    except ValueError as err:
        raise ConfigError(one_line(err)) from None
    for spec in specs:
        checks.append((f"train (run {spec.name})", lambda name=spec.name: _check_run(cfg, name)))
    if cfg["metaeval"]["datasets"]:  # the grid runs only on rating datasets
        for name in cfg["metaeval"]["grid"]["models"]:
            checks.append((f"metaeval.grid.models.{name}", lambda n=name: _check_grid_model(cfg, n)))
    for where, options in (("score.options", cfg["score"]["options"]), ("judge.options", cfg["judge"]["options"])):
        for metric, values in options.items():
            checks.append((f"{where}.{metric}", lambda w=where, m=metric, v=values: _check_metric_options(w, m, v)))
    for where, check in checks:
        try:
            check()
        except ValueError as err:
            raise ConfigError(_located(where, err)) from None


def _located(where: str, err: ValueError) -> str:
    """The one line of a refused value: a settings class names the dotted key itself; any other
    check is prefixed by where it looked."""
    return one_line(err) if isinstance(err, SettingsError) and err.located else f"{where}: {one_line(err)}"


def build_section(cfg: Mapping[str, Any], name: str) -> Any:
    """The settings of one section from the merged config, as its stage builds them (nested
    settings included, each named by its dotted key)."""
    if name == "normalize":  # with the llm section when its method is llm
        return _check_normalize(cfg)
    data = dict(cfg[name])
    if name == "train":  # the settings every run starts from; each run's slice: _check_run
        data.pop("runs", None)
    if name == "llm":  # refuses secrets too
        return LLMConfig.from_dict(data)
    return build(SECTIONS[name], data, name)


def _check_normalize(cfg: Mapping[str, Any]) -> Any:
    """The normalize section as its stage gets it (the llm section only with method llm)."""
    llm = {"llm": cfg["llm"]} if cfg["normalize"]["method"] == "llm" else {}
    normalize = NormalizeConfig.from_dict({**cfg["normalize"], **llm})
    if normalize.method == "llm":
        check_usable(normalize.llm, "normalize.method llm")
    return normalize


def _check_judges(cfg: Mapping[str, Any]) -> None:
    """The judges' llm (the llm section under judge.llm), usable when any LLM judge runs: in the
    judge stage or on a ratings dataset of metaeval."""
    llm = LLMConfig.from_dict({**cfg["llm"], **cfg["judge"]["llm"]}, "judge.llm")
    used = list(cfg["judge"]["metrics"]) + (list(cfg["metaeval"]["metrics"]) if cfg["metaeval"]["datasets"] else [])
    judges = set(LLM_JUDGES) & set(used)
    if judges:
        check_usable(llm, f"the LLM judges ({', '.join(sorted(judges))})")


def _check_judge_train_llm(cfg: Mapping[str, Any]) -> None:
    """judge_train.llm as judge-train-score gets it: local-backend settings."""
    LLMConfig.from_dict({**cfg["judge_train"]["llm"], "backend": "local"}, "judge_train.llm")


def _check_grid_model(cfg: Mapping[str, Any], name: str) -> None:
    """One judge model of VERT's grid as its cells get it (the judges' llm, the model's settings
    over it; srrg.metaeval.grid.grid_cell_options): valid and usable before any job starts."""
    model = cfg["metaeval"]["grid"]["models"][name]
    llm = LLMConfig.from_dict({**cfg["llm"], **cfg["judge"]["llm"], **model}, f"metaeval.grid.models.{name}")
    check_usable(llm, f"VERT's grid model {name!r}")


def _check_run(cfg: Mapping[str, Any], name: str) -> None:
    """One run's train settings, and its infer settings against the model they decode."""
    train = build(TrainConfig, run_slice(cfg, name, "train"), "train")
    check_context(train.model)
    check_decoding(run_slice(cfg, name, "infer"), train.model.max_target_tokens)


def _check_metric_options(where: str, metric: str, options: Mapping[str, Any]) -> None:
    """One metric's options built as the metric builds them (srrg.metrics.base.Metric), from its
    class in METRIC_OPTIONS, a judge's `llm` settings as its client builds them
    (srrg.metrics.judges.common.client_for); options for a metric that takes none are refused."""
    config_class = METRIC_OPTIONS[metric]
    if config_class is not None:
        build(config_class, options, f"{where}.{metric}")
        if metric in LLM_JUDGES and isinstance(options.get("llm"), Mapping):  # what the judge's client builds
            LLMConfig.from_dict(dict(options["llm"]), f"{where}.{metric}.llm")
    elif options:
        raise ValueError(f"metric {metric!r} takes no options, got {', '.join(sorted(options))}")
