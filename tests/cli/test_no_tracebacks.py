"""No `srrg` command answers a careless input with a traceback (issue 39): every subcommand of the
CLI (srrg.cli.stage_names) is run in-process with hostile inputs, one input at a time (the others
plausible), and must exit non-zero with one line on stderr that names the problem (docs/cli.md).

Hostile files: missing, empty, a folder, binary garbage, truncated JSON/YAML/Parquet/CSV/JSONL,
other columns, non-UTF-8 text; hostile folders: missing, a file, empty, holding garbage. Every
path carries `[1]` (a glob character class in some readers)."""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from srrg.cli import command_name, main, stage_names


def _parquet(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()


ROWS = pl.DataFrame({"study_id": ["s1", "s2"], "report": ["No effusion.", "Small effusion."]})
GARBAGE = bytes(range(256)) * 8
NON_UTF8 = b"study_id,report\ns1,caf\xe9 \xff\xfe effusion\n"
OTHER = pl.DataFrame({"x": [1, 2], "y": ["a", "b"]})

# extension -> hostile kind -> file content
TRUNCATED = {
    ".parquet": _parquet(ROWS)[: len(_parquet(ROWS)) // 2],
    ".json": b'{"a": [1, 2, {"b": ',
    ".jsonl": b'{"study_id": "s1", "report": "x"}\n{"study_id": "s2", "rep',
    ".csv": b'study_id,report\ns1,"no effusion\n',
    ".yaml": b"a: [1, 2\nb: {c: \n",
}
OTHER_COLUMNS = {
    ".parquet": _parquet(OTHER),
    ".json": json.dumps([{"x": 1}]).encode(),
    ".jsonl": b'{"x": 1}\n',
    ".csv": b"x,y\n1,a\n",
    ".yaml": b"- x\n- 1\n",
}
FILE_KINDS = ("missing", "empty", "folder", "garbage", "truncated", "other columns", "non-UTF-8")
FOLDER_KINDS = ("missing", "a file", "empty", "garbage inside")

# command -> (fixed arguments, {input option: ("file", extension) | ("folder", None)}); an option
# with a NAME= or cell prefix is given as (kind, extension, prefix). Outputs go to {out}; {ok} is a
# well-formed reports table.
COMMANDS: dict[str, tuple[list[str], dict[str, tuple[Any, ...]]]] = {
    "cases": (["--out", "{out}/cases.html"], {"--predictions": ("file", ".parquet"), "--scores": ("file", ".parquet"),
              "--dataset": ("folder", None), "--judge": ("file", ".parquet")}),
    "compare": (["--metrics", "bleu", "--hyps", "b={ok}", "--out", "{out}/cmp"], {"--refs": ("file", ".parquet"),
                "--hyps": ("file", ".parquet", "a="), "--config": ("file", ".yaml")}),
    "config-schema": (["--check"], {"--out": ("file", ".json")}),
    "dataset": (["--out-dir", "{out}/ds"], {"--in": ("file", ".parquet"), "--config": ("file", ".yaml"),
                "--upstream-config": ("file", ".json")}),
    "dataset-manifest": (["--out-dir", "{out}/ds"], {"--in": ("file", ".parquet")}),
    "dataset-plan": (["--out-dir", "{out}/ds"], {"--in": ("file", ".parquet")}),
    "dataset-shard": (["--out-dir", "{out}/ds", "train", "0"], {"--in": ("file", ".parquet")}),
    "error-injection": (["--metrics", "bleu", "--out", "{out}/ei"], {"--refs": ("file", ".parquet"),
                        "--config": ("file", ".yaml"), "--options": ("file", ".yaml")}),
    "eval-extraction": (["--gold", "openi14"], {"--gold-file": ("file", ".csv")}),
    "image-cache": (["--size", "32", "train", "0"], {"--dataset": ("folder", None)}),
    "extract": (["--out", "{out}/e.parquet"], {"--in": ("file", ".parquet"), "--config": ("file", ".yaml")}),
    "infer": (["--out", "{out}/p.parquet"], {"--model": ("file", ".pt"), "--dataset": ("folder", None)}),
    "infer-merge": (["--out", "{out}/p.parquet"], {"--parts": ("file", ".parquet")}),
    "ingest": (["--out", "{out}/s.parquet", "--no-progress"], {"--config": ("file", ".yaml")}),
    "judge": (["--metrics", "green", "--out", "{out}/j"], {"--refs": ("file", ".parquet"),
              "--hyps": ("file", ".parquet")}),
    "judge-subset": (["--out-dir", "{out}/sub"], {"--predictions": ("file", ".parquet")}),
    "judge-train-compare": (["--out", "{out}/t"], {"--finetuned": ("file", ".parquet"),
                            "--ratings": ("file", ".parquet")}),
    "judge-train-fit": (["--out-dir", "{out}/fit", "--work-dir", "{out}/work"], {"--prepared": ("folder", None)}),
    "judge-train-merge": (["--out", "{out}/merged"], {"--adapter": ("folder", None)}),
    "judge-train-prepare": (["--adapter", "radpref", "--out-dir", "{out}/prep"], {"--data": ("folder", None),
                            "--analyses": ("file", ".parquet")}),
    "judge-train-score": (["--metrics", "vert", "--out", "{out}/js"], {"--refs": ("file", ".parquet"),
                          "--hyps": ("file", ".parquet")}),
    "metaeval-correlate": (["--out", "{out}/mc"], {"--scores": ("file", ".parquet"), "--ratings": ("file", ".parquet"),
                           "--pairs": ("file", ".parquet"), "--config": ("file", ".yaml")}),
    "gema-grid": (["--out", "{out}/gg"], {"--cell": ("file", ".parquet", "m1 "), "--ratings": ("file", ".parquet")}),
    "metaeval-gema": (["--out", "{out}/mg"], {"--scores": ("file", ".parquet"), "--ratings": ("file", ".parquet")}),
    "metaeval-preference": (["--out", "{out}/mf"], {"--pairs": ("file", ".parquet"),
                            "--ratings": ("file", ".parquet"), "--scores": ("file", ".parquet"),
                            "--config": ("file", ".yaml")}),
    "metaeval-prepare": (["--adapter", "rate_eval", "--out-dir", "{out}/mp"], {"--data": ("file", ".csv"),
                         "--options": ("file", ".json")}),
    "metaeval-proxy": (["--out", "{out}/mx"], {"--scores": ("file", ".parquet")}),
    "metaeval-gema3": (["--out", "{out}/m3"], {"--scores": ("file", ".parquet")}),
    "metaeval-rank": (["--metrics", "bleu", "--out", "{out}/mr"], {"--cases": ("file", ".json")}),
    "metaeval-score": (["--metrics", "bleu", "--out", "{out}/ms"], {"--refs": ("file", ".parquet"),
                       "--hyps": ("file", ".parquet")}),
    "models": (["list", "--dir", "{out}/models"], {"--config": ("file", ".yaml")}),
    "normalize": (["--out", "{out}/n.parquet", "--phrases", "{out}/ph.parquet"], {"--in": ("file", ".parquet")}),
    "phantoms": (["--out", "{out}/ph.png"], {"--dataset": ("folder", None)}),
    "reference-runs": (["--out-dir", "{out}/rr"], {"--pairs": ("file", ".parquet"), "--dataset": ("folder", None)}),
    "rexrank-export": (["--out", "{out}/sub.json"], {"--test": ("file", ".json"),
                       "--predictions": ("file", ".parquet")}),
    "rexrank-prepare": (["--out", "{out}/refs.parquet"], {"--test": ("file", ".json")}),
    "rl": (["--out", "{out}/m.pt"], {"--dataset": ("folder", None), "--model": ("file", ".pt"),
           "--config": ("file", ".yaml")}),
    "score": (["--metrics", "bleu", "--out", "{out}/sc"], {"--refs": ("file", ".parquet"),
              "--hyps": ("file", ".parquet"), "--config": ("file", ".yaml")}),
    "score-structure": (["--metrics", "s_score_text", "--out", "{out}/ss"], {"--refs": ("file", ".parquet"),
                        "--hyps": ("file", ".parquet")}),
    "stats": (["--out-dir", "{out}/st"], {"--dataset": ("folder", None)}),
    "tables": (["--out-dir", "{out}/tb"], {"--runs": ("file", ".json")}),
    "train": (["--out", "{out}/m.pt"], {"--dataset": ("folder", None), "--config": ("file", ".yaml")}),
    "vert-grid": (["--out", "{out}/vg"], {"--cell": ("file", ".parquet", "m1 direct "),
                  "--ratings": ("file", ".parquet")}),
    "vert-grid-score": (["--metrics", "vert", "--out", "{out}/vs"], {"--refs": ("file", ".parquet"),
                        "--hyps": ("file", ".parquet")}),
}  # fmt: skip


def test_every_command_of_the_cli_is_covered():
    assert sorted(COMMANDS) == sorted(command_name(n) for n in stage_names())


def _hostile_file(root: Path, kind: str, ext: str) -> Path:
    path = root / f"bad[1]{ext}"
    if kind == "missing":
        return path
    if kind == "folder":
        path.mkdir()
        return path
    content = {
        "empty": b"",
        "garbage": GARBAGE,
        "truncated": TRUNCATED.get(ext, GARBAGE[:100]),
        "other columns": OTHER_COLUMNS.get(ext, GARBAGE),
        "non-UTF-8": NON_UTF8 if ext != ".parquet" else GARBAGE,
    }[kind]
    path.write_bytes(content)
    return path


def _hostile_folder(root: Path, kind: str) -> Path:
    path = root / "bad[1]"
    if kind == "missing":
        return path
    if kind == "a file":
        path.write_bytes(b"x")
        return path
    path.mkdir()
    if kind == "garbage inside":
        for name in ("manifest.json", "plan.json", "ranking_tests.json", "adapter_config.json", "prepare.json"):
            (path / name).write_bytes(TRUNCATED[".json"])
        (path / "train").mkdir()
        (path / "train" / "part-00000.parquet").write_bytes(GARBAGE)
        (path / "examples.parquet").write_bytes(GARBAGE)
    return path


def _plausible(root: Path, spec: tuple[Any, ...]) -> Path:
    """A well-formed stand-in for the inputs that are not the hostile one."""
    kind, ext = spec[0], spec[1]
    if kind == "folder":
        path = root / "ok_dir"
        path.mkdir(exist_ok=True)
        return path
    path = root / f"ok{ext}"
    if ext == ".parquet":
        path.write_bytes(_parquet(ROWS))
    elif ext in (".json", ".yaml"):
        path.write_text("{}")
    elif ext == ".csv":
        ROWS.write_csv(path)
    else:
        path.write_bytes(b"")
    return path


def _argv(command: str, hostile_option: str, hostile: Path, root: Path, out: Path) -> list[str]:
    fixed, inputs = COMMANDS[command]
    ok = _plausible(root, ("file", ".parquet"))
    argv = [command, *(a.format(out=out, ok=ok) for a in fixed)]
    for option, spec in inputs.items():
        path = hostile if option == hostile_option else _plausible(root, spec)
        prefix = spec[2] if len(spec) > 2 else ""
        argv += [option, *f"{prefix}{path}".split(" ")] if " " in prefix else [option, f"{prefix}{path}"]
    return argv


# settings given as a file: an empty one is no mistake (every key takes its default)
SETTINGS = frozenset({"--config", "--options", "--upstream-config"})
CASES = [
    (command, option, kind)
    for command, (_, inputs) in COMMANDS.items()
    for option, spec in inputs.items()
    for kind in (FOLDER_KINDS if spec[0] == "folder" else FILE_KINDS)
    if not (option in SETTINGS and kind == "empty")
]


def _log_to_this_tests_stderr() -> None:
    """Log handlers made in an earlier test (main()'s basicConfig, lightning's own) hold that test's
    captured stderr, closed since: point them at this test's."""
    for logger in (logging.root, *logging.Logger.manager.loggerDict.values()):
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, logging.StreamHandler) and getattr(handler.stream, "closed", False):
                handler.stream = sys.stderr  # setStream would flush the closed one


@pytest.mark.slow  # 380 in-process runs (about a minute), some import torch or spaCy once
@pytest.mark.parametrize(("command", "option", "kind"), CASES, ids=lambda v: v)
def test_a_hostile_input_is_one_line_naming_it(tmp_path, capsys, command, option, kind):
    spec = COMMANDS[command][1][option]
    hostile_root = tmp_path / "hostile"
    hostile_root.mkdir()
    hostile = _hostile_folder(hostile_root, kind) if spec[0] == "folder" else _hostile_file(hostile_root, kind, spec[1])
    out = tmp_path / "out"
    out.mkdir()
    argv = _argv(command, option, hostile, tmp_path, out)
    _log_to_this_tests_stderr()
    try:
        rc = main(argv)
    except SystemExit as exit_:  # a stage that exits by itself
        rc = exit_.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err[max(0, err.index("Traceback") - 2000) :][:6000]
    assert rc not in (0, None), f"{argv} passed: {err[-2000:]}"
    last = lines[-1] if lines else ""
    prefix = next((p for p in (f"srrg {command}: error: ", f"srrg {command}: failed: ") if last.startswith(p)), None)
    assert prefix is not None and len(last) > len(prefix) + 10, err[-2000:]
    if kind in ("missing", "folder", "a file"):  # a wrong path is named (the first one the stage reads)
        assert "bad[1]" in last or "ok" in last, last
