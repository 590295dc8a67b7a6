"""The stage spine: rule = stage module = command, one error path, help for every option, an
import graph without cycles, and data stages that never load spaCy or torch (docs/cli.md)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from paths import REPO

from srrg import cli, codedeps
from srrg.config import ConfigError
from srrg.config_tree import check_workflow_config
from srrg.errors import StageFailed, UserError
from srrg.text.decode import config_value, load_yaml

# commands that no rule runs (tools for users); every other stage module is a rule
TOOLS = {"dataset", "judge_train_merge", "compare", "config_schema", "models", "rexrank_prepare", "rexrank_export"}
AGGREGATE_RULES = {"all", "data"}
DATA_STAGES = ("ingest", "dataset_plan", "dataset_shard", "dataset_manifest", "image_cache", "stats")


def workflow_rules() -> set[str]:
    names = set()
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        names.update(re.findall(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", path.read_text(), flags=re.M))
    return names - AGGREGATE_RULES


def test_rules_modules_and_commands_match_one_to_one():
    rules, stages = workflow_rules(), set(cli.stage_names())
    assert rules - stages == set(), "rules without a stage module"
    assert stages - rules - TOOLS == set(), "stage modules that are neither a rule nor a listed tool"
    assert TOOLS - stages <= {"compare", "config_schema"}  # tools other engineers may add later
    for rule in rules:
        assert f"python -m srrg {cli.command_name(rule)} " in _rule_shell(rule), rule


def _rule_shell(rule: str) -> str:
    text = "\n".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    block = re.split(rf"^\s*(?:rule|checkpoint)\s+{rule}\s*:", text, flags=re.M)[1]
    return re.split(r"^\s*(?:rule|checkpoint)\s+\w+\s*:", block, flags=re.M)[0]


@pytest.mark.parametrize("name", cli.stage_names())
def test_every_command_has_help_for_every_option(name):
    stage = cli.load_stage(name)
    assert stage.HELP and "\n" not in stage.HELP
    parser = cli.build_parser(stage, cli.command_name(name))
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"srrg {cli.command_name(name)} {action.option_strings or action.dest}: no help text"
        assert not re.search(r"\bslice\b|DESIGN|\bmain\(\)", action.help), action.help


def test_no_arguments_prints_help_and_exits_2():
    proc = subprocess.run([sys.executable, "-m", "srrg"], capture_output=True, text=True)
    assert proc.returncode == 2 and "commands:" in proc.stderr and "dataset-shard" in proc.stderr
    assert subprocess.run([sys.executable, "-m", "srrg", "--help"], capture_output=True, text=True).returncode == 0


def test_usage_error_names_the_allowed_values(tmp_path, capsys):
    rc = cli.main(["dataset-shard", "--in", str(tmp_path / "n.parquet"), "--out-dir", str(tmp_path), "trian", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and "invalid choice: 'trian'" in err and "train" in err and "validate" in err


def test_missing_input_is_one_line_exit_2(tmp_path, capsys):
    rc = cli.main(["stats", "--dataset", str(tmp_path / "nope"), "--out-dir", str(tmp_path / "s")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1 and "nope" in err


def test_config_errors_are_one_line_exit_2(tmp_path, capsys):
    rc = cli.main(
        ["stats", "--dataset", str(tmp_path), "--out-dir", str(tmp_path), "--config", '{"top_k": 0, "dpii": 1}']
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "2 problem(s)" in err and "unknown key stats.dpii" in err and "stats.top_k" in err


def test_error_kinds_map_to_exit_codes(capsys):
    def stage(exc):
        def run(args):
            raise exc

        return argparse.Namespace(run=run)

    assert cli.run_stage(stage(UserError("bad value x; allowed: a, b")), argparse.Namespace(), "t") == 2
    assert cli.run_stage(stage(StageFailed("endpoint down after 5 retries")), argparse.Namespace(), "t") == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["srrg t: error: bad value x; allowed: a, b", "srrg t: failed: endpoint down after 5 retries"]
    with pytest.raises(ZeroDivisionError):  # a bug keeps its traceback
        cli.run_stage(stage(ZeroDivisionError("bug")), argparse.Namespace(), "t")


def test_duplicate_keys_are_errors(tmp_path):
    with pytest.raises(UserError, match="duplicate key 'ingest' at line 3 \\(first at line 1\\)"):
        load_yaml("ingest: {limit: 1}\ndataset: {}\ningest: {limit: 2}\n", "c.yaml")
    with pytest.raises(UserError, match="duplicate key 'limit'"):
        load_yaml("ingest:\n  limit: 1\n  limit: 2\n")
    with pytest.raises(UserError, match="duplicate key"):
        config_value('{"a": 1, "a": 2}')
    path = tmp_path / "c.yaml"
    path.write_text("stats: {top_k: 3}\nstats: {dpi: 60}\n")
    with pytest.raises(UserError, match="duplicate key 'stats'"):
        check_workflow_config({}, [path])
    with pytest.raises(UserError, match="expected a mapping"):
        config_value(str(_write(tmp_path / "l.yaml", "- 1\n")))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["a-b", "a b", "a/b", "", "é"])
def test_run_names_must_be_safe(name):
    with pytest.raises(ConfigError, match=r"train\.runs\.0\.name: .* does not match"):
        check_workflow_config({"train": {"runs": [{"name": name, "label": "x", "arch": "baseline", "target": "json"}]}})


def test_repo_config_passes_the_workflow_checks():
    data = yaml.safe_load((REPO / "config.yaml").read_text())
    assert check_workflow_config(data, [REPO / "config.yaml"])["results_dir"] == "results"


def test_import_graph_has_no_cycle():
    assert codedeps.cycles(codedeps.import_graph(by_name=False)) == []


# The lower layers of docs/cli.md and what each may import: the settings classes nothing of srrg
# but themselves (tests/config/test_import_floors.py: nothing but the standard library); the
# bottom (errors, text, the vocabulary data) only itself; the structured report only the bottom;
# the door (srrg.config) the bottom and the settings; the config tree (schema and pre-check) the
# door, the privacy guard (which reads llm settings) and the atomic writes of srrg.io (the schema
# file).
SETTINGS = ("srrg.settings",)
BOTTOM = ("srrg.errors", "srrg.text", "srrg.vocab")
DOOR = ("srrg.config", *BOTTOM, *SETTINGS)
LAYERS = {
    SETTINGS: SETTINGS,
    BOTTOM: BOTTOM,
    ("srrg.report",): BOTTOM,
    ("srrg.config",): DOOR,
    ("srrg.privacy",): ("srrg.errors", *SETTINGS),
    ("srrg.config_tree",): (*DOOR, "srrg.privacy", "srrg.io"),
}


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return name == "srrg" or any(name == p or name.startswith(p + ".") for p in packages)


@pytest.mark.parametrize("layer", list(LAYERS), ids=lambda layer: "+".join(layer))
def test_lower_layers_import_nothing_above_them(layer):
    modules = [n for n in codedeps.module_names() if _in(n, layer) and n != "srrg"]
    allowed = (*layer, *LAYERS[layer])
    above = sorted(n for n in codedeps.reachable(modules, by_name=False) if not _in(n, allowed))
    assert modules and above == []


def test_cycles_are_found():
    graph = {"srrg.a": frozenset({"srrg.b"}), "srrg.b": frozenset({"srrg.a"}), "srrg.c": frozenset()}
    assert codedeps.cycles(graph) == [["srrg.a", "srrg.b"]]


def test_stage_code_is_the_import_closure():
    rel = lambda stage: {str(p.relative_to(codedeps.PACKAGE_DIR)) for p in codedeps.stage_files(stage)}  # noqa: E731
    ingest = rel("ingest")
    assert {
        "stages/ingest.py",
        "ingest.py",
        "sources/mimic_cxr.py",
        "text/sections.py",
        "vocab/sections.yaml",
        "cli.py",
    } <= ingest
    assert not any(f.startswith(("extract/", "model/", "metrics/", "llm/")) for f in ingest)
    score = rel("score")
    # metric modules are loaded by name from the registry, the judge prompts by folder name
    assert {"metrics/judges/green.py", "metrics/sscore.py", "prompts/green.txt", "llm/client.py"} <= score
    assert "stages/stats.py" not in score and "model/train.py" not in score


@pytest.mark.parametrize("stage", DATA_STAGES)
def test_data_stages_never_import_spacy_or_torch(stage):
    closure = codedeps.closure([f"srrg.stages.{stage}"], codedeps.import_graph())
    assert not any(m.startswith(("srrg.extract", "srrg.model", "srrg.metrics", "srrg.llm")) for m in closure)
    code = (
        f"import sys, argparse; import srrg.cli as c; s = c.load_stage({stage!r}); "
        "import srrg.ingest, srrg.dataset, srrg.stats; "
        "print(sorted(m for m in ('spacy', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_adapter_choices_match_the_registry():
    from srrg.metaeval.readers.load import READERS
    from srrg.stages._metaeval import ADAPTERS as CHOICES

    assert tuple(sorted(READERS)) == CHOICES
