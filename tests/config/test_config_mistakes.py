"""Every config mistake is refused before the first job (issue 39: "6 of 79 config mistakes still pass
`snakemake -n`"). The mistakes are generated, not hand-picked:

- from the packaged schema, for EVERY key of the embedded config.yaml and of each nested mapping:
  a wrong type, a value out of the key's range (minimum, maximum, minItems, enum), an unknown key
  in every mapping, a misspelt option of every metric, ratings adapter and nested settings class;
- from the typed classes: every value a section's class (or a nested one: metaeval.correlate,
  judge_train.train, the per-metric options) refuses when the stage builds it, probed field by
  field, must be refused by the workflow's pre-check too (srrg.config_tree.check_workflow_config,
  what workflow/rules/common.smk runs when Snakemake parses the workflow).

Each is one line (ConfigError, no newline) naming the key. A handful go through a real `snakemake -n`.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from srrg.config import ConfigError, from_dict, load_schema
from srrg.config_tree import SECTIONS
from srrg.settings.judge import LLM_JUDGES
from srrg.settings.metrics import METRIC_OPTIONS
from srrg.text.decode import read_mapping_file

BASE = read_mapping_file("config.yaml")
SCHEMA = load_schema()
RUN = {"name": "r", "label": "R", "arch": "baseline", "target": "json"}
# a ratings dataset of each adapter, so the keys under metaeval.datasets.* are reached
ADAPTERS = SCHEMA["properties"]["metaeval"]["properties"]["datasets"]["additionalProperties"]["properties"]["adapter"]
DATASETS = {f"d_{a}": {"adapter": a, "path": "ratings"} for a in ADAPTERS["enum"]}
# values tried as "the wrong type": the first one the key's schema refuses is used
WRONG_TYPES: tuple[Any, ...] = ({"x": 1}, "not-a-number", 12345, ["x"], True, None)
TYPO = "no_such_key"


def _set(cfg: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A copy of cfg with value at path (missing mappings created; list items by index)."""
    out = copy.deepcopy(cfg)
    node: Any = out
    for part in path[:-1]:
        if isinstance(part, int):
            node = node[part]
        else:
            node = node.setdefault(part, {})
    node[path[-1]] = value
    return out


def _base_for(path: tuple[str | int, ...]) -> dict[str, Any]:
    """config.yaml, with a run when the key is inside train.runs and a dataset of each adapter when
    it is inside metaeval.datasets (else those keys are never reached)."""
    cfg = copy.deepcopy(BASE)
    if path[:2] == ("train", "runs"):
        cfg["train"] = {**cfg.get("train", {}), "runs": [dict(RUN)]}
    if path[:2] == ("metaeval", "datasets"):
        cfg["metaeval"] = {**cfg.get("metaeval", {}), "datasets": copy.deepcopy(DATASETS)}
    return cfg


def _concrete(schema: Mapping[str, Any], path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path, sub-schema) of every key below schema; mapping values and list items at a concrete
    key (a run at index 0, each adapter's dataset)."""
    for name, sub in schema.get("properties", {}).items():
        yield (*path, name), sub
        yield from _concrete(sub, (*path, name))
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and path == ("metaeval", "datasets"):
        for name in DATASETS:
            yield from _concrete(extra, (*path, name))
    items = schema.get("items")
    if isinstance(items, Mapping) and items.get("properties") and path == ("train", "runs"):
        yield from _concrete(items, (*path, 0))


def _refused_by(schema: Mapping[str, Any], value: Any) -> bool:
    return not Draft202012Validator(schema).is_valid(value)


def schema_mistakes() -> list[tuple[str, tuple[str | int, ...], Any]]:
    """(kind, path, value) for every key: a wrong type, out of range, an unknown key inside it."""
    out = []
    for path, sub in _concrete(SCHEMA, ()):
        wrong = next((v for v in WRONG_TYPES if _refused_by(sub, v)), None)
        if sub and wrong is not None:
            out.append(("type", path, wrong))
        kind = sub.get("type")
        number = "integer" in kind or "number" in kind if isinstance(kind, (str, list)) else False
        if number and "minimum" in sub:
            out.append(("range", path, sub["minimum"] - 1))
        if number and "maximum" in sub:
            out.append(("range", path, sub["maximum"] + 1))
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if number and key in sub:
                out.append(("range", path, sub[key]))
        if "enum" in sub:
            out.append(("range", path, "no_such_value"))
        if sub.get("minItems"):
            out.append(("range", path, []))
        items = sub.get("items", {})
        if isinstance(items, Mapping) and "enum" in items:
            out.append(("range", path, ["no_such_value"]))
        adapter_options = path[:2] == ("metaeval", "datasets") and path[-1] == "options"
        if sub.get("type") == "object" and (sub.get("properties") or adapter_options):
            out.append(("unknown key", (*path, TYPO), 1))
    return out


def _leaf_probes(tp: Any) -> tuple[Any, ...]:
    """Values of the field's own type that a class may refuse in its own checks."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _leaf_probes(args[0]) if len(args) == 1 else ()
    if tp is int:
        return (-1, 0, 1, 10**9)
    if tp is float:
        return (-1.0, 0.0, 1.5, 1e9)
    if tp is str:
        return ("", "no_such_value")
    return ()


def _class_fields(cls: type, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], tuple[Any, ...]]]:
    """(path, probes) of every leaf field of a config class, nested dataclasses included."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            yield from _class_fields(tp, (*path, f.name))
        elif probes := _leaf_probes(tp):
            yield (*path, f.name), probes


def class_roots() -> list[tuple[tuple[str, ...], type, Any]]:
    """(config path, class, how the stage builds it) of every settings class the stages build."""
    from srrg.settings.judge_train import JudgeTrainConfig
    from srrg.settings.llm import LLMConfig
    from srrg.settings.metaeval import MetaevalConfig

    roots: list[tuple[tuple[str, ...], type, Any]] = [
        ((name,), cls, None) for name, cls in SECTIONS.items() if name not in {"normalize", "llm"}
    ]
    roots += [
        (("llm",), LLMConfig, LLMConfig.from_dict),
        (("metaeval", "correlate"), MetaevalConfig, None),
        (("judge_train", "train"), JudgeTrainConfig, None),
    ]
    for metric, cls in METRIC_OPTIONS.items():
        if cls is not None:
            roots.append((("judge" if metric in LLM_JUDGES else "score", "options", metric), cls, None))
    return roots


def _refused_by_class(cls: type, build: Any, data: dict[str, Any]) -> bool:
    try:
        (build or (lambda d: from_dict(cls, d)))(data)
    except (ValueError, TypeError):
        return True
    return False


def class_mistakes() -> list[tuple[str, tuple[str | int, ...], Any]]:
    """Every probed value that a class refuses when built alone from it (its defaults elsewhere)."""
    out = []
    for root, cls, build in class_roots():
        if _refused_by_class(cls, build, {}):
            continue
        for path, probes in _class_fields(cls, ()):
            for value in probes:
                data = _set({}, path, value)
                if _refused_by_class(cls, build, data):
                    out.append(("class check", (*root, *path), value))
    return out


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path)


def _refusal(kind: str, path: tuple[str | int, ...], value: Any) -> str | None:
    """None when check_workflow_config passes the mistake, else its message."""
    from srrg.config_tree import check_workflow_config

    try:
        check_workflow_config(_set(_base_for(path), path, value))
    except ConfigError as err:
        return str(err)
    return None


def _named(message: str, path: tuple[str | int, ...]) -> bool:
    """The message names the key: its section and its own name (or, for a list item, its list)."""
    leaf = next(str(p) for p in reversed(path) if not isinstance(p, int))
    return str(path[0]) in message and leaf in message


MISTAKES = schema_mistakes() + class_mistakes()
BOUNDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "enum")
# numeric keys without a bound of their own: any real number is meaningful (the ends of a rating
# scale), or the range depends on another key (a codec's levels: DatasetConfig's cross-field check)
UNBOUNDED = {
    ("judge_train", "train", "score_min"),
    ("judge_train", "train", "score_max"),
    ("dataset", "compression_level"),
}


def _numeric(sub: Mapping[str, Any]) -> bool:
    kinds = sub.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return bool({"integer", "number"} & set(kinds))


def test_every_numeric_key_of_the_schema_has_a_bound():
    """Issue 46 (C1, C2, C4): 11 model/data keys and 14 trainer keys without bounds passed
    `snakemake -n` and killed the train job (heads 0, dropout 1.5, batch_size 0, max_steps -1 trained
    3,000 steps) and a negative seed failed in numpy. Every numeric key now carries a bound, so the
    generated mistakes above reach each of them."""
    loose = sorted(
        {
            _dotted(tuple(p for p in path if not isinstance(p, int)))
            for path, sub in _concrete(SCHEMA, ())
            if _numeric(sub) and not set(BOUNDS) & set(sub) and path not in UNBOUNDED
        }
    )
    assert loose == [], f"numeric keys without a bound: {loose}"


def test_the_generator_reaches_every_kind_and_every_section():
    kinds = {k for k, _, _ in MISTAKES}
    assert kinds == {"type", "range", "unknown key", "class check"}
    assert {p[0] for _, p, _ in MISTAKES} >= set(SECTIONS)
    assert ("metaeval", "correlate", "min_cases") in {p for _, p, _ in MISTAKES}
    assert any(p[:2] == ("metaeval", "datasets") and p[-2:] == ("options", TYPO) for _, p, _ in MISTAKES)


def test_every_generated_mistake_is_refused_with_one_line_naming_its_key():
    passed, unnamed = [], []
    for kind, path, value in MISTAKES:
        message = _refusal(kind, path, value)
        if message is None:
            passed.append(f"{kind}: {_dotted(path)} = {value!r}")
        elif "\n" in message or not _named(message, path):
            unnamed.append(f"{kind}: {_dotted(path)} = {value!r}: {message}")
    print(f"{len(MISTAKES)} generated mistakes: {len(passed)} passed the pre-check, {len(unnamed)} not one line")
    assert passed == [], f"{len(passed)} of {len(MISTAKES)} mistakes pass the pre-check:\n" + "\n".join(passed)
    assert unnamed == [], "\n".join(unnamed)


def test_the_embedded_default_passes_with_a_dataset_of_every_adapter():
    from srrg.config_tree import check_workflow_config

    check_workflow_config(_base_for(("metaeval", "datasets")))


THROUGH_SNAKEMAKE = [
    ({"metaeval": {"correlate": {"min_cases": 1}}}, "metaeval.correlate.min_cases: 1 is less than the minimum of 2"),
    (
        {"metaeval": {"datasets": {"rp": {"adapter": "radpref", "path": "ratings", "options": {"raterz": ["a"]}}}}},
        "unknown key metaeval.datasets.rp.options.raterz",
    ),
    (
        {"score": {"options": {"ce": {"smoothing": -1.0}}}},
        "score.options.ce.smoothing: -1.0 is less than the minimum of 0",
    ),
    ({"score": {"options": {"s_score_text": {"w_prob": 0.5}}}}, "score.options.s_score_text: S-Score weights"),
    # issue 46 (C1, C2, C3, C5): each passed `snakemake -n` and failed, or was ignored, in its job
    ({"train": {"trainer": {"max_steps": -1}}}, "train.trainer.max_steps: -1 is less than the minimum of 1"),
    ({"train": {"model": {"baseline": {"heads": 3}}}}, "train.model.baseline.heads 3 does not divide d_model 512"),
    ({"score": {"options": {"green": {"llm": {"backend": "nope"}}}}}, "score.options.green.llm.backend must be one"),
    (
        {"metaeval": {"correlate": {"metrics": ["bleu_4"], "lower_is_better": ["bleu4"]}}},
        "metaeval.correlate.lower_is_better 'bleu4' not among the correlated columns",
    ),
]


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    from workflow_helpers import copy_workflow

    return copy_workflow(tmp_path_factory.mktemp("h7") / "repo")


@pytest.mark.slow
@pytest.mark.parametrize(("override", "message"), THROUGH_SNAKEMAKE, ids=[m for _, m in THROUGH_SNAKEMAKE])
def test_a_real_dry_run_stops_with_one_line_naming_the_key(workflow_copy, override, message):
    """The pre-check is what `snakemake -n` runs (workflow/rules/common.smk): each mistake stops the
    dry run before any job, with one line and no traceback (bug: each passed -n and failed in its job)."""
    from workflow_helpers import snakemake, write_config

    proc = snakemake(workflow_copy, "-n", "--configfile", str(write_config(workflow_copy, override)), check=False)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if message in line]
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_the_pre_check_of_the_embedded_default_loads_neither_spacy_nor_torch():
    """Building every section must not make `snakemake -n` pay for spaCy or torch (seconds each)."""
    import subprocess
    import sys

    probe = (
        "import sys; from srrg.config_tree import check_workflow_config;"
        " from srrg.text.decode import read_mapping_file; check_workflow_config(read_mapping_file('config.yaml'));"
        " print(sorted(m for m in ('spacy', 'torch', 'scipy') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.strip() == "[]"
