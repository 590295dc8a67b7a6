"""GEMA-Score Table 3 (`srrg metaeval-gema3`, rule metaeval_gema3): every other metric of a rating
set correlated with GEMA as the column, from the scores alone, checked against scipy."""

from __future__ import annotations

import polars as pl
import pytest
from scipy import stats

from srrg.cli import main as srrg_main

GEMA = [0.1, 0.5, 0.3, 0.2, 0.9, 0.15, 0.4, 0.35]
BLEU = [0.2, 0.4, 0.3, 0.1, 0.8, 0.25, 0.5, 0.3]
ROUGE = [0.6, 0.2, 0.5, 0.4, 0.8, 0.1, 0.2, 0.7]


def test_every_other_metric_against_gema(tmp_path, capsys):
    """Bugs caught: GEMA correlated with itself (a row of 1.0), a metric against the human score
    instead of GEMA, Kendall not Kendall tau-b."""
    scores = tmp_path / "per_report.parquet"
    ids = [f"c{i // 2}:C{i % 2 + 1}" for i in range(8)]
    pl.DataFrame({"study_id": ids, "bleu_1": BLEU, "rouge_l": ROUGE, "gema": GEMA}).write_parquet(scores)
    cfg = '{"human_column": "gema", "n_boot": 0}'
    assert srrg_main(["metaeval-gema3", "--scores", str(scores), "--out", str(tmp_path / "t3"), "--config", cfg]) == 0
    corr = pl.read_csv(tmp_path / "t3" / "correlations.csv")
    assert "gema" not in set(corr["metric"])
    for name, values in (("bleu_1", BLEU), ("rouge_l", ROUGE)):
        got = corr.filter((pl.col("metric") == name) & (pl.col("method") == "kendall"))["value"].item()
        assert got == pytest.approx(stats.kendalltau(values, GEMA).statistic, abs=1e-12)
    assert "| rouge_l |" in (tmp_path / "t3" / "table_gema.md").read_text()


def test_report_prf_by_hand():
    """Bugs caught: precision and recall swapped, an empty side dividing by zero, two reports
    without any positive label not counted as agreeing."""
    from srrg.metaeval.gema3 import report_prf

    assert report_prf(1, 3, 0) == (0.25, 1.0, pytest.approx(0.4))
    assert report_prf(0, 0, 2) == (0.0, 0.0, 0.0) and report_prf(0, 2, 0) == (0.0, 0.0, 0.0)
    assert report_prf(0, 0, 0) == (1.0, 1.0, 1.0)


LABELS = {  # report -> its positive CheXbert labels (indices into the 14)
    "r": {0, 1, 2}, "a": {0, 1, 2}, "b": {0}, "c": {0, 1, 5, 6}, "d": set(), "e": {1, 2}, "f": {3}, "g": {0, 2},
    "h": {0, 1, 2, 3},
}  # fmt: skip
HYPS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def stub_labeler(monkeypatch):
    """CheXbert's labeler replaced: each report's labels from LABELS (the installed path without weights)."""
    from srrg.metrics import radeval as rv

    monkeypatch.setattr(rv, "installed", lambda: rv.RADEVAL_VERSION)
    monkeypatch.setattr(rv.CheXbert, "labeled", lambda self, reports: [[int(i in LABELS[r]) for i in range(14)]
                                                                       for r in reports])  # fmt: skip


def gema3(tmp_path, *extra):
    ids = [f"c{i // 2}:C{i % 2 + 1}" for i in range(8)]
    pl.DataFrame({"study_id": ids, "bleu_1": BLEU, "gema": GEMA}).write_parquet(tmp_path / "s.parquet")
    pl.DataFrame({"study_id": ids, "report": ["r"] * 8}).write_parquet(tmp_path / "refs.parquet")
    pl.DataFrame({"study_id": ids, "report": HYPS}).write_parquet(tmp_path / "hyps.parquet")
    argv = ["metaeval-gema3", "--scores", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "t3"), *extra,
            "--config", '{"human_column": "gema", "n_boot": 0}']  # fmt: skip
    assert srrg_main(argv) == 0
    return pl.read_csv(tmp_path / "t3" / "correlations.csv"), (tmp_path / "t3" / "table_gema.md").read_text()


def test_chexbert_precision_recall_f1_against_gema_where_installed(tmp_path, monkeypatch):
    """Bugs caught: CheXbert's P/R/F1 missing where the labeler is there, counted against the wrong
    side (reference r has labels 0, 1, 2), not correlated with GEMA."""
    stub_labeler(monkeypatch)
    refs, hyps = str(tmp_path / "refs.parquet"), str(tmp_path / "hyps.parquet")
    corr, md = gema3(tmp_path, "--refs", refs, "--hyps", hyps)
    # per candidate (tp, fp, fn) against {0, 1, 2}: a (3,0,0) b (1,0,2) c (2,2,1) d (0,0,3) e (2,0,1) f (0,1,3)
    # g (2,0,1) h (3,1,0)
    precision = [1, 1, 0.5, 0, 1, 0, 1, 0.75]
    recall = [1, 1 / 3, 2 / 3, 0, 2 / 3, 0, 2 / 3, 1]
    f1 = [1, 0.5, 4 / 7, 0, 0.8, 0, 0.8, 6 / 7]
    for name, values in (("chexbert_precision", precision), ("chexbert_recall", recall), ("chexbert_f1", f1)):
        got = corr.filter((pl.col("metric") == name) & (pl.col("method") == "kendall"))["value"].item()
        assert got == pytest.approx(stats.kendalltau(values, GEMA).statistic, abs=1e-12)
    assert "| chexbert_recall |" in md and "unavailable" not in md


def test_chexbert_columns_say_unavailable_without_the_extra(tmp_path, monkeypatch):
    """Bug caught: CheXbert's rows silently missing from Table 3 where the extra is not installed."""
    from srrg.metrics import radeval as rv

    monkeypatch.setattr(rv, "installed", lambda: None)
    corr, md = gema3(tmp_path, "--refs", str(tmp_path / "refs.parquet"), "--hyps", str(tmp_path / "hyps.parquet"))
    rows = corr.filter(pl.col("metric").str.starts_with("chexbert_"))
    assert rows.height == 6 and set(rows["ci_status"]) == {"unavailable"} and rows["value"].is_nan().all()
    assert "| chexbert_precision | unavailable |" in md and "the radeval extra is not installed" in md
    assert "| bleu_1 | " in md
