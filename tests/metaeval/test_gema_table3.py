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
