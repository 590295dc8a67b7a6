"""The conda envs provide what the rules' code imports (docs/workflow.md, "Software environments").

For every rule that runs a stage (`code=stage_code("<stage>")`), the third-party modules that the
stage's import closure (srrg.codedeps, the same closure the workflow declares as the rule's code
input) imports at module level must be installed by the rule's `conda:` env file. Module level
means what runs on import, whatever the nesting under `if`/`try`: a module loaded at all needs them.
Imports inside functions are optional backends (model-backed metrics, RadEval, the hub client) that
a run reaches only when configured; they are not checked here.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

from srrg import codedeps

REPO = Path(__file__).resolve().parents[2]
RULES_DIR = REPO / "workflow" / "rules"
ENVS_DIR = REPO / "envs"

# Distribution name (normalised: lower case, '-' and '.' as '_') -> the import names it provides,
# where they differ from the distribution name.
IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml",),
    "pillow": ("PIL",),
    "scikit_learn": ("sklearn",),
    "scikit_image": ("skimage",),
    "pytorch_lightning": ("pytorch_lightning",),
    "radeval": ("RadEval", "radeval"),
}

_RULE = re.compile(r"^\s*(?:rule|checkpoint) (\w+):", re.M)
_STAGE = re.compile(r'stage_code\("(\w+)"\)')
_CONDA = re.compile(r'conda:\s*\n\s*"([^"]+\.yaml)"')


def rule_envs(texts: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Rule name -> (stage it runs, env file relative to workflow/rules), read from .smk text."""
    found = {}
    for text in texts:
        starts = [m.start() for m in _RULE.finditer(text)]
        for begin, end in zip(starts, [*starts[1:], len(text)], strict=False):
            block = text[begin:end]
            stage, conda = _STAGE.search(block), _CONDA.search(block)
            if stage and conda:
                found[_RULE.match(block).group(1)] = (stage.group(1), conda.group(1))
    return found


def _normalise(name: str) -> str:
    return re.sub(r"[-.]", "_", name.lower())


def env_modules(env: dict) -> set[str]:
    """Import names the env's conda and pip dependencies provide."""
    specs: list[str] = []
    for dep in env.get("dependencies", []):
        specs.extend(dep.get("pip", []) if isinstance(dep, dict) else [dep])
    modules = set()
    for spec in specs:
        dist = _normalise(re.split(r"[<>=!~ ;\[]", spec.strip(), maxsplit=1)[0])
        modules.update(IMPORT_NAMES.get(dist, (dist,)))
    return modules


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run on import: everything outside function and class bodies."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield node
        for field in ("body", "orelse", "finalbody"):
            yield from _module_level(getattr(node, field, []))
        for handler in getattr(node, "handlers", []):
            yield from _module_level(handler.body)


def third_party_imports(source: str) -> set[str]:
    """Top-level names of the non-stdlib, non-srrg modules a source imports at module level."""
    names = set()
    for node in _module_level(ast.parse(source).body):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in {codedeps.PACKAGE, "__future__"}}


@cache
def _module_imports(path: Path) -> frozenset[str]:
    """third_party_imports of one source file, parsed once for all stages."""
    return frozenset(third_party_imports(path.read_text(encoding="utf-8")))


def stage_imports(stage: str) -> set[str]:
    """Third-party modules the stage's import closure imports at module level."""
    names = codedeps.module_names()
    start = [f"{codedeps.PACKAGE}.__main__", f"{codedeps.PACKAGE}.stages.{stage}"]
    modules = codedeps.closure(start, codedeps.import_graph())
    return set().union(*(_module_imports(names[m]) for m in modules))


def missing_modules(rules: dict[str, tuple[str, str]], imports, provided) -> dict[str, list[str]]:
    """Rule -> modules its code imports that its env lacks (rules with none left out)."""
    gaps = {}
    for rule, (stage, env) in sorted(rules.items()):
        lacking = sorted(imports(stage) - provided(env))
        if lacking:
            gaps[rule] = lacking
    return gaps


def _load_env(relative: str) -> set[str]:
    return env_modules(yaml.safe_load((RULES_DIR / relative).resolve().read_text(encoding="utf-8")))


RULES = rule_envs(p.read_text(encoding="utf-8") for p in sorted(RULES_DIR.glob("*.smk")))


def test_every_stage_rule_is_found() -> None:
    """A parser that misses rules (e.g. the indented ones under `if` in judge.smk) would pass the
    env check vacuously: every stage_code() call must belong to a parsed rule."""
    calls = sum(len(_STAGE.findall(p.read_text(encoding="utf-8"))) for p in RULES_DIR.glob("*.smk"))
    assert len(RULES) == calls
    assert {"ingest", "extract", "score", "judge", "metaeval_rank", "train"} <= set(RULES)


def test_every_rule_env_provides_its_code_imports() -> None:
    """The bug: a module-level import added to a stage's code (msgspec in srrg.report) that its
    rule's env does not install fails every job under --software-deployment-method conda."""
    assert missing_modules(RULES, stage_imports, _load_env) == {}


def test_driver_env_provides_the_snakefile_imports() -> None:
    """The Snakefile imports srrg (config check, code inputs) in the driver's env: a module its
    closure imports that envs/snakemake.yaml lacks fails `snakemake` before any job."""
    texts = [p.read_text(encoding="utf-8") for p in [REPO / "Snakefile", *sorted(RULES_DIR.glob("*.smk"))]]
    start = {m for t in texts for m in re.findall(r"^\s*from (srrg[\w.]*) import", t, re.M)}
    assert "srrg.config_tree" in start
    names = codedeps.module_names()
    modules = codedeps.closure(start, codedeps.import_graph())
    imports = set().union(*(third_party_imports(names[m].read_text(encoding="utf-8")) for m in modules))
    assert sorted(imports - _load_env("../../envs/snakemake.yaml")) == []


def test_a_missing_module_is_reported() -> None:
    """The check itself fails when an env lacks a module: a synthetic env without msgspec for a
    closure importing it (a check comparing the wrong sets, or nothing, would pass)."""
    rules = rule_envs(['rule a:\n    input:\n        code=stage_code("s"),\n    conda:\n        "../../envs/x.yaml"\n'])
    assert rules == {"a": ("s", "../../envs/x.yaml")}
    imports = {"s": third_party_imports("import msgspec\nimport yaml\ndef f():\n    import torch\n")}
    assert imports["s"] == {"msgspec", "yaml"}
    env = env_modules({"dependencies": ["python=3.11", {"pip": ["PyYAML==6.0.4", "polars==2.1.0"]}]})
    assert missing_modules(rules, imports.__getitem__, lambda _: env) == {"a": ["msgspec"]}
    env_with = env | env_modules({"dependencies": [{"pip": ["msgspec==0.23.0"]}]})
    assert missing_modules(rules, imports.__getitem__, lambda _: env_with) == {}


def test_import_name_map() -> None:
    """Distribution names map to import names (PyYAML -> yaml, Pillow -> PIL, scikit-learn ->
    sklearn); an unmapped name would report yaml missing from every env."""
    env = {"dependencies": [{"pip": ["PyYAML==6.0.4", "pillow==13.0.0", "scikit-learn>=1.8", "json_repair==0.64.6"]}]}
    assert env_modules(env) == {"yaml", "PIL", "sklearn", "json_repair"}


def test_module_level_imports_only() -> None:
    """Imports under if/try at module level count, those in functions and classes do not."""
    source = (
        "import a.b\nfrom c import d\nfrom . import e\nimport os\ntry:\n    import f\nexcept ImportError:\n"
        "    import g\nif True:\n    import h\nclass K:\n    import i\ndef j():\n    import k\n"
    )
    assert third_party_imports(source) == {"a", "c", "f", "g", "h"}


def _pins(lines: Iterable[str]) -> dict[str, str]:
    pins = {}
    for line in lines:
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)==([^\s#;]+)", line)
        if match:
            pins[_normalise(match.group(1))] = match.group(2)
    return pins


@pytest.mark.parametrize("env", sorted(p.name for p in ENVS_DIR.glob("*.yaml")))
def test_env_pins_match_constraints(env: str) -> None:
    """An env pinning another version than constraints.txt runs code tested against neither."""
    constraints = _pins((REPO / "constraints.txt").read_text(encoding="utf-8").splitlines())
    data = yaml.safe_load((ENVS_DIR / env).read_text(encoding="utf-8"))
    specs = [s for d in data["dependencies"] if isinstance(d, dict) for s in d.get("pip", [])]
    pins = _pins(specs)
    assert pins, f"{env}: no pinned pip dependency read"
    assert {k: v for k, v in pins.items() if k in constraints and constraints[k] != v} == {}
