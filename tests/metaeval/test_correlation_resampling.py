"""Resampling helpers of the meta-evaluation with exact expectations: cluster resamples and the
clusters that survive dropped pairs, the paired test over clusters against an independent
computation, and the finite-sample rules of the percentile interval and the bootstrap p-value."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from srrg.metaeval.correlation import (
    cluster_bootstrap_indices,
    complete_pairs,
    correlate,
    paired_test,
    resample_indices,
)
from srrg.rank_correlation import coefficient
from srrg.resampling import bootstrap_p, percentile_ci

X = np.array([0.1, 0.4, 0.35, 0.8, 0.6, 0.9, 0.2, 0.75, 0.5, 0.3])
Y = np.array([1, 3, 2, 5, 4, 5, 1, 4, 3, 3], dtype=float)
B = np.array([0.3, 0.2, 0.5, 0.9, 0.4, 0.6, 0.1, 0.8, 0.75, 0.35])
CASES = ["p", "p", "q", "q", "r", "r", "s", "s", "t", "t"]


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(x, y, variant="b").statistic)


def test_cluster_resamples_bring_every_member_in_sorted_cluster_order():
    # clusters sorted: 10 -> 0 (pairs 1, 2), 7 -> 1 (pair 0); ids are compared as text ("10" < "7")
    draws = np.random.default_rng(4).integers(0, 2, size=(6, 2))
    members = {0: [1, 2], 1: [0]}
    got = cluster_bootstrap_indices([7, 10, 10], 6, 4)
    assert len(got) == 6
    assert [g.tolist() for g in got] == [[i for k in row for i in members[k]] for row in draws]
    assert [g.tolist() for g in resample_indices(3, 6, 4, [7, 10, 10])] == [g.tolist() for g in got]


def test_resample_indices_refuse_a_cluster_list_of_the_wrong_length():
    with pytest.raises(ValueError, match="^2 cluster ids for 3 pairs$"):
        resample_indices(3, 5, 0, ["a", "b"])


def test_correlate_counts_the_clusters_left_after_dropping_pairs():
    x, y = X.copy(), Y.copy()
    x[8], y[9] = math.nan, math.nan  # both pairs of case t dropped
    c = correlate(x, y, "kendall", n_boot=40, seed=2, clusters=CASES)
    assert (c.n, c.n_dropped, c.n_clusters) == (8, 2, 4)
    samples = [kendall(X[:8][i], Y[:8][i]) for i in cluster_bootstrap_indices(CASES[:8], 40, 2)]
    samples = np.array(samples)[np.isfinite(samples)]
    assert (c.ci_low, c.ci_high) == pytest.approx(tuple(np.percentile(samples, [2.5, 97.5])), abs=1e-12)
    assert correlate(x, y, "kendall", n_boot=40, seed=2).n_clusters == 0


def test_paired_test_over_clusters_against_an_independent_computation():
    a, b, y = X.copy(), B.copy(), Y.copy()
    b[0] = math.nan  # pair 0 dropped: case p keeps pair 1 only
    t = paired_test(a, b, y, "kendall", ("a", "b"), n_boot=60, seed=3, level=0.9, clusters=CASES)
    keep = np.arange(1, 10)
    diffs = np.array(
        [
            kendall(a[keep][i], y[keep][i]) - kendall(b[keep][i], y[keep][i])
            for i in cluster_bootstrap_indices(CASES[1:], 60, 3)
        ]
    )
    diffs = diffs[np.isfinite(diffs)]
    assert (t.ci_low, t.ci_high) == pytest.approx(tuple(np.percentile(diffs, [5, 95])), abs=1e-12)
    far = min(np.sum(diffs <= 0), np.sum(diffs >= 0))
    assert t.p_value == pytest.approx(min(1.0, 2 * (far + 1) / (diffs.size + 1)), abs=1e-12)
    assert t.n == 9 and t.difference == pytest.approx(kendall(a[keep], y[keep]) - kendall(b[keep], y[keep]))
    pairs = paired_test(a, b, y, "kendall", n_boot=60, seed=3, level=0.9)
    assert (pairs.ci_low, pairs.ci_high) != (t.ci_low, t.ci_high)


def test_percentile_interval_uses_finite_samples_only():
    samples = np.array([1.0, math.inf, 2.0, math.nan, 3.0, -math.inf])
    assert percentile_ci(samples, 0.5) == (1.5, 2.5)  # 25th and 75th percentiles of 1, 2, 3
    assert percentile_ci(samples, 0.0) == (2.0, 2.0)
    low, high = percentile_ci(np.array([math.nan, math.inf]), 0.95)
    assert math.isnan(low) and math.isnan(high)


def test_bootstrap_p_counts_zero_on_both_sides_and_ignores_non_finite():
    # +1 correction: (far-side count + 1) / (B + 1), doubled
    assert bootstrap_p(np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])) == 0.4  # 2 * (1 + 1) / (9 + 1)
    assert bootstrap_p(np.array([math.nan, -1.0, 1.0, 2.0, 3.0, 4.0, math.inf])) == pytest.approx(2 / 3)  # 2 * 2 / 6
    assert bootstrap_p(np.array([-3.0, -1.0, -2.0, 0.5])) == 0.8  # 2 * 2 / 5
    assert math.isnan(bootstrap_p(np.array([math.nan, -math.inf])))


def test_coefficient_needs_three_pairs_and_a_varying_side():
    three = coefficient("kendall", np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))
    assert three[0] == pytest.approx(1 / 3)  # 2 concordant, 1 discordant of 3
    for x, y in (([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])):
        assert all(math.isnan(v) for v in coefficient("spearman", np.array(x), np.array(y)))
    # a side that varies only after its first value is not constant
    rho = coefficient("spearman", np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))[0]
    assert rho == pytest.approx(math.sqrt(3) / 2)
    methods = r"\('kendall', 'spearman', 'pearson'\)"
    with pytest.raises(ValueError, match=rf"^unknown correlation method 'tau'; use one of {methods}$"):
        coefficient("tau", X, Y)


def test_complete_pairs_names_both_lengths():
    with pytest.raises(ValueError, match=r"^series differ in length: 2 vs 3$"):
        complete_pairs([1.0, 2.0], [1.0, 2.0, 3.0])


def test_paired_test_with_a_single_resample_reports_that_resample():
    (idx,) = np.random.default_rng(0).integers(0, 10, size=(1, 10))
    diff = kendall(X[idx], Y[idx]) - kendall(B[idx], Y[idx])
    assert math.isfinite(diff) and diff != 0
    t = paired_test(X, B, Y, "kendall", n_boot=1, seed=0)
    assert (t.ci_low, t.ci_high) == pytest.approx((diff, diff), abs=1e-12)
    assert t.p_value == 1.0  # one resample on one side of zero: 2 * (0 + 1) / (1 + 1), capped
