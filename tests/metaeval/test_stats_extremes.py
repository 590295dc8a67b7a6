"""Exact expected values of the statistical tests at their extremes.

Closeness to another method within a tolerance can hide a formula: the sampled randomization test's
(count + 1) / (rounds + 1) correction differs from count / rounds by less than 1 / rounds, inside
any tolerance a sampled comparison needs. At the extremes the value is known exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from srrg.compare import compare_pair
from srrg.metaeval.correlation import correlate, paired_test
from srrg.metrics.corpus import Statistic, column_mean
from srrg.resampling import bootstrap_p, percentile_ci, randomization_p, swap_masks
from srrg.settings.compare import CompareConfig


def col(values) -> np.ndarray:
    return np.asarray(values, dtype=float)[:, None]


@pytest.mark.parametrize("n_rounds", [1, 99, 1000])
def test_sampled_randomization_where_no_round_reaches_the_observed_difference(n_rounds):
    # 70 studies (2^70 patterns: sampled), b beats a by 1 on every study: a round reaches the
    # observed |mean difference| of 1 only if all 70 or none swap (probability 2^-69): never
    a, b = col([0.0] * 70), col([1.0] * 70)
    assert randomization_p(a, b, column_mean, n_rounds=n_rounds, seed=0) == 1 / (n_rounds + 1)


def test_sampled_randomization_of_identical_systems_is_one():
    a = col(np.linspace(0, 1, 70))
    assert randomization_p(a, a.copy(), column_mean, n_rounds=50, seed=3) == 1.0


def test_exact_randomization_smallest_p_is_two_patterns_out_of_all():
    # 5 studies, 2^5 = 32 <= rounds: exact enumeration; only "no swap" and "all swap" reach |d| = 1
    a, b = col([0.0] * 5), col([1.0] * 5)
    assert randomization_p(a, b, column_mean, n_rounds=32, seed=0) == 2 / 32
    # one round fewer than 2^5: sampled, and then the correction applies to the rounds drawn
    masks, exact = swap_masks(5, 31, 0)
    reached = int(np.sum(masks.all(axis=1) | ~masks.any(axis=1)))
    assert not exact
    assert randomization_p(a, b, column_mean, n_rounds=31, seed=0) == (reached + 1) / 32


def test_bootstrap_of_identical_systems():
    values = col([0.2, 0.9, 0.4, 0.4, 0.7])
    row = compare_pair(
        values,
        values.copy(),
        Statistic("x", ("x",), column_mean, "mean"),
        ("a", "b"),
        CompareConfig(n_boot=200, n_rounds=16, seed=5),
    )
    assert row.difference == 0.0
    assert row.ci_difference == (0.0, 0.0)
    assert row.p_bootstrap == 1.0 and row.p_randomization == 1.0
    assert row.ci_a == row.ci_b


def test_bootstrap_p_at_its_extremes():
    assert bootstrap_p(np.full(100, 0.3)) == 2 / 101  # every resample on one side of zero: the floor 2 / (B + 1)
    assert bootstrap_p(np.zeros(100)) == 1.0  # every resample ties zero: capped at 1
    assert bootstrap_p(np.array([-1.0, 1.0])) == 1.0


def test_percentile_ci_of_a_constant_sample_is_a_point():
    assert percentile_ci(np.full(50, 0.25), 0.95) == (0.25, 0.25)


def test_paired_test_of_a_metric_with_itself():
    rng = np.random.default_rng(2)
    metric, human = rng.random(20), rng.random(20)
    res = paired_test(metric, metric.copy(), human, "kendall", n_boot=100, seed=1)
    assert res.difference == 0.0 and (res.ci_low, res.ci_high) == (0.0, 0.0) and res.p_value == 1.0


def test_correlation_of_a_perfect_ranking_has_a_point_interval():
    res = correlate([1, 2, 3, 4, 5], [10, 20, 30, 40, 50], "kendall", n_boot=200, seed=0)
    # every resample with at least two distinct values orders them perfectly; tied-only resamples are NaN
    # (scipy's tau-b carries float rounding: 1 - 1e-16)
    assert res.value == pytest.approx(1.0, abs=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((1.0, 1.0), abs=1e-12)
