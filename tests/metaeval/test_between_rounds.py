"""The permutation test between metrics computes all its rounds at once (srrg.metaeval.between.
round_coefficients): the same coefficients, bit for bit, as one round at a time, so the p-values of
metric_tests.csv do not depend on how they were computed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from srrg.metaeval.between import comparable, permutation_p, round_coefficients
from srrg.metaeval.correlation import coefficient_value
from srrg.resampling import randomization_p


def test_kendall_rounds_by_hand() -> None:
    """xa = (1, 2, 3), xb = (3, 2, 1), y = (1, 2, 3). Round "no swap" keeps xa: tau 1, and its
    mirror xb: tau -1. Round "swap row 0": (3, 2, 3) against y: pair (0, 1) discordant, (0, 2) tied
    in x, (1, 2) concordant: tau_b = (1 - 1) / sqrt(2 * 3) = 0; its mirror (1, 2, 1) likewise 0."""
    xa, xb, y = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])
    m = np.array([[True, True, True], [False, True, True]])
    first, second = round_coefficients("kendall", xa, xb, y, m)
    assert first.tolist() == [1.0, 0.0]
    assert second.tolist() == [-1.0, 0.0]


def test_a_constant_round_is_nan_like_coefficient_value() -> None:
    """Swapping every row of (2, 2, 2) with (1, 2, 3) leaves a constant series: no coefficient."""
    xa, xb, y = np.array([2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])
    for method in ("kendall", "pearson"):
        first, second = round_coefficients(method, xa, xb, y, np.array([[True, True, True]]))
        assert math.isnan(first[0]) and second[0] == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["kendall", "pearson"])
@pytest.mark.parametrize("seed", range(6))
def test_rounds_equal_one_round_at_a_time(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 90))
    a, b = rng.normal(size=n), rng.integers(0, 3, n).astype(float)  # ties on one side
    y = rng.integers(0, 4, n).astype(float)
    xa, xb = comparable(a, method), comparable(b, method)
    m = rng.random((40, n)) < 0.5
    first, second = round_coefficients(method, xa, xb, y, m)
    one_a = [coefficient_value(method, np.where(r, xa, xb), y) for r in m]
    one_b = [coefficient_value(method, np.where(r, xb, xa), y) for r in m]
    assert np.array_equal(first, one_a, equal_nan=True) and np.array_equal(second, one_b, equal_nan=True)


@pytest.mark.parametrize("method", ["kendall", "pearson"])
@pytest.mark.parametrize(("n_rounds", "clustered"), [(200, True), (200, False), (1000, True)])
def test_permutation_p_equals_the_round_by_round_test(method: str, n_rounds: int, clustered: bool) -> None:
    """Against srrg.resampling.randomization_p with the per-round statistic (the former computation):
    the same p exactly, sampled (pairs or cases swapping) and exact (few cases: all 2^u patterns)."""
    rng = np.random.default_rng(n_rounds + clustered)
    n = 60
    a = rng.normal(size=n)
    b, y = a + rng.normal(scale=0.7, size=n), rng.integers(0, 5, n).astype(float)
    n_cases = 8 if n_rounds == 1000 else 20  # 2^8 <= 1000: the exact test
    clusters = [f"case{k}" for k in rng.integers(0, n_cases, n)] if clustered else None
    xa, xb = comparable(a, method), comparable(b, method)
    units = None if clusters is None else np.unique(clusters, return_inverse=True)[1]

    def stat(v: np.ndarray) -> float:
        return coefficient_value(method, v[:, 0], y)

    expected = randomization_p(xa[:, None], xb[:, None], stat, n_rounds, 3, units)
    assert permutation_p(a, b, y, method, n_rounds=n_rounds, seed=3, clusters=clusters) == expected
