"""Bootstrap CIs of the meta-evaluation against an independent computation (DESIGN §4.7: percentile
bootstrap 95% CIs over resampled pairs, seeded).

The expectation is rebuilt here from scratch: the same seeded resamples (numpy's default_rng(seed)
drawing n_boot rows of n pair indices), scipy's coefficient on each resample, NaN resamples (a
constant side) left out, and numpy's percentile at (1 - level) / 2 and 1 - (1 - level) / 2.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from srrg.metaeval.correlation import complete_pairs, correlate, paired_test
from srrg.rank_correlation import coefficient, orient
from srrg.resampling import bootstrap_indices
from srrg.settings.metaeval import MetaevalConfig

X = np.array([0.1, 0.4, 0.35, 0.8, 0.6, 0.9, 0.2, 0.75, 0.5, 0.3, 0.65, 0.05])
Y = np.array([1, 3, 2, 5, 4, 5, 1, 4, 3, 3, 4, 2], dtype=float)
DEFAULT = MetaevalConfig()  # the bootstrap settings a config that sets none gets
BOOT = {"n_boot": DEFAULT.n_boot, "seed": DEFAULT.seed}


def scipy_coefficient(method: str, x: np.ndarray, y: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant resamples: scipy warns and returns NaN
        res = stats.kendalltau(x, y, variant="b") if method == "kendall" else stats.spearmanr(x, y)
    return float(res.statistic)


def resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def expected_ci(method: str, x, y, n_boot: int, seed: int, level: float) -> tuple[float, float]:
    samples = np.array([scipy_coefficient(method, x[i], y[i]) for i in resamples(len(x), n_boot, seed)])
    samples = samples[np.isfinite(samples)]
    tail = (1 - level) / 2
    return tuple(float(v) for v in np.percentile(samples, [100 * tail, 100 * (1 - tail)]))


@pytest.mark.parametrize("method", ["kendall", "spearman"])
def test_default_ci_is_the_95_percent_percentile_interval_of_1000_seed_0_resamples(method):
    assert (DEFAULT.n_boot, DEFAULT.seed, DEFAULT.ci_level) == (1000, 0, 0.95)
    c = correlate(X, Y, method, **BOOT)
    assert (c.ci_low, c.ci_high) == pytest.approx(expected_ci(method, X, Y, 1000, 0, 0.95), abs=1e-12)
    assert c.method == method and c.n == len(X) and c.n_dropped == 0
    assert c.value == pytest.approx(scipy_coefficient(method, X, Y))


@pytest.mark.parametrize(("level", "seed"), [(0.9, 3), (0.8, 5), (0.5, 11)])
def test_other_levels_and_seeds(level, seed):
    c = correlate(X, Y, "kendall", n_boot=300, seed=seed, level=level)
    assert (c.ci_low, c.ci_high) == pytest.approx(expected_ci("kendall", X, Y, 300, seed, level), abs=1e-12)


def test_a_lower_level_gives_a_narrower_interval_inside_the_wider_one():
    wide = correlate(X, Y, "spearman", n_boot=200, seed=2, level=0.95)
    mid = correlate(X, Y, "spearman", n_boot=200, seed=2, level=0.9)
    narrow = correlate(X, Y, "spearman", n_boot=200, seed=2, level=0.5)
    assert wide.ci_low < mid.ci_low < narrow.ci_low <= narrow.ci_high < mid.ci_high < wide.ci_high


def test_constant_resamples_are_left_out_of_the_percentiles():
    # 4 pairs: a resample that draws one value of x only (a constant side) has no coefficient
    x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    idx = resamples(4, 200, 1)
    assert any(len(set(x[i])) == 1 for i in idx)  # the case under test occurs
    c = correlate(x, y, "kendall", n_boot=200, seed=1)
    assert (c.ci_low, c.ci_high) == pytest.approx(expected_ci("kendall", x, y, 200, 1, 0.95), abs=1e-12)


def test_bootstrap_indices_are_the_seeded_resamples():
    idx = bootstrap_indices(7, 50, 4)
    assert idx.shape == (50, 7) and idx.min() >= 0 and idx.max() <= 6
    assert np.array_equal(idx, resamples(7, 50, 4))


def test_smallest_inputs_that_get_an_interval():
    # three pairs and a single resample still give an interval (the resample's own coefficient)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    one = correlate(x, y, "spearman", n_boot=1, seed=0)
    (i,) = resamples(3, 1, 0)
    value = scipy_coefficient("spearman", x[i], y[i])
    if math.isnan(value):
        assert math.isnan(one.ci_low) and math.isnan(one.ci_high)
    else:
        assert one.ci_low == pytest.approx(value) and one.ci_high == pytest.approx(value)
    three = correlate(x, y, "kendall", n_boot=100, seed=0)
    assert (three.ci_low, three.ci_high) == pytest.approx(expected_ci("kendall", x, y, 100, 0, 0.95), abs=1e-12)


def test_no_interval_without_resamples_or_with_two_pairs():
    for c in (correlate(X, Y, "kendall", n_boot=0, seed=0), correlate([1, 2], [2, 1], "kendall", n_boot=100, seed=0)):
        assert math.isnan(c.ci_low) and math.isnan(c.ci_high)
    two = correlate([1, 2, math.nan], [2, 1, 3], "kendall", **BOOT)
    assert two.n == 2 and two.n_dropped == 1 and math.isnan(two.value) and math.isnan(two.p_value)


def test_coefficient_rules():
    assert all(math.isnan(v) for v in coefficient("kendall", np.array([1.0, 2.0]), np.array([1.0, 2.0])))
    assert all(math.isnan(v) for v in coefficient("spearman", np.array([1.0, 2.0, 3.0]), np.array([5.0, 5.0, 5.0])))
    assert coefficient("spearman", np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0]))[0] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="pearson"):
        coefficient("tau", X, Y)  # the message lists the methods


def test_orient_and_complete_pairs():
    up = orient([1, 2, 3], lower_is_better=False)
    down = orient([1, 2, 3], lower_is_better=True)
    assert up.dtype == np.float64 and up.tolist() == [1.0, 2.0, 3.0]
    assert down.dtype == np.float64 and down.tolist() == [-1.0, -2.0, -3.0]
    a, b, dropped = complete_pairs([1, math.inf, 3, 4], [1, 2, math.nan, 4])
    assert a.tolist() == [1.0, 4.0] and b.tolist() == [1.0, 4.0] and dropped == 2
    a, b, dropped = complete_pairs([None, 2, 3], [1, 2, None])  # a missing value on either side
    assert a.tolist() == [2.0] and b.tolist() == [2.0] and dropped == 2
    with pytest.raises(ValueError, match="length"):
        complete_pairs([1, 2], [1, 2, 3])


# --- paired test: the same resamples feed both metrics --------------------------------------------

A = X
B = np.array([0.3, 0.2, 0.5, 0.9, 0.4, 0.6, 0.1, 0.8, 0.75, 0.35, 0.05, 0.65])  # weaker than A, p ~ 0.05


def expected_paired(a, b, y, method: str, n_boot: int, seed: int, level: float):
    diffs = np.array(
        [
            scipy_coefficient(method, a[i], y[i]) - scipy_coefficient(method, b[i], y[i])
            for i in resamples(len(y), n_boot, seed)
        ]
    )
    diffs = diffs[np.isfinite(diffs)]
    tail = (1 - level) / 2
    low, high = np.percentile(diffs, [100 * tail, 100 * (1 - tail)])
    p = min(1.0, 2 * (min(np.sum(diffs <= 0), np.sum(diffs >= 0)) + 1) / (diffs.size + 1))
    return float(low), float(high), float(p)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["kendall"])
def test_paired_test_defaults_against_independent_computation(method):
    t = paired_test(A, B, Y, method, ("a", "b"), **BOOT)
    low, high, p = expected_paired(A, B, Y, method, 1000, 0, 0.95)
    assert (t.ci_low, t.ci_high, t.p_value) == pytest.approx((low, high, p), abs=1e-12)
    assert t.difference == pytest.approx(scipy_coefficient(method, A, Y) - scipy_coefficient(method, B, Y))
    assert (t.method, t.metric_a, t.metric_b, t.n) == (method, "a", "b", len(Y))


def test_paired_test_level_seed_and_a_two_sided_p_below_one():
    t = paired_test(A, B, Y, "spearman", n_boot=300, seed=9, level=0.8)
    low, high, p = expected_paired(A, B, Y, "spearman", 300, 9, 0.8)
    assert (t.ci_low, t.ci_high, t.p_value) == pytest.approx((low, high, p), abs=1e-12)
    assert 0 < t.p_value < 1


def test_paired_test_drops_pairs_missing_on_any_side():
    a, b, y = A.copy(), B.copy(), Y.copy()
    a[0], b[1], y[2] = math.nan, math.nan, math.nan
    t = paired_test(a, b, y, "spearman", n_boot=100, seed=0)
    keep = np.ones(len(Y), bool)
    keep[[0, 1, 2]] = False
    ref = paired_test(A[keep], B[keep], Y[keep], "spearman", n_boot=100, seed=0)
    assert t.n == 9 and (t.difference, t.ci_low, t.ci_high, t.p_value) == (
        ref.difference,
        ref.ci_low,
        ref.ci_high,
        ref.p_value,
    )


def test_paired_test_without_resamples_keeps_the_difference():
    t = paired_test(A, B, Y, "kendall", ("m1", "m2"), n_boot=0, seed=0)
    assert (t.method, t.metric_a, t.metric_b, t.n) == ("kendall", "m1", "m2", len(Y))
    assert t.difference == pytest.approx(scipy_coefficient("kendall", A, Y) - scipy_coefficient("kendall", B, Y))
    assert math.isnan(t.ci_low) and math.isnan(t.ci_high) and math.isnan(t.p_value)
    few = paired_test(A[:2], B[:2], Y[:2], "kendall", n_boot=50, seed=0)
    assert few.n == 2 and math.isnan(few.ci_low)
    three = paired_test(A[:3], B[:3], Y[:3], "kendall", n_boot=1, seed=0)
    assert three.n == 3 and three.ci_low == three.ci_high or math.isnan(three.ci_low)
