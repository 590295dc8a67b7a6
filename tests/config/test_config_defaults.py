"""Each default of a config setting is written once, in its dataclass field (docs/config.md); the
schema is generated from the fields and the stages get their settings through the one door. Two
ways a default gets written a second time, each checked here:

1. a function of the package takes a setting by the field's name with a literal default of its own
   (ReportGenerator.generate had max_new_tokens=256 while InferConfig says 512: a caller that left
   it out got a third value). A parameter named like a field of a config class of the same package
   (srrg.model for TrainConfig/InferConfig, srrg.extract for ExtractConfig, srrg.metrics for the
   metric options, ...; a top-level module for its own class) may only default to None ("not
   given"); a shape that is no setting is a module constant, not a parameter default.
2. config.yaml sets a key to the value it has anyway: the dataclass and config.yaml would then both
   hold it, and editing the dataclass would leave the workflow unchanged. config.yaml holds only
   what the embedded default sets differently (and comments).
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import srrg
from srrg.config import validate
from srrg.config_tree import SECTIONS
from srrg.settings.metrics import METRIC_OPTIONS
from srrg.settings.model import RunSpec
from srrg.text.decode import read_mapping_file

SRC = Path(srrg.__file__).resolve().parent
REPO = SRC.parents[1]


def _config_classes() -> set[type]:
    """Every config dataclass: the sections, what their fields nest (metaeval.correlate,
    judge_train.train, ...), the runs' class and the metrics' option classes."""
    roots = [*SECTIONS.values(), RunSpec]
    roots += [c for c in METRIC_OPTIONS.values() if c is not None]
    seen: set[type] = set()
    todo = list(roots)
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            todo += [t for t in (hint, *typing.get_args(hint)) if dataclasses.is_dataclass(t)]
    return seen


def _scope(module: str) -> str:
    """The package a config class belongs to: a settings module's is the package it configures
    (srrg.settings.model -> srrg.model); a top-level module is its own scope."""
    if module.startswith("srrg.settings."):
        return f"srrg.{module.split('.')[2]}"
    parent = module.rsplit(".", 1)[0]
    return module if parent == "srrg" else parent


def _field_names_by_scope() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for cls in _config_classes():
        out.setdefault(_scope(cls.__module__), set()).update(f.name for f in dataclasses.fields(cls) if f.init)
    return out


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _literal_defaults(tree: ast.AST) -> Iterator[tuple[str, str, Any]]:
    """(function, parameter, value) for every parameter whose default is a literal other than None."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in pairs:
            try:
                value = ast.literal_eval(default)
            except ValueError:
                continue  # a name or an expression: one value, written where the name is defined
            if value is not None:
                yield node.name, arg.arg, value


def _restated_defaults() -> set[tuple[str, str, str]]:
    fields = _field_names_by_scope()
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        names = set().union(*(n for scope, n in fields.items() if module == scope or module.startswith(f"{scope}.")))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found |= {(module, func, param) for func, param, _ in _literal_defaults(tree) if param in names}
    return found


def test_no_function_writes_a_setting_default_a_second_time():
    found = _restated_defaults()
    assert found == set(), "give the setting no default (its dataclass has it), or None for 'not given'"


def test_the_scan_finds_a_restated_default(tmp_path: Path):
    """The check itself: a literal default on a parameter named like a setting is found, None and
    names are not."""
    code = "def generate(images, max_new_tokens=256, num_beams=None, batch_size=BATCH): ...\n"
    assert list(_literal_defaults(ast.parse(code))) == [("generate", "max_new_tokens", 256)]
    assert "max_new_tokens" in _field_names_by_scope()["srrg.model"]


def _leaves(data: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, data


def _package_defaults() -> dict[str, Any]:
    """What an empty config gives: the schema defaults, and the train settings' dataclass defaults
    (the train section's schema leaves them to TrainConfig, per run)."""
    defaults = validate({})
    train = dataclasses.asdict(SECTIONS["train"]())
    defaults["train"] = {**train, **defaults["train"]}
    return defaults


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return KeyError
        data = data[key]
    return data


def _same(a: Any, b: Any) -> bool:
    norm = lambda v: list(v) if isinstance(v, tuple) else v  # noqa: E731 (YAML lists, dataclass tuples)
    return norm(a) == norm(b)


def test_config_yaml_sets_only_what_differs_from_the_defaults():
    given = read_mapping_file(REPO / "config.yaml")
    defaults = _package_defaults()
    restated = [".".join(p) for p, v in _leaves(given) if p and _same(_at(defaults, p), v)]
    assert restated == [], "config.yaml restates these defaults; remove them (docs/config.md lists every default)"


@pytest.mark.parametrize("run", read_mapping_file(REPO / "config.yaml")["train"]["runs"], ids=lambda r: r["name"])
def test_run_overrides_change_something(run: dict[str, Any]):
    """A run's overrides and infer keys differ from the sections they override."""
    given = read_mapping_file(REPO / "config.yaml")
    defaults = _package_defaults()
    train = {**defaults["train"], **{k: v for k, v in given["train"].items() if k != "runs"}}
    infer = {**defaults["infer"], **given.get("infer", {})}
    same = [".".join(p) for p, v in _leaves(run.get("overrides", {})) if _same(_at(train, p), v)]
    same += [f"infer.{'.'.join(p)}" for p, v in _leaves(run.get("infer", {})) if _same(_at(infer, p), v)]
    assert same == []
