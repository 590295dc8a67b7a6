"""One verb per stage entry point (docs/cli.md, "Stage modules"): each stage module's run(args) parses
and checks, then calls exactly one library function, run_<stage>, which does the stage's work (compare:
one per mode). Read from the source (AST), so the check imports neither torch nor spaCy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from srrg import cli

STAGES = Path(cli.__file__).resolve().parent / "stages"
# a stage with two modes, each one library verb: compare rescores reports (run_compare) or reads the
# per_report tables srrg score wrote (run_compare_tables); its run() picks one from the arguments
MODES = {"compare": ["run_compare", "run_compare_tables"]}


def _tree(name: str) -> ast.Module:
    return ast.parse((STAGES / f"{name}.py").read_text(encoding="utf-8"))


def alias_of(name: str) -> str | None:
    """The stage whose run() this module re-exports (`judge` runs score's code), else None."""
    for node in _tree(name).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("srrg.stages."):
            if "run" in {a.name for a in node.names}:
                return node.module.rsplit(".", 1)[1]
    return None


def verbs(name: str) -> list[str]:
    """Names of the run_* library functions (imported from srrg, not srrg.stages) that run() calls."""
    run = next(n for n in _tree(name).body if isinstance(n, ast.FunctionDef) and n.name == "run")
    library = {
        a.asname or a.name
        for node in ast.walk(run)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("srrg.")
        and not node.module.startswith("srrg.stages")
        for a in node.names
    }
    called = [node.func.id for node in ast.walk(run) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    return sorted({c for c in called if c in library and c.startswith("run_")})


@pytest.mark.parametrize("name", cli.stage_names())
def test_stage_run_calls_one_library_verb_named_after_the_stage(name):
    target = alias_of(name)
    if target is not None:
        assert alias_of(target) is None, f"{name} re-exports {target}, itself an alias"
        return
    if name in MODES:
        assert verbs(name) == MODES[name]
        return
    assert verbs(name) == [f"run_{name}"], f"{name}.run() should call one srrg function run_{name}, calls {verbs(name)}"
