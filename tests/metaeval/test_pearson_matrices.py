"""Pearson beside Kendall in the inter-rater matrix (with the mean-rater row, GREEN Fig. 6) and in
the per-error-category table (GEMA-Score Tables 4-5 are Pearson), each value against scipy on the
raw RadPref fixture files read with json."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats
from test_human_ceiling import BLEU, _radpref, _raw_ratings, _raw_significant

from srrg.metaeval.ceiling import MEAN_RATER, mean_rater_rows
from srrg.metaeval.ceiling_tables import per_category_markdown, per_rater_markdown
from srrg.metaeval.run import write_result

BOOT0 = {"n_boot": 0, "seed": 0, "level": 0.95}


def test_inter_rater_pearson_and_kendall_match_scipy(tmp_path):
    """Bugs caught: the matrix Kendall only, Pearson computed on ranks, a pair of raters compared
    on pairs only one of them judged."""
    ids, res, _ = _radpref(tmp_path)
    raw = _raw_ratings()
    assert res.inter_rater["method"].unique(maintain_order=True).to_list() == ["kendall", "pearson"]
    for a in raw:
        for b in raw:
            if a == b:
                continue
            common = [p for p in ids if p in raw[a] and p in raw[b]]
            x, y = [raw[a][p] for p in common], [raw[b][p] for p in common]
            for method, want in (("pearson", stats.pearsonr(x, y)[0]), ("kendall", stats.kendalltau(x, y)[0])):
                got = res.inter_rater.filter(
                    (pl.col("rater_a") == a) & (pl.col("rater_b") == b) & (pl.col("method") == method)
                )
                assert got["value"].item() == pytest.approx(want, abs=1e-12), (a, b, method)
                assert got["n"].item() == len(common)


def test_mean_rater_row_is_each_rater_against_the_others_mean(tmp_path):
    """Bugs caught: the mean rater including the rater itself (inflated), the row and the column
    disagreeing, a pair nobody else judged counted."""
    ids, res, _ = _radpref(tmp_path)
    raw = _raw_ratings()
    for rater, own in raw.items():
        xs, ys = [], []
        for pid in ids:
            others = [r[pid] for name, r in raw.items() if name != rater and pid in r]
            if pid in own and others:
                xs.append(own[pid])
                ys.append(float(np.mean(others)))
        for method, want in (("pearson", stats.pearsonr(xs, ys)[0]), ("kendall", stats.kendalltau(xs, ys)[0])):
            m = pl.col("method") == method
            row = res.inter_rater.filter(m & (pl.col("rater_a") == rater) & (pl.col("rater_b") == MEAN_RATER))
            col = res.inter_rater.filter(m & (pl.col("rater_a") == MEAN_RATER) & (pl.col("rater_b") == rater))
            assert row["value"].item() == pytest.approx(want, abs=1e-12), (rater, method)
            assert col["value"].item() == row["value"].item() and row["n"].item() == len(xs)


@pytest.mark.parametrize("category", ["false_finding", "attribute_measurement"])
def test_per_category_pearson_matches_scipy(tmp_path, category):
    """Bug caught: the per-category table Kendall only, or Pearson against one rater instead of the
    raters' mean count (negated: fewer errors is better)."""
    ids, res, _ = _radpref(tmp_path)
    raw = _raw_significant(category)
    mean = [-np.mean([r[p] for r in raw.values() if p in r]) for p in ids]
    got = res.per_category.filter(
        (pl.col("metric") == "bleu_1") & (pl.col("category") == category) & (pl.col("method") == "pearson")
    )
    assert got["value"].item() == pytest.approx(stats.pearsonr(BLEU, mean)[0], abs=1e-12)


def test_written_tables_carry_both_methods(tmp_path):
    """Bug caught: the Pearson rows computed but not written (csv) or not rendered (markdown)."""
    _, res, _ = _radpref(tmp_path)
    out = tmp_path / "tables"
    write_result(res, out)
    assert set(pl.read_csv(out / "inter_rater.csv")["method"]) == {"kendall", "pearson"}
    assert set(pl.read_csv(out / "per_category.csv")["method"]) == {"kendall", "pearson"}
    raters = (out / "table_raters.md").read_text()
    assert "**Inter-rater Kendall τb**" in raters and "**Inter-rater Pearson r**" in raters
    assert f"| {MEAN_RATER} |" in raters
    categories = (out / "table_categories.md").read_text()
    assert "**Kendall τb** per error category." in categories and "**Pearson r** per error category." in categories


def test_markdown_layout_of_the_two_methods():
    """Bugs caught: a method's matrix filled from the other method's rows, the mean-rater diagonal
    given a number, a category table per method missing its ceiling-first order."""
    matrix = {"r1": np.array([1.0, 2, 3, 4]), "r2": np.array([1.0, 3, 2, 4])}
    mean_rows = mean_rater_rows(matrix, "pearson", BOOT0)
    assert [(r["rater_a"], r["rater_b"]) for r in mean_rows] == [
        ("r1", MEAN_RATER), (MEAN_RATER, "r1"), ("r2", MEAN_RATER), (MEAN_RATER, "r2")
    ]  # fmt: skip
    assert mean_rows[0]["value"] == pytest.approx(0.8)  # two raters: each one's "others" is the other
    nan = float("nan")
    inter = pl.DataFrame(
        [("r1", "r2", "kendall", 0.5, nan, nan), ("r2", "r1", "kendall", 0.5, nan, nan),
         ("r1", "r2", "pearson", 0.8, nan, nan), ("r2", "r1", "pearson", 0.8, nan, nan),
         ("r1", MEAN_RATER, "pearson", 0.7, nan, nan), (MEAN_RATER, "r1", "pearson", 0.7, nan, nan)],
        schema=["rater_a", "rater_b", "method", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    per_rater = pl.DataFrame(
        [("bleu", "r1", "kendall", 0.1, nan, nan), ("bleu", "r2", "kendall", 0.2, nan, nan)],
        schema=["metric", "rater", "method", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    lines = [x for x in per_rater_markdown(per_rater, inter, "Cap.").splitlines() if x.startswith("| ")]
    assert lines[-8:] == [
        f"| Rater | r1 | r2 | {MEAN_RATER} |", "| r1 | – | 0.500 | – |", "| r2 | 0.500 | – | – |",
        f"| {MEAN_RATER} | – | – | – |",
        f"| Rater | r1 | r2 | {MEAN_RATER} |", "| r1 | – | 0.800 | 0.700 |", "| r2 | 0.800 | – | – |",
        f"| {MEAN_RATER} | 0.700 | – | – |",
    ]  # fmt: skip
    per_category = pl.DataFrame(
        [("bleu", "c", "kendall", 0.1, nan, nan), ("Radiologists (leave-one-out)", "c", "kendall", 0.9, nan, nan),
         ("bleu", "c", "pearson", 0.3, nan, nan)],
        schema=["metric", "category", "method", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    lines = [x for x in per_category_markdown(per_category, "Cap.").splitlines() if x.startswith(("| ", "**"))]
    assert lines == [
        "**Kendall τb** per error category.", "| Metric | c |", "| Radiologists (leave-one-out) | 0.900 |",
        "| bleu | 0.100 |", "**Pearson r** per error category.", "| Metric | c |", "| bleu | 0.300 |",
    ]  # fmt: skip
