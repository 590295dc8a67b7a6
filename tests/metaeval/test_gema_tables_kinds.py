"""GEMA-Score Tables 1-2 (srrg.metaeval.gema_tables), the kinds issue 53 found missing: the written
table's columns and rows checked exactly, each target's own correlations in its own columns, the
caveat, the refusal without error counts. Each test's docstring names the bug it catches."""

from __future__ import annotations

import polars as pl
import pytest
from metaeval_helpers import radpref_prepared

from srrg.errors import UserError
from srrg.metaeval.gema_tables import CSV_COLUMNS, run_metaeval_gema
from srrg.settings.metaeval import MetaevalConfig


def test_table_gema12_columns_rows_and_targets_exactly(tmp_path):
    """Bugs: a target's column filled from the other target's correlations, the metrics sorted
    instead of in the scores' order, a column named after the wrong target, the caveat lost."""
    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "pairs.parquet")["pair_id"].to_list()
    n = len(ids)
    scores = pl.DataFrame({"study_id": ids, "zz_up": [float(i) for i in range(n)],
                           "aa_mixed": [float((i * 5) % n) for i in range(n)]})  # fmt: skip
    scores.write_parquet(tmp_path / "s.parquet")
    cfg = MetaevalConfig(n_boot=0, caveat="Fixture only.")
    out = tmp_path / "g"
    results = run_metaeval_gema(str(tmp_path / "s.parquet"), str(prep / "ratings.parquet"),
                                str(prep / "pairs.parquet"), cfg, out)  # fmt: skip
    assert list(results) == ["errors_significant", "errors_insignificant"]
    assert CSV_COLUMNS == ["metric"] + [f"errors_{t}_{m}{p}" for t in ("significant", "insignificant")
                                        for m in ("kendall", "spearman") for p in ("", "_p")]  # fmt: skip
    table = pl.read_csv(out / "table_gema12.csv")
    assert table.columns == CSV_COLUMNS
    assert table["metric"].to_list() == ["Radiologists (leave-one-out)", "zz_up", "aa_mixed"]  # the ceiling first
    for target in ("errors_significant", "errors_insignificant"):
        corr = results[target].correlations
        for metric in ("zz_up", "aa_mixed"):
            for method in ("kendall", "spearman"):
                [value] = corr.filter((pl.col("metric") == metric) & (pl.col("method") == method))["value"]
                [written] = table.filter(pl.col("metric") == metric)[f"{target}_{method}"]
                assert written == pytest.approx(value, abs=5e-4, nan_ok=True), (target, metric, method)  # 3 decimals
        assert results[target].info["human_target"] != results["errors_significant" if target.endswith(
            "insignificant") else "errors_insignificant"].info["human_target"]  # fmt: skip
    md = (out / "table_gema12.md").read_text()
    assert md.startswith("Fixture only.\n\n")
    info = results["errors_significant"].info
    assert f"n = {info['n_with_human']} rated pairs, 0 bootstrap resamples of {info['resampling']}" in md
    assert (out / "table_gema12.tex").is_file()


def test_a_rating_set_without_error_counts_is_refused(tmp_path):
    """Bug: a rating set without `kind` errors read as no human score, two empty tables written."""
    pl.DataFrame({"pair_id": ["p1"], "rater": ["r"], "kind": ["score"], "value": [1.0]}).write_parquet(
        tmp_path / "r.parquet"
    )
    with pytest.raises(UserError, match="no error counts"):
        run_metaeval_gema("s.parquet", str(tmp_path / "r.parquet"), None, MetaevalConfig(), tmp_path / "g")
    pl.DataFrame({"pair_id": ["p1"], "value": [1.0]}).write_parquet(tmp_path / "nokind.parquet")
    with pytest.raises(UserError, match="no error counts"):
        run_metaeval_gema("s.parquet", str(tmp_path / "nokind.parquet"), None, MetaevalConfig(), tmp_path / "g")
    assert not (tmp_path / "g").exists()
