"""The human ceiling's tables (srrg.metaeval.ceiling, ceiling_tables) and tie-calibrated accuracy
(srrg.metaeval.tie_accuracy), the kinds issue 53 found missing: every written table checked
exactly (row, column and method order), the rows' keys, the ceiling row first, the resample's
origin argument. Each test's docstring names the bug it catches."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from srrg.metaeval.ceiling import CEILING, category_rows, inter_rater_rows, mean_of, rater_rows
from srrg.metaeval.ceiling_tables import (
    better_than_markdown,
    ceiling_figure,
    per_category_markdown,
    per_rater_markdown,
    summary_rows,
)
from srrg.metaeval.tie_accuracy import accuracy_curve, calibrated, tie_calibrated_accuracy

NAN = math.nan
BOOT0 = {"n_boot": 0, "seed": 0, "level": 0.95}


def table(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("| ", "**"))]


def test_per_rater_markdown_exactly():
    """Bugs: raters or metrics sorted instead of kept in order, a rater's column filled from another
    rater (or method), the inter-rater matrix transposed, a CI printed where there is none."""
    per_rater = pl.DataFrame(
        [(CEILING, "r2", "kendall", 0.5, 0.4, 0.6), (CEILING, "r1", "kendall", 0.7, NAN, NAN),
         ("bleu", "r2", "kendall", 0.1, 0.0, 0.2), ("bleu", "r1", "kendall", -0.25, -0.5, 0.0),
         ("bleu", "r2", "spearman", 0.3, NAN, NAN)],
        schema=["metric", "rater", "method", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    inter = pl.DataFrame(
        [("r2", "r2", 1.0, NAN, NAN), ("r2", "r1", 0.4, 0.2, 0.6), ("r1", "r2", 0.3, 0.1, 0.5),
         ("r1", "r1", 1.0, NAN, NAN)],
        schema=["rater_a", "rater_b", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    assert table(per_rater_markdown(per_rater, inter, "Cap.")) == [
        "**Kendall τb** against each rater.",
        "| Metric | r2 | r1 |",
        "| Radiologists (leave-one-out) | 0.500 [0.400, 0.600] | 0.700 |",
        "| bleu | 0.100 [0.000, 0.200] | -0.250 [-0.500, 0.000] |",
        "**Spearman ρ** against each rater.",
        "| Metric | r2 | r1 |",
        "| Radiologists (leave-one-out) | – | – |",
        "| bleu | 0.300 | – |",
        "**Inter-rater Kendall τb** on the pairs both judged.",
        "| Rater | r2 | r1 |",
        "| r2 | 1.000 | 0.400 [0.200, 0.600] |",
        "| r1 | 0.300 [0.100, 0.500] | 1.000 |",
    ]


def test_per_category_and_better_than_markdown_exactly():
    """Bugs: the ceiling row not first, categories sorted, a NaN p shown as a number or a missing
    one as a dash, p < 0.001 printed as 0.000."""
    per_category = pl.DataFrame(
        [("bleu", "b_cat", 0.2, NAN, NAN), (CEILING, "a_cat", 0.9, 0.8, 1.0), ("bleu", "a_cat", 0.1, NAN, NAN)],
        schema=["metric", "category", "value", "ci_low", "ci_high"], orient="row",
    )  # fmt: skip
    assert table(per_category_markdown(per_category, "Cap.")) == [
        "| Metric | b_cat | a_cat |",
        "| Radiologists (leave-one-out) | – | 0.900 [0.800, 1.000] |",
        "| bleu | 0.200 | 0.100 |",
    ]
    matrix = pl.DataFrame({"metric": ["a", "b"], "a": [None, 0.0005], "b": [NAN, 0.25]})
    assert table(better_than_markdown(matrix, "Cap.")) == ["| better than → | a | b |", "| a |  | – |",
                                                           "| b | <0.001 | 0.250 |"]  # fmt: skip


def test_summary_rows_exactly():
    """Bug: a summary column read from another key (the Pearson CI from Kendall's bounds, epsilon
    and the untuned accuracy exchanged)."""
    summary = pl.DataFrame([{
        "metric": "bleu", "kendall": 0.1, "kendall_low": 0.0, "kendall_high": 0.2, "pearson": 0.3,
        "pearson_low": 0.25, "pearson_high": 0.35, "accuracy": 0.6, "accuracy_low": NAN, "accuracy_high": NAN,
        "epsilon": 0.05, "accuracy_untuned": 0.55,
    }])  # fmt: skip
    assert summary_rows(summary) == [
        ["bleu", "0.100", "[0.000, 0.200]", "0.300", "[0.250, 0.350]", "0.600", "–", "0.050", "0.550"]
    ]


def test_rater_rows_keys_order_and_values():
    """Bugs: the rater's name written under another key, the ceiling row not first for each rater,
    a metric correlated with the mean of all raters (its own judgements included) instead of the
    rater, the others' mean including the rater."""
    matrix = {"r1": np.array([1.0, 2, 3, 4, 5]), "r2": np.array([2.0, 1, 4, 3, 5]), "r3": np.array([1.0, 3, 2, 5, 4])}
    metric = np.array([0.1, 0.2, 0.5, 0.3, 0.9])
    rows = rater_rows(matrix, {"m": metric}, ["kendall", "pearson"], BOOT0)
    assert [(r["metric"], r["rater"], r["method"]) for r in rows] == [
        (name, rater, method) for rater in ("r1", "r2", "r3") for name in (CEILING, "m")
        for method in ("kendall", "pearson")
    ]  # fmt: skip
    by = {(r["metric"], r["rater"], r["method"]): r["value"] for r in rows}
    others = mean_of(matrix, ["r2", "r3"], 5)
    assert by[(CEILING, "r1", "kendall")] == pytest.approx(stats.kendalltau(matrix["r1"], others)[0])
    assert by[("m", "r2", "pearson")] == pytest.approx(stats.pearsonr(metric, matrix["r2"])[0])
    assert set(rows[0]) == {"metric", "rater", "method", "value", "p_value", "ci_low", "ci_high", "n",
                            "n_clusters", "ci_status"}  # fmt: skip


def test_inter_rater_and_category_rows():
    """Bugs: inter-rater rows keyed rater_a/rater_b the wrong way, the diagonal not 1; a category's
    ceiling row missing or after the metrics, a metric correlated with one rater instead of the mean."""
    matrix = {"r1": np.array([1.0, 2, 3, 4]), "r2": np.array([1.0, 3, 2, 4])}
    inter = inter_rater_rows(matrix, "kendall", BOOT0)
    assert [(r["rater_a"], r["rater_b"]) for r in inter] == [("r1", "r1"), ("r1", "r2"), ("r2", "r1"), ("r2", "r2")]
    assert [r["value"] for r in inter] == pytest.approx([1.0, 2 / 3, 2 / 3, 1.0])
    metric = np.array([4.0, 3, 2, 1])
    rows = category_rows({"c": matrix}, {"m": metric}, "kendall", BOOT0)
    assert [(r["metric"], r["category"]) for r in rows] == [(CEILING, "c"), ("m", "c")]
    assert rows[1]["value"] == pytest.approx(stats.kendalltau(metric, [1.0, 2.5, 2.5, 4])[0])


def test_tie_accuracy_origin_and_untuned():
    """Bugs: two copies of one item (a resample) counted as a pair; the untuned accuracy (epsilon 0)
    read at the best epsilon; the metric and human arguments exchanged (human ties are the ones a
    metric tie is right on); NaN pairs kept."""
    metric, human = np.array([0.1, 0.2, 0.9]), np.array([1.0, 1.0, 2.0])
    # pairs (0,1): human tie, metric gap 0.1; (0,2), (1,2): both ordered alike
    eps, acc = accuracy_curve(metric, human)
    assert eps.tolist() == pytest.approx([0.0, 0.1, 0.7, 0.8]) and acc.tolist() == pytest.approx([2 / 3, 1, 2 / 3,
                                                                                                  1 / 3])  # fmt: skip
    assert calibrated(metric, human) == pytest.approx((1.0, 0.1))
    assert calibrated(human, metric) == pytest.approx((2 / 3, 0.0))  # the arguments are not symmetric
    # a resample holding item 0 twice: the copies are no pair (counted, they would be a right tie:
    # accuracy 1/3 at epsilon 0.8 instead of 0); the two copies of pair (0, 2) remain
    idx = np.array([0, 0, 2])
    eps_copy, acc_copy = accuracy_curve(metric[idx], human[idx], idx)
    assert eps_copy.tolist() == pytest.approx([0.0, 0.8]) and acc_copy.tolist() == pytest.approx([1.0, 0.0])
    res = tie_calibrated_accuracy([0.1, 0.2, NAN, 0.9], [1.0, 1.0, 5.0, 2.0], BOOT0)
    assert (res.accuracy, res.epsilon, res.accuracy_untuned, res.n) == pytest.approx((1.0, 0.1, 2 / 3, 3))


def test_ceiling_figure_draws_each_interval_from_its_own_bounds(tmp_path, monkeypatch):
    """Bugs: the figure's ticks given as (labels, positions); an interval drawn from the wrong
    bounds (low to low), the ceiling band from its point; the PNG stamped with the matplotlib
    version (metadata Software kept: the bytes change with the library)."""
    from matplotlib.axes import Axes

    drawn: dict[str, tuple] = {}
    for name in ("hlines", "axvspan", "axvline"):
        original = getattr(Axes, name)

        def record(self, *args, _name=name, _original=original, **kwargs):
            drawn[_name] = args
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Axes, name, record)
    summary = pl.DataFrame({"metric": [CEILING, "bleu", "rouge", "meteor"], "kendall": [0.6, 0.2, NAN, 0.4],
                            "kendall_low": [0.5, 0.1, NAN, 0.45], "kendall_high": [0.7, 0.3, NAN, 0.55]})  # fmt: skip
    ceiling_figure(summary, "Title", tmp_path / "c.png")
    # rows bottom-up in reverse order (meteor, rouge, bleu): rouge has no interval
    assert [list(a) for a in drawn["hlines"]] == [[0, 2], [0.45, 0.1], [0.55, 0.3]]
    assert drawn["axvspan"] == (0.5, 0.7) and drawn["axvline"] == (0.6,)
    data = (tmp_path / "c.png").read_bytes()
    assert data[:4] == b"\x89PNG" and b"Software" not in data and b"matplotlib" not in data
