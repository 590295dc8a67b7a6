"""Tests between metrics (srrg.metaeval.between), the kinds issue 53 found missing: a metric constant
on the kept pairs, the order and keys of metric_tests' rows, the Williams test by hand, the better-than
matrix's orientation. Each test's docstring names the bug it catches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from srrg.metaeval.between import better_than, metric_tests, permutation_p, williams
from srrg.resampling import adjust

HUMAN = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
GOOD = np.array([1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 8.0, 7.0])  # close to the human order
POOR = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])
BOOT = {"n_boot": 50, "seed": 0, "level": 0.95, "clusters": None, "min_clusters": 0}


@pytest.mark.parametrize("method", ["kendall", "pearson", "spearman"])
def test_a_metric_constant_on_the_pairs_has_no_permutation_p(method):
    """Bug: a constant metric (no coefficient, NaN) gets a p-value (every round compared with a NaN
    observed difference counts none: p = 1 / (rounds + 1)) instead of NaN."""
    constant = np.full(8, 0.5)
    for a, b in ((constant, GOOD), (GOOD, constant)):
        assert math.isnan(permutation_p(a, b, HUMAN, method, n_rounds=64, seed=1))
    assert 0 < permutation_p(GOOD, POOR, HUMAN, method, n_rounds=64, seed=1) <= 1  # two real metrics: a p


def test_a_metric_constant_only_on_the_kept_pairs_gets_nan_p_values():
    """Bug: metric_tests tests a metric that varies over all pairs but is constant on the pairs both
    metrics and the human score have (the NaN pairs dropped), and reports a p-value for it."""
    flat = np.array([9.0, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])  # varies only where POOR2 is missing
    poor2 = POOR.copy()
    poor2[:2] = np.nan
    rows = metric_tests({"flat": flat, "poor": poor2}, HUMAN, BOOT, n_permutations=64, correction="none")
    assert [r["method"] for r in rows] == ["kendall", "pearson"]
    for r in rows:
        assert r["n"] == 6
        assert math.isnan(r["p_permutation"]) and math.isnan(r["p_permutation_adj"]), r
        assert math.isnan(r["difference"]), r
    assert math.isnan(rows[1]["p_williams"]) and math.isnan(rows[1]["williams_t"])


def test_metric_tests_rows_follow_the_metrics_order_and_carry_the_williams_test_for_pearson_only():
    """Bugs: rows out of the metrics' order, the Williams columns on Kendall rows or under another
    key, the Williams test fed the wrong correlations, a p adjusted under the wrong key."""
    xs = {"good": GOOD, "poor": POOR, "mid": (GOOD + POOR) / 2}
    rows = metric_tests(xs, HUMAN, BOOT, n_permutations=64, correction="holm")
    order = [("good", "poor"), ("good", "mid"), ("poor", "mid")]
    assert [(r["method"], r["metric_a"], r["metric_b"]) for r in rows] == [
        *(("kendall", a, b) for a, b in order),
        *(("pearson", a, b) for a, b in order),
    ]
    for r in rows[:3]:
        assert "williams_t" not in r and "p_williams" not in r and "p_williams_adj" not in r
    for r in rows[3:]:
        r_a = stats.pearsonr(xs[r["metric_a"]], HUMAN)[0]
        r_b = stats.pearsonr(xs[r["metric_b"]], HUMAN)[0]
        r_ab = stats.pearsonr(xs[r["metric_a"]], xs[r["metric_b"]])[0]
        t, p = williams(r_a, r_b, r_ab, 8)
        assert r["williams_t"] == pytest.approx(t) and r["p_williams"] == pytest.approx(p)
        assert r["difference"] == pytest.approx(r_a - r_b)
    # Holm over the 3 pairs of one method, each test's family on its own
    for family in (rows[:3], rows[3:]):
        keys = ("p_permutation", "p_bootstrap", *(("p_williams",) if family[0]["method"] == "pearson" else ()))
        for key in keys:
            expected = adjust([r[key] for r in family], "holm")
            assert [r[f"{key}_adj"] for r in family] == pytest.approx(expected), key
    kendall_good_poor = rows[0]
    tau = stats.kendalltau(GOOD, HUMAN)[0] - stats.kendalltau(POOR, HUMAN)[0]
    assert kendall_good_poor["difference"] == pytest.approx(tau)


def test_williams_by_hand():
    """Bug: the Williams test with r_a and r_b (or r_ab) exchanged, or the wrong degrees of freedom.
    r_a 0.6, r_b 0.3, r_ab 0.5, n 20: det = 1 - .36 - .09 - .25 + 2 * .6 * .3 * .5 = 0.48;
    denominator = 2 * 19 / 17 * 0.48 + 0.45^2 * 0.5^3 = 1.0729...; t = 0.3 * sqrt(19 * 1.5 / den)."""
    det = 1 - 0.36 - 0.09 - 0.25 + 2 * 0.6 * 0.3 * 0.5
    den = 2 * 19 / 17 * det + 0.45**2 * 0.5**3
    t_expected = 0.3 * math.sqrt(19 * 1.5 / den)
    t, p = williams(0.6, 0.3, 0.5, 20)
    assert t == pytest.approx(t_expected) and p == pytest.approx(2 * stats.t.sf(t_expected, 17))
    assert williams(0.3, 0.6, 0.5, 20)[0] == pytest.approx(-t_expected)
    assert all(math.isnan(v) for v in williams(0.6, 0.3, 0.5, 3))  # below 4 pairs
    assert all(math.isnan(v) for v in williams(math.nan, 0.3, 0.5, 20))


def test_better_than_puts_the_p_in_the_better_metrics_row():
    """Bug: the matrix transposed (the p in the worse metric's row) or filled from a Pearson row."""
    rows = [
        {"method": "kendall", "metric_a": "a", "metric_b": "b", "difference": -0.2, "p_permutation_adj": 0.01},
        {"method": "kendall", "metric_a": "a", "metric_b": "c", "difference": 0.1, "p_permutation_adj": 0.2},
        {"method": "kendall", "metric_a": "b", "metric_b": "c", "difference": 0.0, "p_permutation_adj": 0.5},
        {"method": "pearson", "metric_a": "c", "metric_b": "b", "difference": 0.3, "p_permutation_adj": 0.03},
    ]
    assert better_than(rows, ["a", "b", "c"]) == [[None, None, 0.2], [0.01, None, None], [None, None, None]]


def test_too_few_cases_give_no_permutation_p_either():
    """Bug: the permutation p reported where the clustered bootstrap refuses (fewer cases than
    min_clusters): the swap distribution of a few cases is as coarse, so it must be NaN too."""
    boot = {**BOOT, "clusters": ["c1"] * 4 + ["c2"] * 4, "min_clusters": 3}
    rows = metric_tests({"good": GOOD, "poor": POOR}, HUMAN, boot, n_permutations=64, correction="none")
    assert [r["status"] for r in rows] == ["too_few_cases"] * 2
    assert all(math.isnan(r["p_permutation"]) and math.isnan(r["p_bootstrap"]) for r in rows)
    enough = metric_tests({"good": GOOD, "poor": POOR}, HUMAN, {**boot, "min_clusters": 2}, n_permutations=64,
                          correction="none")  # fmt: skip
    assert all(0 < r["p_permutation"] <= 1 for r in enough)
