"""`srrg score`: join on study id, unmatched ids reported, outputs written."""

from __future__ import annotations

import json
import subprocess
import sys

import polars as pl

from srrg.cli import main as srrg_main

REF = {
    "positive": [{"name": "atelectasis", "probability": 3, "level": "mild", "location": "in the left lung"}],
    "negative": ["pneumothorax"],
}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_cli_writes_tables_and_reports_unmatched(tmp_path, capsys):
    refs = write_jsonl(
        tmp_path / "refs.jsonl",
        [
            {"study_id": "s1", "report": json.dumps(REF)},
            {"study_id": "s2", "report": json.dumps({"positive": [], "negative": []})},
            {"study_id": "s3", "report": json.dumps(REF)},
        ],
    )
    hyps = pl.DataFrame({"study_id": ["s2", "s1", "s9"], "report": [None, json.dumps(REF), "oops"]})
    hyps.write_parquet(tmp_path / "hyps.parquet")
    out = tmp_path / "scores"
    assert (
        srrg_main(
            [
                "score",
                "--refs",
                str(refs),
                "--hyps",
                str(tmp_path / "hyps.parquet"),
                "--metrics",
                "s_score,bleu,rouge_l",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "2 pairs scored, 2 unmatched ids" in capsys.readouterr().out

    per = pl.read_parquet(out / "per_report.parquet")
    assert per["study_id"].to_list() == ["s1", "s2"]  # reference order
    # s2: a null hypothesis is the empty report, as is the reference: both sets empty -> P = D = 1
    assert per["s_score"].to_list() == [1.0, 1.0]
    unmatched = pl.read_csv(out / "unmatched.csv")
    assert sorted(zip(unmatched["study_id"].cast(pl.String), unmatched["side"])) == [
        ("s3", "reference"),
        ("s9", "hypothesis"),
    ]
    summary = pl.read_csv(out / "summary.csv")
    assert summary.height == 1 and summary["n_pairs"][0] == 2 and summary["n_unmatched"][0] == 2
    assert {"s_score", "p_score", "d_score", "bleu_1", "bleu_4", "rouge_l"} <= set(summary.columns)
    md = (out / "summary.md").read_text().splitlines()
    assert md[0].startswith("| n_pairs | n_unmatched | s_score") and len(md) == 3


def test_score_cli_rejects_duplicates_and_missing_columns(tmp_path, capsys):
    refs = write_jsonl(tmp_path / "r.jsonl", [{"study_id": "a", "report": "x"}, {"study_id": "a", "report": "y"}])
    hyps = write_jsonl(tmp_path / "h.jsonl", [{"study_id": "a", "text": "x"}])
    assert (
        srrg_main(
            ["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "bleu", "--out", str(tmp_path / "o")]
        )
        == 2
    )
    assert "duplicate study ids" in capsys.readouterr().err
    refs = write_jsonl(tmp_path / "r.jsonl", [{"study_id": "a", "report": "x"}])
    assert (
        srrg_main(
            ["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "bleu", "--out", str(tmp_path / "o")]
        )
        == 2
    )
    assert "missing column(s) ['report']" in capsys.readouterr().err
    assert (
        srrg_main(
            [
                "score",
                "--refs",
                str(refs),
                "--hyps",
                str(hyps),
                "--hyp-col",
                "text",
                "--metrics",
                "bleu",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )


def test_score_cli_refuses_files_without_common_ids(tmp_path, capsys):
    refs = write_jsonl(tmp_path / "r.jsonl", [{"study_id": "a", "report": "x"}])
    hyps = write_jsonl(tmp_path / "h.jsonl", [{"study_id": "b", "report": "x"}, {"study_id": "c", "report": "y"}])
    assert (
        srrg_main(
            ["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "bleu", "--out", str(tmp_path / "o")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "no study_id in common" in err and str(refs) in err and str(hyps) in err and "3 ids on one side only" in err
    assert not (tmp_path / "o" / "summary.csv").exists()


def test_srrg_entry_point_lists_commands():
    out = subprocess.run([sys.executable, "-m", "srrg", "--help"], capture_output=True, text=True, check=True).stdout
    assert "score" in out
    bad = subprocess.run([sys.executable, "-m", "srrg", "no-such-command"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown command" in bad.stderr


def test_score_options_pass_the_config_door_once(tmp_path, capsys, monkeypatch):
    """--config (the options) and --section are validated together by srrg.config.stage_config as
    the score section (one validation): an option key a metric lacks, an unknown --metrics name and
    a section score.section does not allow are one line each, exit 2, before any scoring; valid
    options reach the metric (its signature says so)."""
    import srrg.config as C

    refs = write_jsonl(tmp_path / "refs.jsonl", [{"study_id": "s1", "report": "clear lungs"}])
    base = ["score", "--refs", str(refs), "--hyps", str(refs), "--out", str(tmp_path / "o")]
    assert srrg_main([*base, "--metrics", "bleu", "--config", '{"bleu": {"tokenisation": "ptb"}}']) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.endswith("unknown key score.options.bleu.tokenisation (allowed in score.options.bleu: tokenization)")
    assert srrg_main([*base, "--metrics", "bleu,blue"]) == 2
    assert "--metrics: unknown metric(s) blue;" in capsys.readouterr().err
    assert srrg_main([*base, "--metrics", "bleu", "--section", "finding"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "score.section" in err and "'findings', 'impression', 'both'" in err
    calls = []
    real = C.validate
    monkeypatch.setattr(C, "validate", lambda *a, **k: calls.append(k.get("root")) or real(*a, **k))
    assert srrg_main([*base, "--metrics", "bleu", "--config", '{"bleu": {"tokenization": "ptb"}}']) == 0
    assert calls == ["score"]
    assert "bleu|tok:ptb" in (tmp_path / "o" / "signatures.csv").read_text()
