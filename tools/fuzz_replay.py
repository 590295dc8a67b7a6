"""Replay of the hostile-input probe (issue 16): fuzzed model outputs, bad command lines, config mutations.

Prints, per family, the number of cases, how many ended badly and the wall time:

(a) >= 10,000 seeded fuzzed model outputs (random JSON-ish text, truncations, byte noise, wrong
    types, huge numbers, lone surrogates and invalid UTF-8, deep nesting, long noise) through
    `srrg.report.parse_report` and the `s_score` and `bleu` metrics. Any exception counts: model
    output must never raise. Also the memory still held after 20 distinct ~1 MB outputs went
    through parsing and S-Score (caches of model output are bounded, docs/inputs.md), and whether
    two processes with different hash seeds parse the first 1,000 outputs identically.
(b) >= 80 bad command lines as `python -m srrg <cmd> ...` subprocesses (missing, empty, binary and
    misshapen files, directories for files, bad JSON in --config, unknown shard names ...). A case
    is `traceback` when stderr holds a Python traceback, `clean` when it exits 2 with a short
    message and no traceback, `other` otherwise (exit 0 on a bad input, exit 1, ...), `timeout`
    past --timeout, `skipped` when the family's --budget was spent first (a loaded machine).
(c) >= 30 mutations of config.yaml (typos in keys at every level, wrong value types, duplicate YAML
    keys) through `srrg.config.load_config`; a mutation that passes validation is a miss. A few also
    go through `snakemake -n --configfile` in a temporary copy of the workflow. Then the mistakes of
    issue 25 that the schema alone accepts (a remote endpoint without allow_remote, judges on the
    rules backend, infer.max_new_tokens below a run's max_target_tokens, ...) through the workflow's
    own check, `srrg.config_tree.check_workflow_config`; one it accepts is a miss.
(d) hostile OpenAI-compatible endpoints on 127.0.0.1 (issue 25): a server trickling its answer, a
    100 MB answer, a body nested 100,000 deep, a stage whose requests outlast llm.stage_timeout_s,
    an endpoint that fails every request under `normalize.method: llm`. A case is bad when the
    client raises, waits past its bound, caches the answer, or the stage exits 0 without opting in.

The (b) family also holds issue 25's inputs: outputs that are or hold an input, JSON nested too deep,
lone surrogate escapes, a FIFO as input, MIMIC CSVs without their columns.

Every case that did not end well is listed with its command. Bounded (< 3 min on 2 cores) and
runnable any time; nothing is written outside a temporary folder.

    .venv/bin/python tools/fuzz_replay.py [--families abcd] [--jobs 2] [--seed 16]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "pleural effusion",
    "atelectasis",
    "cardiomegaly",
    "pneumothorax",
    "edema",
    "nodule",
    "opacity",
    "Consolidation",
]
LEVELS = ["mild", "small", "moderate", "large", None, "", "null"]
LOCATIONS = ["in the left lower lobe", "at the right base", "bilateral", None, ""]
JUNK = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ",",
    ":",
    "\\",
    "\n",
    "\x00",
    "\t",
    "null",
    "true",
    "NaN",
    "-",
    "1e999",
    "\ufffd",
    "\ud800",
    "é",
    "🫁",
    "```json",
]
REF = json.dumps(
    {
        "positive": [{"name": "pleural effusion", "probability": 3, "level": "small", "location": "at the right base"}],
        "negative": ["pneumothorax"],
    }
)


# --- (a) fuzzed model outputs ------------------------------------------------------------------


def _wild_value(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON-ish value, wrong types included."""
    kinds = (
        ["int", "float", "str", "bool", "none", "list", "dict", "big"] if depth < 3 else ["int", "str", "none", "big"]
    )
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-5, 5)
    if kind == "float":
        return rng.choice([0.5, 2.0, -1.0, 3.0000001, float("inf"), float("nan"), 1e308])
    if kind == "str":
        return rng.choice(NAMES + LEVELS[:4] + ["", " ", "3", "two", "\u202e", "x" * rng.randint(0, 300)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "big":
        return rng.choice([10**400, -(10**30), 2**63, 2**64 + 1])
    if kind == "list":
        return [_wild_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(["name", "probability", "level", "location", "positive", "negative", "x"]): _wild_value(
            rng, depth + 1
        )
        for _ in range(rng.randint(0, 4))
    }


def _report(rng: random.Random, wild: float) -> dict[str, Any]:
    """A report-shaped object whose fields are wrong with probability `wild`."""

    def pick(good: Any) -> Any:
        return _wild_value(rng) if rng.random() < wild else good

    positive = [
        {
            "name": pick(rng.choice(NAMES)),
            "probability": pick(rng.choice([1, 2, 3])),
            "level": pick(rng.choice(LEVELS)),
            "location": pick(rng.choice(LOCATIONS)),
        }
        for _ in range(rng.randint(0, 5))
    ]
    negative = [pick(rng.choice(NAMES)) for _ in range(rng.randint(0, 4))]
    obj: dict[str, Any] = {"positive": pick(positive), "negative": pick(negative)}
    if rng.random() < wild:
        obj[rng.choice(["extra", "Positive", "size"])] = _wild_value(rng)
    return obj


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


def model_outputs(seed: int, n: int) -> Iterator[tuple[str, str | bytes | None]]:
    """(subfamily, output) pairs, seeded; n in all."""
    rng = random.Random(seed)
    makers: list[tuple[str, int, Callable[[], str | bytes | None]]] = [
        ("json_ish", 20, lambda: _dumps(_report(rng, 0.3))),
        ("truncated", 20, lambda: (lambda s: s[: rng.randint(0, len(s))])(_dumps(_report(rng, 0.1)))),
        ("mutated", 20, lambda: _mutate(rng, _dumps(_report(rng, 0.1)))),
        ("wrong_type", 12, lambda: _dumps(_wild_value(rng))),
        (
            "huge_number",
            5,
            lambda: _dumps(_report(rng, 0.0)).replace(
                '"probability": ',
                '"probability": '
                + rng.choice(["1" + "0" * 5000, "1e400", "-1e400", "NaN", "Infinity", "3." + "0" * 3000])
                + " + 0 * ",
                1,
            ),
        ),
        ("bad_unicode", 10, lambda: _bad_unicode(rng)),
        ("deep_nesting", 3, lambda: _deep(rng)),
        ("noise", 10, lambda: "".join(rng.choice(JUNK + ["a", " ", "finding"]) for _ in range(rng.randint(0, 400)))),
    ]
    weights = [w for _, w, _ in makers]
    for i in range(n):
        name, _, make = rng.choices(makers, weights)[0]
        if i % 500 == 0:  # a few long outputs (bounded so the replay stays fast)
            yield "long", _dumps(_report(rng, 0.0))[:-2] + " " + "x" * rng.randint(10_000, 40_000)
            continue
        yield name, make()


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 8)):
        pos = rng.randint(0, len(chars))
        op = rng.random()
        if op < 0.4:
            chars.insert(pos, rng.choice(JUNK))
        elif op < 0.7 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(JUNK)
    return "".join(chars)


def _bad_unicode(rng: random.Random) -> str | bytes | None:
    text = _dumps(_report(rng, 0.1))
    choice = rng.random()
    if choice < 0.4:  # raw bytes with invalid UTF-8 sequences
        raw = bytearray(text.encode("utf-8"))
        for _ in range(rng.randint(1, 5)):
            raw.insert(rng.randint(0, len(raw)), rng.choice([0x80, 0xC3, 0xFF, 0xFE, 0xED]))
        return bytes(raw)
    if choice < 0.8:  # lone surrogates inside the text
        pos = rng.randint(0, len(text))
        return text[:pos] + rng.choice(["\ud800", "\udfff", "\udc80\udc81", "\\ud800"]) + text[pos:]
    return rng.choice([None, b"", b"\xff\xfe", "\x00" * 10, "\ufeff" + text])


def _deep(rng: random.Random) -> str:
    depth = rng.choice([50, 1000, 5000, 50_000])
    if rng.random() < 0.5:
        return "[" * depth + "]" * rng.choice([0, depth])
    return '{"positive": ' + '{"a": ' * depth + "1" + "}" * depth + ', "negative": []}'


def family_a(seed: int, n: int) -> dict[str, Any]:
    from srrg.metrics import evaluate
    from srrg.report import parse_report

    cases = list(model_outputs(seed, n))
    failures: list[str] = []
    timings: dict[str, float] = {}

    start = time.perf_counter()
    for family, text in cases:
        try:
            report, status = parse_report(text)
            assert status in {"valid", "repaired", "unparseable"}
        except Exception as err:  # noqa: BLE001 - counting every escape is the point
            failures.append(f"parse_report [{family}] {_short(text)}: {type(err).__name__}: {err}")
    timings["parse_report"] = time.perf_counter() - start

    texts = [t.decode("utf-8", "surrogateescape") if isinstance(t, bytes) else (t or "") for _, t in cases]
    for metric in ("s_score", "bleu"):
        start = time.perf_counter()
        for lo in range(0, len(texts), 500):
            chunk = texts[lo : lo + 500]
            try:
                evaluate([REF] * len(chunk), chunk, [metric])
                continue
            except Exception:  # noqa: BLE001 - find the offending cases one by one
                pass
            for text in chunk:
                try:
                    evaluate([REF], [text], [metric])
                except Exception as err:  # noqa: BLE001
                    failures.append(f"{metric} {_short(text)}: {type(err).__name__}: {err}")
        timings[metric] = time.perf_counter() - start
    timings.update(retained_memory())
    if parse_digest(seed, 1000) != _digest_in_subprocess(seed, 1000):
        failures.append("parse_report differs between two processes (PYTHONHASHSEED 1 and 2) on the same 1,000 outputs")
    return {"cases": len(cases), "bad": len(failures), "timings": timings, "failures": failures}


def parse_digest(seed: int, n: int) -> str:
    """Hash of the parses (status and canonical JSON) of the first n fuzzed outputs."""
    import hashlib

    from srrg.report import parse_report

    h = hashlib.sha256()
    for _, text in model_outputs(seed, n):
        report, status = parse_report(text)
        h.update(f"{status}\t{report.to_json()}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _digest_in_subprocess(seed: int, n: int) -> str:
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        f"import fuzz_replay; print(fuzz_replay.parse_digest({seed}, {n}))"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": hs}
        ).stdout.strip()
        for hs in ("1", "2")
    }
    return digests.pop() if len(digests) == 1 else "differs"


def retained_memory(n: int = 20, size: int = 1 << 20) -> dict[str, float]:
    """MiB still held after parsing, then S-Scoring, n distinct ~1 MB outputs (issue 16 case 8:
    caches of model output must not keep them; docs/inputs.md). Each output is scored against
    itself, so its long location goes through the location BLEU as well."""
    import gc
    import tracemalloc

    from srrg.metrics import evaluate
    from srrg.report import parse_report

    location = "in the right lower lobe " * (size // 24)
    outputs = [
        _dumps(
            {
                "positive": [{"name": "opacity", "probability": 3, "level": None, "location": f"{location}{i}"}],
                "negative": [],
            }
        )
        for i in range(n)
    ]
    held = {}
    for name, step in (("parse", lambda t: parse_report(t)), ("s_score", lambda t: evaluate([t], [t], ["s_score"]))):
        gc.collect()
        tracemalloc.start()
        for text in outputs:
            step(text)
        gc.collect()
        held[f"{name} MiB held after {n} x 1 MB"] = tracemalloc.get_traced_memory()[0] / 2**20
        tracemalloc.stop()
    return held


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} chars)"


# --- (b) bad command lines ----------------------------------------------------------------------


def _fixtures(tmp: Path) -> dict[str, str]:
    """Small input files of every bad shape, written once per replay."""
    import polars as pl

    f: dict[str, str] = {}

    def put(name: str, content: str | bytes) -> str:
        path = tmp / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        f[name] = str(path)
        return str(path)

    good = [{"study_id": "s1", "report": REF}, {"study_id": "s2", "report": "no acute findings."}]
    put("good.jsonl", "".join(json.dumps(r) + "\n" for r in good))
    put("empty.jsonl", "")
    put("empty.csv", "")
    put("empty.json", "")
    put("empty.parquet", "")
    put("header_only.csv", "study_id,report\n")
    put("wrong_cols.csv", "id,text\n1,a\n")
    put("wrong_cols.jsonl", '{"id": 1, "text": "a"}\n')
    put("bad_line.jsonl", '{"study_id": "s1", "report": "a"}\n{"study_id": "s2", "report": \n')
    put("garbage.parquet", os.urandom(512))
    put("garbage.jsonl", os.urandom(512))
    put("latin1.csv", "study_id,report\ns1,caf\xe9\n".encode("latin-1"))
    put("numbers.json", "[1, 2, 3]")
    put("object.json", '{"study_id": "s1"}')
    put("report_number.jsonl", '{"study_id": "s1", "report": 5}\n')
    put("report_list.jsonl", '{"study_id": "s1", "report": ["a", "b"]}\n')
    put("report_bool.jsonl", '{"study_id": "s1", "report": true}\n')
    put("null_id.jsonl", '{"study_id": null, "report": "a"}\n')
    put("list_id.jsonl", '{"study_id": [1], "report": "a"}\n')
    put("dupes.csv", "study_id,report\ns1,a\ns1,b\n")
    put("other_ids.jsonl", '{"study_id": "zzz", "report": "a"}\n')
    put("scalar_line.jsonl", "5\n")
    put("bad.yaml", "s_score: [unclosed\n")
    put("list.yaml", "- 1\n- 2\n")
    put("dup.yaml", "s_score: {}\ns_score: {}\n")
    put("archive.tgz", b"")
    put("text.tgz", "not an archive")
    put("model.pt", os.urandom(256))
    put("runs.json", '[{"name": "x"}]')
    put("table.xlsx", "x")
    pl.DataFrame({"x": [1]}).write_parquet(tmp / "wrong_cols.parquet")
    f["wrong_cols.parquet"] = str(tmp / "wrong_cols.parquet")
    pl.DataFrame({"study_id": ["s1"], "report": [[1, 2]]}).write_parquet(tmp / "report_list.parquet")
    f["report_list.parquet"] = str(tmp / "report_list.parquet")
    put("deep.jsonl", '{"study_id": "s1", "report": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    put("surrogate.jsonl", '{"study_id": "s1", "report": "a \\ud800 b"}\n')
    put("split_nocols.csv", "a,b\n1,2\n")
    os.mkfifo(tmp / "fifo.jsonl")
    f["fifo.jsonl"] = str(tmp / "fifo.jsonl")
    (tmp / "adir").mkdir()
    (tmp / "empty_dir").mkdir()
    (tmp / "a_file_as_out").write_text("x")
    f["adir"], f["empty_dir"], f["file_out"] = str(tmp / "adir"), str(tmp / "empty_dir"), str(tmp / "a_file_as_out")
    f["missing"] = str(tmp / "does_not_exist.parquet")
    f["out"] = str(tmp / "out")
    return f


def cli_cases(f: dict[str, str]) -> list[list[str]]:
    """Argument lists after `python -m srrg`."""
    good, out, missing = f["good.jsonl"], f["out"], f["missing"]

    def score(refs: str = good, hyps: str = good, metrics: str = "s_score", *extra: str) -> list[str]:
        return ["score", "--refs", refs, "--hyps", hyps, "--metrics", metrics, "--out", out, *extra]

    bad_tables = [
        "missing",
        "adir",
        "empty.jsonl",
        "empty.csv",
        "empty.json",
        "empty.parquet",
        "header_only.csv",
        "wrong_cols.csv",
        "wrong_cols.jsonl",
        "wrong_cols.parquet",
        "bad_line.jsonl",
        "garbage.parquet",
        "garbage.jsonl",
        "latin1.csv",
        "numbers.json",
        "object.json",
        "report_number.jsonl",
        "report_list.jsonl",
        "report_bool.jsonl",
        "report_list.parquet",
        "null_id.jsonl",
        "list_id.jsonl",
        "dupes.csv",
        "scalar_line.jsonl",
        "table.xlsx",
    ]
    cases = [score(refs=f.get(name, missing)) for name in bad_tables]
    cases += [
        score(hyps=f.get(name, missing))
        for name in ("missing", "adir", "empty.jsonl", "garbage.parquet", "report_number.jsonl")
    ]
    cases += [
        score(hyps=f["other_ids.jsonl"]),  # no id in common
        score(metrics="nonexistent"),
        score(metrics=""),
        score(metrics=",,"),
        score(metrics="s_score,nonexistent"),
        score(good, good, "s_score", "--config", '{"s_score":'),
        score(good, good, "s_score", "--config", "[1, 2]"),
        score(good, good, "s_score", "--config", f["missing"] + ".yaml"),
        score(good, good, "s_score", "--config", f["bad.yaml"]),
        score(good, good, "s_score", "--config", f["list.yaml"]),
        score(good, good, "s_score", "--config", f["dup.yaml"]),
        score(good, good, "s_score", "--config", '{"s_score": {"bogus_option": 1}}'),
        score(good, good, "s_score", "--config", '{"s_score": {"d_over": "nobody"}}'),
        score(good, good, "s_score", "--config", '{"nonexistent_metric": {}}'),
        score(good, good, "s_score", "--id-col", "nope"),
        score(good, good, "s_score", "--ref-col", "nope"),
        ["score", "--refs", good, "--hyps", good, "--metrics", "s_score", "--out", f["file_out"]],
        ["score", "--refs", good],
        ["score", "--bogus"],
        ["extract", "--in", missing, "--out", out + "/x.parquet"],
        ["extract", "--in", f["adir"], "--out", out + "/x.parquet"],
        ["extract", "--in", f["empty.parquet"], "--out", out + "/x.parquet"],
        ["extract", "--in", f["wrong_cols.parquet"], "--out", out + "/x.parquet"],
        ["extract", "--in", f["garbage.parquet"], "--out", out + "/x.parquet"],
        ["extract", "--in", good, "--out", out + "/x.parquet", "--config", '{"bogus": 1}'],
        ["extract", "--in", good, "--out", out + "/x.parquet", "--config", "{not json"],
        ["eval-extraction", "--archive", missing],
        ["eval-extraction", "--archive", f["archive.tgz"]],
        ["eval-extraction", "--archive", f["text.tgz"]],
        ["ingest", "--source", "bogus", "--out", out + "/s.parquet"],
        ["ingest", "--source", "iu_xray", "--out", out + "/s.parquet", "--config", "{not json"],
        [
            "ingest",
            "--source",
            "iu_xray",
            "--out",
            out + "/s.parquet",
            "--config",
            json.dumps({"iu_xray": {"archive": missing}}),
        ],
        [
            "ingest",
            "--source",
            "mimic_cxr",
            "--out",
            out + "/s.parquet",
            "--config",
            json.dumps({"mimic_cxr": {"reports": missing}}),
        ],
        ["ingest", "--source", "iu_xray", "--out", out + "/s.parquet", "--config", '{"bogus_section": {}}'],
        ["normalize", "--in", missing, "--out", out + "/n.parquet", "--phrases", out + "/p.parquet"],
        ["normalize", "--in", f["wrong_cols.parquet"], "--out", out + "/n.parquet", "--phrases", out + "/p.parquet"],
        ["normalize", "--in", f["garbage.parquet"], "--out", out + "/n.parquet", "--phrases", out + "/p.parquet"],
        [
            "normalize",
            "--in",
            good,
            "--out",
            out + "/n.parquet",
            "--phrases",
            out + "/p.parquet",
            "--config",
            '{"backend": "bogus"}',
        ],
        ["dataset", "--in", missing, "--out-dir", out + "/ds"],
        ["dataset", "--in", f["wrong_cols.parquet"], "--out-dir", out + "/ds"],
        ["dataset-shard", "--in", good, "--out-dir", out + "/ds", "trian", "0"],
        ["dataset-shard", "--in", good, "--out-dir", out + "/ds", "train", "-1"],
        ["dataset-shard", "--in", good, "--out-dir", out + "/ds", "train", "abc"],
        ["dataset-manifest", "--in", good, "--out-dir", f["empty_dir"]],
        ["dataset", "--in", good, "--out-dir", out + "/ds", "--config", '{"bogus": 1}'],
        ["stats", "--dataset", missing, "--out-dir", out + "/st"],
        ["stats", "--dataset", f["empty_dir"], "--out-dir", out + "/st"],
        ["stats", "--dataset", f["empty_dir"], "--out-dir", out + "/st", "--config", "{not json"],
        ["tables", "--runs", "{not json", "--out-dir", out + "/t"],
        ["tables", "--runs", "{}", "--out-dir", out + "/t"],
        ["tables", "--runs", f["runs.json"], "--out-dir", out + "/t"],
        ["tables", "--runs", missing + ".json", "--out-dir", out + "/t"],
        ["infer", "--model", missing, "--dataset", f["empty_dir"], "--out", out + "/p.parquet"],
        ["infer", "--model", f["model.pt"], "--dataset", f["empty_dir"], "--out", out + "/p.parquet"],
        ["train", "--dataset", missing, "--out", out + "/m.pt"],
        ["train", "--dataset", f["empty_dir"], "--out", out + "/m.pt", "--config", '{"bogus": 1}'],
        ["metaeval-correlate", "--scores", missing, "--out", out + "/c"],
        ["metaeval-correlate", "--scores", f["garbage.parquet"], "--out", out + "/c"],
        ["metaeval-correlate", "--scores", f["wrong_cols.parquet"], "--out", out + "/c", "--config", '{"bogus": 1}'],
        ["metaeval-prepare", "--adapter", "bogus", "--data", missing, "--out-dir", out + "/c"],
        ["judge-subset", "--out-dir", out + "/c"],
        ["judge-train-prepare", "--adapter", "rexval", "--data", missing, "--out-dir", out + "/j"],
        ["judge-train-compare", "--finetuned", missing, "--ratings", missing, "--out", out + "/j"],
        ["judge-train-fit", "--prepared", missing, "--out-dir", out + "/j", "--work-dir", out + "/w"],
        ["bogus-command"],
        [],
        # issue 25: deep nesting, lone surrogates, a FIFO, MIMIC CSVs without their columns
        score(refs=f["deep.jsonl"]),
        score(hyps=f["surrogate.jsonl"]),
        score(refs=f["fifo.jsonl"]),
        ["extract", "--in", f["fifo.jsonl"], "--out", out + "/x.parquet"],
        [
            "ingest",
            "--source",
            "mimic_cxr",
            "--out",
            out + "/s.parquet",
            "--config",
            json.dumps({"mimic_cxr": {"split_csv": f["split_nocols.csv"]}}),
        ],
        [
            "ingest",
            "--source",
            "mimic_cxr",
            "--out",
            out + "/s.parquet",
            "--config",
            json.dumps({"mimic_cxr": {"metadata_csv": f["split_nocols.csv"]}}),
        ],
        ["metaeval-correlate", "--scores", good, "--ratings", f["garbage.jsonl"], "--out", out + "/c"],
        # issue 25 item 7: an output that is, or holds, an input (and two outputs on one path)
        ["infer", "--model", f["model.pt"], "--dataset", f["empty_dir"], "--out", f["model.pt"]],
        [
            "infer",
            "--model",
            f["model.pt"],
            "--dataset",
            f["empty_dir"],
            "--out",
            out + "/p.parquet",
            "--pairs",
            out + "/p.parquet",
        ],
        [
            "ingest",
            "--source",
            "iu_xray",
            "--out",
            f["text.tgz"],
            "--config",
            json.dumps({"iu_xray": {"archive": f["text.tgz"]}}),
        ],
        ["extract", "--in", good, "--out", good],
        ["normalize", "--in", f["wrong_cols.parquet"], "--out", out + "/n.parquet", "--phrases", out + "/n.parquet"],
        [
            "normalize",
            "--in",
            f["wrong_cols.parquet"],
            "--out",
            f["wrong_cols.parquet"],
            "--phrases",
            out + "/p.parquet",
        ],
        score(good, good, "bleu")[:-1] + [str(Path(good).parent)],
        ["train", "--dataset", f["empty_dir"], "--out", f["empty_dir"]],
        ["stats", "--dataset", f["empty_dir"], "--out-dir", f["empty_dir"]],
        ["dataset", "--in", good, "--out-dir", str(Path(good).parent)],
    ]
    return cases


def _round_robin(cases: list[list[str]]) -> list[list[str]]:
    """Cases reordered one command at a time, so a time budget that runs out skips cases of every
    command alike instead of whole commands."""
    groups: dict[str, list[list[str]]] = {}
    for args in cases:
        groups.setdefault(args[0] if args else "", []).append(args)
    order = []
    while any(groups.values()):
        for group in groups.values():
            if group:
                order.append(group.pop(0))
    return order


def _run_cli(args: list[str], timeout: float, deadline: float) -> tuple[str, int, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "SRRG_NO_PROGRESS": "1"}
    left = deadline - time.monotonic()
    if left < 5:
        return "skipped", -1, "time budget of the family spent"
    timeout = min(timeout, left)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "srrg", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return "timeout", -1, f"no answer in {timeout:.0f}s"
    err = proc.stderr.strip()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if "Traceback (most recent call last)" in err:
        return "traceback", proc.returncode, lines[-1] if lines else ""
    last = lines[-1] if lines else ""
    if proc.returncode == 2 and last:
        return "clean", 2, last
    out = proc.stdout.strip().splitlines()
    return "other", proc.returncode, last or (out[-1] if out else "")


def family_b(jobs: int, timeout: float, budget: float) -> dict[str, Any]:
    deadline = time.monotonic() + budget
    with tempfile.TemporaryDirectory(prefix="srrg-fuzz-cli-") as tmp:
        cases = _round_robin(cli_cases(_fixtures(Path(tmp))))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(lambda a: _run_cli(a, timeout, deadline), cases))
    counts = {k: sum(r[0] == k for r in results) for k in ("clean", "traceback", "other", "timeout", "skipped")}
    failures = [
        f"{kind} (exit {rc}): python -m srrg {' '.join(_quote(a) for a in args)}\n      -> {msg[:200]}"
        for args, (kind, rc, msg) in zip(cases, results)
        if kind != "clean"
    ]
    return {"cases": len(cases), "bad": len(failures), "counts": counts, "failures": failures}


def _quote(arg: str) -> str:
    arg = arg.replace(tempfile.gettempdir(), "$TMP")
    return arg if arg and all(c.isalnum() or c in "-_./,=$" for c in arg) else json.dumps(arg)


# --- (c) config mutations -------------------------------------------------------------------------


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(key path, value) for every mapping key in the config, depth first."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield (*prefix, key), value
            yield from _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _paths(value, (*prefix, i))


def _get_parent(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        obj = obj[key]
    return obj


def config_mutations(base: dict[str, Any], seed: int) -> list[tuple[str, str]]:
    """(description, YAML text) of configs that must not validate."""
    rng = random.Random(seed)
    paths = [p for p, _ in _paths(base)]
    by_depth: dict[int, list[tuple[Any, ...]]] = {}
    for p in paths:
        if isinstance(p[-1], str):
            by_depth.setdefault(len(p), []).append(p)
    out: list[tuple[str, str]] = []
    for _depth, group in sorted(by_depth.items()):  # key typos at every level
        for path in rng.sample(group, min(4, len(group))):
            cfg = copy.deepcopy(base)
            parent = _get_parent(cfg, path)
            typo = path[-1][:-1] + path[-1][-1] * 2 if len(path[-1]) > 1 else path[-1] + "x"
            parent[typo] = parent.pop(path[-1])
            out.append((f"typo {'.'.join(map(str, path))} -> {typo}", yaml.safe_dump(cfg, sort_keys=False)))
    leaves = [(p, v) for p, v in _paths(base) if isinstance(p[-1], str) and not isinstance(v, (dict, list))]
    for path, value in rng.sample(leaves, min(16, len(leaves))):  # wrong value types
        cfg = copy.deepcopy(base)
        wrong: Any = {"unexpected": [1, 2]} if not isinstance(value, str) or rng.random() < 0.5 else [value]
        if isinstance(value, bool):
            wrong = "maybe"
        elif isinstance(value, (int, float)):
            wrong = rng.choice(["twelve", {"n": value}])
        _get_parent(cfg, path)[path[-1]] = wrong
        out.append((f"type {'.'.join(map(str, path))}: {value!r} -> {wrong!r}", yaml.safe_dump(cfg, sort_keys=False)))
    text = yaml.safe_dump(base, sort_keys=False)
    for section in [k for k, v in base.items() if isinstance(v, dict)][:4]:  # duplicate top-level sections
        out.append((f"duplicate section {section}", text + yaml.safe_dump({section: base[section]}, sort_keys=False)))
    nested = [p for p in by_depth.get(2, []) if not isinstance(base[p[0]][p[1]], (dict, list))]
    for path in rng.sample(nested, min(3, len(nested))):  # duplicate nested key
        dup = text.replace(f"\n  {path[1]}:", f"\n  {path[1]}: {json.dumps(base[path[0]][path[1]])}\n  {path[1]}:", 1)
        out.append((f"duplicate key {path[0]}.{path[1]}", dup))
    return out


def family_c(seed: int, snakemake_cases: int, timeout: float) -> dict[str, Any]:
    from srrg import config as srrg_config

    base = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    cases = config_mutations(base, seed)
    passed: list[str] = []
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="srrg-fuzz-cfg-") as tmp:
        for i, (desc, text) in enumerate(cases):
            path = Path(tmp) / f"m{i}.yaml"
            path.write_text(text, encoding="utf-8")
            try:
                srrg_config.load_config(path)
                passed.append(f"passes validation: {desc}")
            except (ValueError, srrg_config.ConfigError):
                pass
            except Exception as err:  # noqa: BLE001
                errors.append(f"{type(err).__name__} (not a config error): {desc}: {err}")
        passed_first = sorted(
            cases, key=lambda c: f"passes validation: {c[0]}" not in passed
        )  # does snakemake catch them?
        snake = _snakemake_dry_runs(passed_first, Path(tmp), snakemake_cases, timeout)
    return {"cases": len(cases), "bad": len(passed) + len(errors), "failures": passed + errors, "snakemake": snake}


def semantic_mistakes() -> list[tuple[str, dict[str, Any]]]:
    """(description, config overrides) that the schema accepts and the workflow check must refuse
    (issue 25 items 4 and 5 and its config Lows)."""
    openai = {"backend": "openai", "model": "m", "base_url": "https://api.example.com/v1"}
    run = {
        "name": "r",
        "label": "R",
        "arch": "baseline",
        "target": "json",
        "overrides": {"model": {"max_target_tokens": 128}},
    }
    return [
        ("normalize on a remote endpoint without allow_remote", {"normalize": {"method": "llm"}, "llm": openai}),
        ("judges on a remote endpoint without allow_remote", {"judge": {"llm": openai}}),
        ("judges on the rules backend", {"judge": {"llm": {"backend": "rules"}}}),
        ("openai backend without a model", {"llm": {"backend": "openai"}}),
        ("malformed base_url", {"llm": {**openai, "base_url": "http//localhost:8000"}}),
        ("base_url port out of range", {"llm": {**openai, "base_url": "http://localhost:99999/v1"}}),
        ("normalize.method llm on llm.backend rules", {"normalize": {"method": "llm"}}),
        ("uninstalled extract.spacy_model", {"extract": {"spacy_model": "en_core_no_such_model_sm"}}),
        ("negative optim.lr", {"train": {"optim": {"lr": -1e-3}}}),
        ("num_return_sequences > num_beams", {"infer": {"num_beams": 2, "num_return_sequences": 3}}),
        ("empty score.metrics", {"score": {"metrics": []}}),
        (
            "infer.max_new_tokens below a run's max_target_tokens",
            {"train": {"runs": [run]}, "infer": {"max_new_tokens": 64}},
        ),
        ("results_dir empty", {"results_dir": ""}),
        ("results_dir an existing file", {"results_dir": str(ROOT / "config.yaml")}),
        ("stats.dpi 100000", {"stats": {"dpi": 100000}}),
    ]


def family_c_semantic() -> dict[str, Any]:
    from srrg.config import ConfigError
    from srrg.config_tree import check_workflow_config

    base = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    failures = []
    check_workflow_config(base)  # the control: the embedded default passes
    for desc, override in semantic_mistakes():
        try:
            check_workflow_config({**base, **override})
            failures.append(f"workflow check accepts: {desc}")
        except ConfigError:
            pass
        except Exception as err:  # noqa: BLE001
            failures.append(f"{type(err).__name__} (not a config error): {desc}: {err}")
    return {"cases": len(semantic_mistakes()), "bad": len(failures), "failures": failures}


# --- (d) hostile endpoints ------------------------------------------------------------------------


def family_d(tmp: Path) -> dict[str, Any]:
    """Hostile loopback endpoints against the LLM client and the normalize stage (issue 25)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from openai_stub import Delay, Malformed, OpenAIStub, Reply, Status
    from test_llm_hostile import TricklingServer

    from srrg.llm import LLMClient, PromptTemplate
    from srrg.settings.llm import LLMConfig

    echo = PromptTemplate("echo", "1", (("user", "{phrase}"),), ("phrase",))
    failures: list[str] = []
    cases = 0

    def client(url: str, name: str, **over: Any) -> LLMClient:
        cfg = {
            "backend": "openai",
            "model": "m",
            "base_url": url,
            "cache_dir": str(tmp / name),
            "timeout_s": 2.0,
            "max_retries": 1,
            "retry_base_delay_s": 0.01,
            "retry_max_delay_s": 0.05,
            **over,
        }
        return LLMClient(LLMConfig.from_dict(cfg))

    def case(name: str, make: Callable[[], Any], requests: int, bound_s: float, **over: Any) -> None:
        nonlocal cases
        cases += 1
        with make() as server:
            c = client(server.base_url, name, **over)
            t0 = time.monotonic()
            try:
                answers = c.complete([echo.render("x", phrase=f"p{i}") for i in range(requests)], progress=False)
            except Exception as err:  # noqa: BLE001
                failures.append(f"{name}: the client raised {type(err).__name__}: {err}")
                return
            wall = time.monotonic() - t0
        if wall > bound_s:
            failures.append(f"{name}: {wall:.1f}s, bound {bound_s:.0f}s")
        if any(a.ok for a in answers) or len(c.cache):
            failures.append(f"{name}: {sum(a.ok for a in answers)} answers ok, {len(c.cache)} cached")

    class _Trickle:
        def __enter__(self) -> Any:
            self.server = TricklingServer(every=0.2)
            return self.server

        def __exit__(self, *exc: object) -> None:
            self.server.close()

    case("trickling answer", _Trickle, 1, 5.0, max_retries=0)
    case(
        "100 MB answer", lambda: OpenAIStub(lambda body: Reply("x" * 100_000_000)), 1, 30.0, max_answer_bytes=1_000_000
    )
    case("body nested 100,000 deep", lambda: OpenAIStub(lambda body: Malformed("[" * 100_000 + "]" * 100_000)), 1, 10.0)
    case(
        "stage outlasting stage_timeout_s",
        lambda: OpenAIStub(lambda body: Delay(5.0, Status(500))),
        6,
        6.0,
        stage_timeout_s=1.0,
        concurrency=2,
    )
    cases += 1  # the normalize stage with every request failing: exit 1 unless allow_fallback
    table = tmp / "extracted.parquet"
    import polars as pl

    loc = {"positive": [{"name": "opacity", "probability": 3, "level": None, "location": "left base"}], "negative": []}
    pl.DataFrame({"study_id": ["s1"], "structured": [json.dumps(loc)]}).write_parquet(table)
    with OpenAIStub(lambda body: Status(500)) as stub:
        llm = {
            "backend": "openai",
            "model": "m",
            "base_url": stub.base_url,
            "cache_dir": str(tmp / "n"),
            "max_retries": 0,
        }
        for allow, want in ((False, 1), (True, 0)):
            cfg = json.dumps({"method": "llm", "allow_fallback": allow, "llm": llm})
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "srrg",
                    "normalize",
                    "--in",
                    str(table),
                    "--out",
                    str(tmp / f"n{allow}.parquet"),
                    "--phrases",
                    str(tmp / f"p{allow}.parquet"),
                    "--config",
                    cfg,
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if proc.returncode != want:
                failures.append(
                    f"normalize, endpoint down, allow_fallback {allow}: exit {proc.returncode}, expected {want}"
                )
    return {"cases": cases, "bad": len(failures), "failures": failures}


def _snakemake_dry_runs(cases: list[tuple[str, str]], tmp: Path, n: int, timeout: float) -> dict[str, Any]:
    """The first n - 1 mutations (and a duplicated section) through `snakemake -n` in a temporary
    copy of the workflow, after a control run: the unmutated config.yaml must be accepted there,
    or a refusal would prove nothing."""
    exe = Path(sys.executable).with_name("snakemake")
    if n <= 0 or not exe.exists():
        return {"cases": 0, "bad": 0, "failures": []}
    work = tmp / "wf"
    work.mkdir()
    shutil.copy(ROOT / "Snakefile", work / "Snakefile")
    shutil.copytree(ROOT / "workflow", work / "workflow")
    (work / "src").symlink_to(ROOT / "src")  # rules derive their code inputs from the package
    picks = [c for c in cases if c[0].startswith("duplicate section")][:1] + cases[: n - 1]
    base = (ROOT / "config.yaml").read_text(encoding="utf-8")
    failures = []
    for i, (desc, text) in enumerate([("control: config.yaml unchanged", base), *picks]):
        cfg = work / f"mut{i}.yaml"
        cfg.write_text(text, encoding="utf-8")
        shutil.copy(cfg, work / "config.yaml")  # the Snakefile's own configfile: must not hide the mutation
        try:
            proc = subprocess.run(
                [str(exe), "-n", "-q", "--cores", "1", "--configfile", str(cfg), "-d", str(work)],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            failures.append(f"snakemake -n timed out: {desc}")
            continue
        if i == 0 and proc.returncode != 0:
            last = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:] or ["?"]
            return {
                "cases": 0,
                "bad": 0,
                "failures": [f"snakemake -n control run failed, dry runs skipped: {last[0][:200]}"],
            }
        if i > 0 and proc.returncode == 0:
            failures.append(f"snakemake -n accepts: {desc}")
    return {"cases": len(picks), "bad": len(failures), "failures": failures}


# --- report ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default="abcd", help="which families to run (a, b, c, d)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--outputs", type=int, default=10_000, help="fuzzed model outputs in (a)")
    parser.add_argument("--jobs", type=int, default=2, help="concurrent CLI subprocesses in (b)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per CLI case / snakemake run")
    parser.add_argument(
        "--budget", type=float, default=120.0, help="seconds for all of (b); cases left then are counted as skipped"
    )
    parser.add_argument("--snakemake", type=int, default=4, help="config mutations also run through snakemake -n")
    args = parser.parse_args()

    rows = []
    if "a" in args.families:
        start = time.perf_counter()
        res = family_a(args.seed, args.outputs)
        rows.append(
            (
                "a model outputs",
                res,
                time.perf_counter() - start,
                ", ".join(f"{k} {v:.1f}" + ("" if "MiB" in k else "s") for k, v in res["timings"].items()),
            )
        )
    if "b" in args.families:
        start = time.perf_counter()
        res = family_b(args.jobs, args.timeout, args.budget)
        rows.append(
            (
                "b bad CLI inputs",
                res,
                time.perf_counter() - start,
                ", ".join(f"{k} {v}" for k, v in res["counts"].items()),
            )
        )
    if "c" in args.families:
        start = time.perf_counter()
        res = family_c(args.seed, args.snakemake, args.timeout)
        sn = res["snakemake"]
        rows.append(
            (
                "c config mutations",
                res,
                time.perf_counter() - start,
                f"snakemake -n: {sn['cases']} run, {sn['bad']} accepted",
            )
        )
        res["failures"] += sn["failures"]
        start = time.perf_counter()
        res = family_c_semantic()
        rows.append(("c2 config mistakes", res, time.perf_counter() - start, "through check_workflow_config"))
    if "d" in args.families:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="srrg-fuzz-llm-") as tmp:
            res = family_d(Path(tmp))
        rows.append(("d hostile endpoints", res, time.perf_counter() - start, "loopback servers"))

    print(f"{'family':<20} {'cases':>6} {'bad':>5} {'wall s':>7}  detail")
    for name, res, wall, detail in rows:
        print(f"{name:<20} {res['cases']:>6} {res['bad']:>5} {wall:>7.1f}  {detail}")
    for name, res, _, _ in rows:
        if res["failures"]:
            print(f"\n{name}: {len(res['failures'])} case(s) that did not end well")
            for line in res["failures"]:
                print(f"  {line}")


if __name__ == "__main__":
    main()
