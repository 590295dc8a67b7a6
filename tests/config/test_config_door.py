"""The one config door (docs/config.md): every stage turns its `--config` into settings with
srrg.config.stage_config, which reads the value once, validates it once against its section of the
schema (defaults filled) and returns the frozen typed object; nothing in src/srrg/stages/ reads or
types settings any other way."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

import srrg.config as C
from srrg import cli
from srrg.config import ConfigError, stage_config
from srrg.settings.ingest import IngestConfig
from srrg.settings.llm import LLMConfig
from srrg.settings.model import InferConfig, TrainConfig, pick_run
from srrg.settings.normalize import NormalizeConfig

SRC = Path(C.__file__).resolve().parent
STAGE_FILES = sorted((SRC / "stages").glob("*.py"))
# the other ways a mapping became settings before the door existed
OTHER_READERS = {"from_dict", "load_config_arg", "config_value", "validate", "load_config"}
# (file, function, reader) allowed anyway: _args.mapping reads JSON arguments that are no config
# section (--upstream-config, an adapter's --options), which a stage records or forwards as they are
NOT_SETTINGS = {("_args.py", "mapping", "config_value")}
# `srrg models --config` names the whole workflow config file (default config.yaml), not a slice
WHOLE_CONFIG_FILE = {"models"}


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _calls_by_function(path: Path) -> list[tuple[str, ast.Call]]:
    """(enclosing top-level function, call) for every call in a module."""
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        owner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else "<module>"
        out += [(owner, c) for c in ast.walk(node) if isinstance(c, ast.Call)]
    return out


def _is_args_config(node: ast.expr) -> bool:
    is_attribute = isinstance(node, ast.Attribute) and node.attr == "config"
    return is_attribute and isinstance(node.value, ast.Name) and node.value.id == "args"


def _door_functions() -> dict[str, tuple[int, bool]]:
    """Function name -> (index of its parameter that reaches stage_config, whether the function
    passes that parameter's `.config`) for every function of the stage package that hands one of
    its parameters to the door, directly or through another such function (a stage may give `args`
    to a shared reader, e.g. the dataset commands' _dataset.dataset_config)."""
    functions = [
        node
        for path in STAGE_FILES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    doors: dict[str, tuple[int, bool]] = {}
    while True:  # until no function is added: readers of readers
        found = dict(doors)
        for node in functions:
            params = [a.arg for a in node.args.posonlyargs + node.args.args]
            for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
                callee = _name(call.func)
                index, dotted = (0, False) if callee == "stage_config" else doors.get(callee, (None, False))
                given = call.args[index] if index is not None and len(call.args) > index else None
                if dotted and isinstance(given, ast.Name) and given.id == "args" and "args" in params:
                    found[node.name] = (params.index("args"), True)
                elif not dotted and isinstance(given, ast.Name) and given.id in params:
                    found[node.name] = (params.index(given.id), False)
                elif not dotted and _is_args_config(given) and "args" in params:
                    found[node.name] = (params.index("args"), True)
        if found == doors:
            return doors
        doors = found


def _section_keys(path: Path) -> set[str]:
    """The config section a stage's --config help names (`_args.config(parser, "<key>")`), also in
    the shared stage helpers it calls (`_dataset.add_common(parser)`)."""
    keys = set()
    for _, call in _calls_by_function(path):
        func = call.func
        if _name(func) == "config" and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
            keys.add(call.args[1].value)
        if _name(func) == "correlate_config":
            keys.add("metaeval.correlate")
        on_module = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        helper = path.parent / f"{func.value.id}.py" if on_module else None
        if helper is not None and helper.name.startswith("_") and helper != path and helper.is_file():
            keys |= _section_keys(helper)
    return keys


@pytest.mark.parametrize("path", STAGE_FILES, ids=lambda p: p.name)
def test_no_stage_reads_settings_past_the_door(path: Path) -> None:
    found = sorted(
        f"{owner}: {_name(call.func)}() at line {call.lineno}"
        for owner, call in _calls_by_function(path)
        if _name(call.func) in OTHER_READERS and (path.name, owner, _name(call.func)) not in NOT_SETTINGS
    )
    assert found == [], f"{path.name} reads settings without srrg.config.stage_config"


def _takes_config(name: str) -> bool:
    parser = cli.build_parser(cli.load_stage(name), cli.command_name(name))
    return any("--config" in a.option_strings for a in parser._actions)


WITH_CONFIG = [n for n in cli.stage_names() if n not in WHOLE_CONFIG_FILE and _takes_config(n)]


def test_the_stages_with_config_are_found() -> None:
    assert {"ingest", "extract", "normalize", "dataset_shard", "stats", "train", "infer", "score"} <= set(WITH_CONFIG)


@pytest.mark.parametrize("name", WITH_CONFIG)
def test_every_config_option_goes_through_the_door(name: str) -> None:
    """A stage with --config hands `args.config` to stage_config (or to a helper that does), with the
    section key its --config help names."""
    stage = cli.load_stage(name)
    path = Path(stage.run.__code__.co_filename)  # judge, metaeval-score, ... run another stage's code
    doors = _door_functions()
    through, keys = [], set()
    for _, call in _calls_by_function(path):
        callee = _name(call.func)
        if callee == "stage_config" and call.args and _is_args_config(call.args[0]):
            through.append(callee)
            if len(call.args) >= 3 and isinstance(call.args[2], ast.Constant):
                keys.add(call.args[2].value)
        elif callee in doors and len(call.args) > doors[callee][0]:
            given = call.args[doors[callee][0]]
            if _is_args_config(given) if not doors[callee][1] else isinstance(given, ast.Name) and given.id == "args":
                through.append(callee)
    assert through, f"{path.name}: args.config never reaches srrg.config.stage_config"
    named = _section_keys(Path(stage.add_arguments.__code__.co_filename))
    # a key inside the named section is that section's slice (score -> score.options)
    unnamed = {k for k in keys if not any(k == n or k.startswith(f"{n}.") for n in named)}
    assert unnamed == set(), f"{path.name} validates against {sorted(keys)}, its --config help names {sorted(named)}"


def test_the_door_validates_once_and_returns_the_frozen_object(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = []
    real = C.validate
    monkeypatch.setattr(C, "validate", lambda *a, **k: calls.append(1) or real(*a, **k))
    cfg = stage_config('{"num_beams": 2}', InferConfig, "infer")
    assert calls == [1] and cfg == InferConfig(num_beams=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_beams = 5  # type: ignore[misc]
    path = tmp_path / "infer.yaml"
    path.write_text("num_beams: 2\n")
    assert stage_config(str(path), InferConfig, "infer") == stage_config({"num_beams": 2}, InferConfig, "infer") == cfg
    assert stage_config(None, InferConfig, "infer") == stage_config("", InferConfig, "infer") == InferConfig()


def test_schema_errors_and_a_class_check_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"unknown key infer\.beams"):
        stage_config('{"beams": 1}', InferConfig, "infer")
    with pytest.raises(ConfigError, match=r"infer\.max_studies: 0 is less than the minimum of 1"):
        stage_config({"max_studies": 0}, InferConfig, "infer")
    with pytest.raises(ConfigError, match=r"more than infer\.num_beams"):  # InferConfig's own cross-field check
        stage_config({"num_beams": 1, "num_return_sequences": 2}, InferConfig, "infer")
    with pytest.raises(ConfigError, match=r"^llm\.base_url 'http//x' is not an http"):  # the class's own
        stage_config({"base_url": "http//x"}, LLMConfig, "llm")
    with pytest.raises(ConfigError, match="no section 'nope.x'"):
        stage_config(None, dict, "nope.x")


def test_adjust_runs_before_the_one_validation() -> None:
    assert stage_config({}, IngestConfig, "ingest", adjust=lambda s: {**s, "source": "mimic_cxr"}).source == "mimic_cxr"
    with pytest.raises(ConfigError, match=r"unknown key extract\.n_proc"):
        stage_config({}, dict, "extract", adjust=lambda s: {**s, "n_proc": 2})
    run = {"name": "a", "label": "A", "arch": "baseline", "overrides": {"trainer": {"max_steps": 7}}}
    runs = {"optim": {"lr": 1e-3}, "runs": [run]}
    cfg = stage_config(json.dumps(runs), TrainConfig, "train", adjust=lambda s: pick_run(s, "a"))
    assert (cfg.model.arch, cfg.trainer.max_steps, cfg.optim.lr) == ("baseline", 7, 1e-3)


def test_a_section_carries_other_sections_only_when_named() -> None:
    llm = {"backend": "local", "batch_size": 2}
    cfg = stage_config({"method": "llm", "llm": llm}, NormalizeConfig, "normalize", with_sections=("llm",))
    assert cfg.llm == LLMConfig(backend="local", batch_size=2)
    with pytest.raises(ConfigError, match=r"unknown key normalize\.llm"):
        stage_config({"method": "llm", "llm": llm}, NormalizeConfig, "normalize")
    with pytest.raises(ConfigError, match=r"unknown key normalize\.llm\.api_key"):  # no inline secrets
        stage_config({"llm": {"api_key": "sk-1"}}, NormalizeConfig, "normalize", with_sections=("llm",))


def test_dict_gives_the_validated_mapping_with_defaults() -> None:
    options = stage_config('{"n_boot": 20}', dict, "metaeval.correlate")
    assert options["n_boot"] == 20 and options["seed"] == 0 and options["resample"] == "cluster"
