"""Careless and hostile inputs of issue 16 (and the .txt inputs of issue 15): each test fails on the
code before the fix. Input formats and cache bounds are documented in docs/inputs.md."""

from __future__ import annotations

import json
import os
import stat
import tracemalloc

import polars as pl
import pytest

from srrg import report
from srrg.errors import UserError
from srrg.io import write_parquet, write_text
from srrg.metrics.score import load_reports, run_score

REPORT = {
    "positive": [
        {"name": "pleural effusion", "probability": 3, "level": "small", "location": "in the right costophrenic angle"}
    ],
    "negative": ["pneumothorax"],
}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def umask():
    """Set a umask for one test and restore the previous one."""
    previous = os.umask(0o022)
    os.umask(previous)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


# issue 16 case 2: a report stored as a JSON object was cast to text with its keys dropped, parsed as
# empty, and scored 0.250 against the same report given as a string.
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_structured_object_reports_score_like_their_json_text(tmp_path, fmt):
    refs = _jsonl(tmp_path / "refs.jsonl", [{"study_id": "s1", "report": json.dumps(REPORT)}])
    if fmt == "jsonl":
        hyps = _jsonl(tmp_path / "hyps.jsonl", [{"study_id": "s1", "report": REPORT}])
    else:
        hyps = tmp_path / "hyps.parquet"
        pl.DataFrame({"study_id": ["s1"], "report": [REPORT]}).write_parquet(hyps)
    summary = run_score(refs, hyps, ["s_score"], tmp_path / "out")
    assert summary["n_pairs"] == 1
    assert summary["s_score"] == 1.0  # identical reports
    assert json.loads(load_reports(hyps, "study_id", "report")["report"][0]) == REPORT  # no key dropped


# issue 16 case 2: anything but a string, an object or null is refused, naming the file, row and id.
@pytest.mark.parametrize("value, kind", [(5, "a number"), (["a", "b"], "a list"), (True, "a boolean")])
def test_report_of_another_type_is_a_user_error(tmp_path, value, kind):
    path = _jsonl(tmp_path / "hyps.jsonl", [{"study_id": "a", "report": "x"}, {"study_id": "b", "report": value}])
    with pytest.raises(UserError) as err:
        load_reports(path, "study_id", "report")
    message = str(err.value)
    assert str(path) in message and "line 2" in message and "'b'" in message and kind in message
    assert "allowed: a string, a structured-report object or null" in message


# issue 16 case 3: CSV ids were type-guessed: 007 became 7 and no longer matched "007" from JSONL.
def test_csv_ids_are_text_and_match_jsonl_ids(tmp_path):
    refs = tmp_path / "refs.csv"
    refs.write_text('study_id,report\n007,"' + json.dumps(REPORT).replace('"', '""') + '"\n', encoding="utf-8")
    hyps = _jsonl(tmp_path / "hyps.jsonl", [{"study_id": "007", "report": json.dumps(REPORT)}])
    summary = run_score(refs, hyps, ["s_score"], tmp_path / "out")
    assert (summary["n_pairs"], summary["n_unmatched"], summary["s_score"]) == (1, 0, 1.0)


# issue 16 case 3: 1e3 and 1000 are two different ids, not duplicates of the number 1000.
def test_csv_ids_that_look_like_the_same_number_stay_distinct(tmp_path):
    path = tmp_path / "refs.csv"
    path.write_text("study_id,report\n1e3,a\n1000,b\n0012,c\n", encoding="utf-8")
    assert load_reports(path, "study_id", "report")["study_id"].to_list() == ["1e3", "1000", "0012"]


# issue 16 case 7: outputs were written 0600 whatever the umask (temp file + rename).
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_respect_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    write_text(tmp_path / "summary.csv", "a\n1\n")
    write_parquet(pl.DataFrame({"a": [1]}), tmp_path / "per_report.parquet")
    assert stat.S_IMODE(os.stat(tmp_path / "summary.csv").st_mode) == mode
    assert stat.S_IMODE(os.stat(tmp_path / "per_report.parquet").st_mode) == mode


# issue 16 case 8: parse caches grew without bound (+859 MiB after 300 distinct 1 MB outputs).
def test_parse_cache_holds_at_most_its_documented_number_of_reports():
    report._parse_default.cache_clear()
    for i in range(report.PARSE_CACHE_SIZE + 200):
        report.parse_report(json.dumps({"positive": [], "negative": [f"finding {i}"]}))
    assert report._parse_default.cache_info().currsize == report.PARSE_CACHE_SIZE
    # LRU: the most recent report is still cached, the first one was evicted
    hits = report._parse_default.cache_info().hits
    report.parse_report(json.dumps({"positive": [], "negative": [f"finding {report.PARSE_CACHE_SIZE + 199}"]}))
    assert report._parse_default.cache_info().hits == hits + 1


# issue 16 case 8: long distinct outputs (and long names inside them) are parsed but never kept.
def test_long_outputs_do_not_grow_the_caches():
    long_name = "opacity " * 2000  # 16,000 characters, far above the phrase cap
    outputs = [
        json.dumps(
            {
                "positive": [{"name": f"{long_name}{i}", "probability": 3, "level": None, "location": long_name}],
                "negative": [],
            }
        )
        + " " * (200_000 + i)
        for i in range(20)
    ]
    before = (report._parse_default.cache_info().currsize, report._default_canonical.cache_info().currsize)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for i, text in enumerate(outputs):
        parsed, status = report.parse_report(text)
        assert status == report.REPAIRED and parsed.positive[0].name == " ".join(["opacity"] * 2000 + [str(i)])
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert (report._parse_default.cache_info().currsize, report._default_canonical.cache_info().currsize) == before
    assert grown < 1_000_000  # the 20 outputs hold ~4.3 MB of text; caching them would keep it


# issue 15: plain line-aligned .txt references and hypotheses, one report per line, ids = line numbers.
def test_txt_reports_are_line_aligned(tmp_path):
    empty = json.dumps({"positive": [], "negative": []})
    refs = tmp_path / "refs.txt"
    hyps = tmp_path / "hyps.txt"
    refs.write_text(f"{json.dumps(REPORT)}\n{empty}\n{json.dumps(REPORT)}\n", encoding="utf-8")
    hyps.write_text(f"{json.dumps(REPORT)}\r\n{empty}\r\n", encoding="utf-8")  # CRLF, one line short
    assert load_reports(hyps, "study_id", "report").to_dicts() == [
        {"study_id": "1", "report": json.dumps(REPORT)},
        {"study_id": "2", "report": empty},
    ]
    summary = run_score(refs, hyps, ["s_score"], tmp_path / "out")
    assert (summary["n_pairs"], summary["n_unmatched"]) == (2, 1)
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    assert per["study_id"].to_list() == ["1", "2"] and per["s_score"].to_list() == [1.0, 1.0]


# ---- issue 25: careless input and slow or hostile endpoints ------------------------------------


def _extracted(tmp_path):
    """An extracted.parquet with two location phrases (the normalize stage's input)."""
    finding = lambda loc: {"name": "opacity", "probability": 3, "level": None, "location": loc}  # noqa: E731
    path = tmp_path / "extracted.parquet"
    pl.DataFrame(
        {
            "study_id": ["s1", "s2"],
            "structured": [
                json.dumps({"positive": [finding("left base")], "negative": []}),
                json.dumps({"positive": [finding("rll")], "negative": []}),
            ],
        }
    ).write_parquet(path)
    return path


def test_normalize_llm_fails_when_its_requests_failed(tmp_path, capsys):
    """issue 25 item 1: method llm exited 0 with every request failed (all phrases rules-normalized);
    now exit 1 and nothing written, unless normalize.allow_fallback opts in."""
    from openai_stub import OpenAIStub, Status

    from srrg.cli import main

    inp = _extracted(tmp_path)
    with OpenAIStub(responder=lambda body: Status(500)) as stub:
        llm = {
            "backend": "openai",
            "model": "m",
            "base_url": stub.base_url,
            "cache_dir": str(tmp_path / "c"),
            "max_retries": 0,
            "timeout_s": 60,  # wide: the stub's 500 must arrive, however loaded the machine
        }
        args = [
            "normalize",
            "--in",
            str(inp),
            "--out",
            str(tmp_path / "n.parquet"),
            "--phrases",
            str(tmp_path / "p.parquet"),
        ]
        rc = main([*args, "--config", json.dumps({"method": "llm", "llm": llm})])
        err = capsys.readouterr().err
        assert rc == 1 and "2 of 2 phrase requests" in err and "allow_fallback" in err
        assert not (tmp_path / "n.parquet").exists() and not (tmp_path / "p.parquet").exists()
        rc = main([*args, "--config", json.dumps({"method": "llm", "allow_fallback": True, "llm": llm})])
        assert rc == 0 and set(pl.read_parquet(tmp_path / "p.parquet")["path"]) == {"rules"}


def _cases_output_is_input(tmp_path):
    """(argv, the option named in the error) of commands whose output is, or holds, an input."""
    data = tmp_path / "data"
    data.mkdir()
    model = data / "model.pt"
    model.write_bytes(b"weights")
    (data / "dataset").mkdir()
    table = data / "extracted.parquet"
    pl.DataFrame(
        {"study_id": ["1"], "structured": [None]}, schema={"study_id": pl.String, "structured": pl.String}
    ).write_parquet(table)
    archive = data / "NLMCXR_reports.tgz"
    archive.write_bytes(b"archive")
    refs = data / "refs.jsonl"
    _jsonl(refs, [{"study_id": "1", "report": "a"}])
    ds = str(data / "dataset")
    return [
        (["infer", "--model", str(model), "--dataset", ds, "--out", str(model)], "--out"),
        (
            [
                "infer",
                "--model",
                str(model),
                "--dataset",
                ds,
                "--out",
                str(data / "p.parquet"),
                "--pairs",
                str(data / "p.parquet"),
            ],
            "--pairs",
        ),
        (["ingest", "--config", json.dumps({"iu_xray": {"archive": str(archive)}}), "--out", str(archive)], "--out"),
        (
            ["normalize", "--in", str(table), "--out", str(data / "n.parquet"), "--phrases", str(data / "n.parquet")],
            "--phrases",
        ),
        (["normalize", "--in", str(table), "--out", str(table), "--phrases", str(data / "ph.parquet")], "--out"),
        (["extract", "--in", str(table), "--out", str(table)], "--out"),
        (["score", "--refs", str(refs), "--hyps", str(refs), "--metrics", "bleu", "--out", str(data)], "--out"),
        (["train", "--dataset", ds, "--out", ds], "--out"),
    ]


def test_an_output_that_is_or_holds_an_input_is_refused(tmp_path, capsys):
    """issue 25 item 7: `infer --out <model.pt>` replaced the trained model, `ingest --out <archive>`
    the archive, `score --out` wrote around its own --refs ...; each exited 0."""
    from srrg.cli import main

    for argv, option in _cases_output_is_input(tmp_path):
        before = {p: p.read_bytes() for p in (tmp_path / "data").iterdir() if p.is_file()}
        rc = main(argv)
        err = capsys.readouterr().err.strip()
        assert rc == 2, (argv, err)
        assert err.count("\n") == 0 and f"error: {option} " in err and ("input" in err or "also" in err), err
        assert {p: p.read_bytes() for p in (tmp_path / "data").iterdir() if p.is_file()} == before, argv


def test_output_of_the_wrong_kind_is_one_line(tmp_path, capsys):
    """issue 25 (Low): `--out` naming an existing file where a folder is written (and the reverse)."""
    from srrg.cli import main

    refs = _jsonl(tmp_path / "refs.jsonl", [{"study_id": "1", "report": "a"}])
    taken = tmp_path / "taken.txt"
    taken.write_text("keep")
    assert main(["score", "--refs", str(refs), "--hyps", str(refs), "--metrics", "bleu", "--out", str(taken)]) == 2
    assert "is a file, expected a folder" in capsys.readouterr().err and taken.read_text() == "keep"
    (tmp_path / "folder").mkdir()
    assert main(["extract", "--in", str(refs), "--out", str(tmp_path / "folder")]) == 2
    assert "is a folder, expected a file" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_deeply_nested_json_input_is_one_line(tmp_path, capsys, fmt):
    """issue 25 (Low): a report nested 100,000 deep raised RecursionError out of srrg score."""
    from srrg.cli import main

    deep = "[" * 100_000 + "]" * 100_000
    hyps = tmp_path / f"hyps.{fmt}"
    body = f'{{"study_id": "1", "report": {deep}}}'
    hyps.write_text(body + "\n" if fmt == "jsonl" else f"[{body}]")
    refs = _jsonl(tmp_path / "refs.jsonl", [{"study_id": "1", "report": "a"}])
    rc = main(["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "bleu", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "nests deeper" in err and str(hyps) in err and "\n" not in err


@pytest.mark.parametrize("reader", ["reports", "table"])
def test_lone_surrogate_in_jsonl_is_one_line_naming_the_line(tmp_path, reader):
    """issue 25 (Low): "\\ud800" in JSONL gave a UnicodeEncodeError traceback when the reports were
    written (and polars' own reader turned it into a NUL); a surrogate pair stays one character."""
    from srrg.io import read_reports, read_table

    path = tmp_path / "r.jsonl"
    path.write_text('{"study_id": "1", "report": "ok \\ud83e\\udec1"}\n{"study_id": "2", "report": "bad \\ud800 x"}\n')
    read = read_reports if reader == "reports" else read_table
    with pytest.raises(UserError, match=r"r\.jsonl: line 2 holds a lone surrogate escape \(\\ud800\)"):
        read(path)
    path.write_text('{"study_id": "1", "report": "ok \\ud83e\\udec1"}\n')
    assert read(path)["report"].to_list() == ["ok \U0001fac1"]


def test_fifo_input_is_refused_not_waited_on(tmp_path):
    """issue 25 (Low): a FIFO given as --refs blocked the command forever."""
    import subprocess
    import sys

    fifo = tmp_path / "refs.jsonl"
    os.mkfifo(fifo)
    hyps = _jsonl(tmp_path / "hyps.jsonl", [{"study_id": "1", "report": "a"}])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srrg",
            "score",
            "--refs",
            str(fifo),
            "--hyps",
            str(hyps),
            "--metrics",
            "bleu",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 2 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr


def test_metaeval_correlate_reads_its_tables_by_extension(tmp_path, capsys):
    """issue 25 (Low): --ratings and --pairs given as JSONL were read as Parquet (a polars
    traceback); every table option reads by extension, like --scores."""
    from metaeval_helpers import radpref_prepared

    from srrg.cli import main

    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "refs.parquet")["study_id"].to_list()
    pl.DataFrame({"study_id": ids, "m": [0.1 * i for i in range(len(ids))]}).write_ndjson(tmp_path / "s.jsonl")
    for name in ("ratings", "pairs"):
        pl.read_parquet(prep / f"{name}.parquet").write_ndjson(tmp_path / f"{name}.jsonl")
    common = ["metaeval-correlate", "--scores", str(tmp_path / "s.jsonl"), "--config", '{"n_boot": 10}']
    assert (
        main(
            [
                *common,
                "--ratings",
                str(prep / "ratings.parquet"),
                "--pairs",
                str(prep / "pairs.parquet"),
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                *common,
                "--ratings",
                str(tmp_path / "ratings.jsonl"),
                "--pairs",
                str(tmp_path / "pairs.jsonl"),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert (tmp_path / "a" / "correlations.csv").read_text() == (tmp_path / "b" / "correlations.csv").read_text()
    (tmp_path / "bad.jsonl").write_text("not json\n")
    capsys.readouterr()
    assert main([*common, "--ratings", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "c")]) == 2
    assert "bad.jsonl" in capsys.readouterr().err


def test_full_disk_is_one_line_naming_the_output_and_keeps_the_old_one(tmp_path, monkeypatch):
    """issue 25 (Low): a full disk gave a polars ComputeError traceback. (Simulated: the tests
    cannot mount a small file system; the messages are those polars and Python give for ENOSPC.)"""
    import errno

    out = tmp_path / "t.parquet"
    write_parquet(pl.DataFrame({"a": [1]}), out)
    before = out.read_bytes()

    def full(self, *args, **kwargs):
        raise pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    with pytest.raises(UserError, match=rf"{out}: cannot be written .*No space left on device"):
        write_parquet(pl.DataFrame({"a": [2]}), out)
    assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["t.parquet"]  # no temp file left

    def full_text(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(type(tmp_path), "write_text", full_text)
    with pytest.raises(UserError, match=r"s\.json: cannot be written \(No space left on device\)"):
        write_text(tmp_path / "s.json", "{}")


def test_truncated_archive_is_one_line_naming_it(tmp_path, capsys):
    """issue 25 (Low): a cut-off NLMCXR_reports.tgz raised EOFError out of ingest."""
    from archive_helpers import truncated_iu_archive

    from srrg.cli import main

    cut = truncated_iu_archive(tmp_path)
    rc = main(
        [
            "ingest",
            "--config",
            json.dumps({"iu_xray": {"archive": str(cut)}}),
            "--out",
            str(tmp_path / "s.parquet"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        rc == 2 and f"{cut}: the archive is truncated or damaged" in err[-1] and not (tmp_path / "s.parquet").exists()
    )


def test_results_dir_lock_keeps_two_working_directories_apart(tmp_path):
    """issue 25 (Low): two working directories sharing one results_dir were not locked against each
    other (Snakemake locks its working directory only)."""
    import socket

    from srrg.io import RESULTS_LOCK, lock_results, unlock_results

    results = tmp_path / "results"
    lock = lock_results(results, "/work/a")
    assert json.loads(lock.read_text())["workdir"] == "/work/a"
    with pytest.raises(UserError, match=r"in use by the workflow in /work/a .*delete .*\.srrg-workflow\.lock"):
        lock_results(results, "/work/b")
    assert lock_results(results, "/work/a") == lock  # the same working directory: Snakemake orders its runs
    unlock_results(results, "/work/b")  # not the holder: kept
    assert lock.exists()
    unlock_results(results, "/work/a")
    assert not lock.exists()
    # a holder that no longer runs on this host (a killed run) is taken over
    dead = subprocess_pid_that_exited()
    (results / RESULTS_LOCK).write_text(json.dumps({"workdir": "/work/a", "host": socket.gethostname(), "pid": dead}))
    assert json.loads(lock_results(results, "/work/b").read_text())["workdir"] == "/work/b"


def subprocess_pid_that_exited() -> int:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(proc.stdout)


@pytest.mark.slow
def test_workflow_refuses_a_results_dir_another_working_directory_holds(tmp_path):
    from workflow_helpers import copy_workflow, snakemake, write_config

    from srrg.io import RESULTS_LOCK

    work = copy_workflow(tmp_path / "wf")
    results = tmp_path / "shared-results"
    results.mkdir()
    (results / RESULTS_LOCK).write_text(json.dumps({"workdir": "/another/workdir", "host": "another-host", "pid": 1}))
    cfg = write_config(work, {"results_dir": str(results), "ingest": {"limit": 3}})
    target = str(results / "ingest" / "studies.parquet")
    assert snakemake(work, "-n", target, "--configfile", str(cfg)).returncode == 0  # a dry run takes no lock
    proc = snakemake(work, target, "--configfile", str(cfg), check=False, timeout=600)
    assert proc.returncode != 0 and "is in use by the workflow in /another/workdir" in proc.stderr + proc.stdout
    assert not (results / "ingest").exists()


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_deeply_nested_config_file_is_one_line(tmp_path, suffix):
    """issue 25 (Low): a --config file nested 100,000 deep raised RecursionError."""
    from srrg.text.decode import config_value

    path = tmp_path / f"deep{suffix}"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UserError, match=rf"deep\{suffix}: nested deeper than the .*reader allows"):
        config_value(str(path))
