"""Correlation, bootstrap, paired test, count-level P/R/F1 and ensembles on known data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from srrg.metaeval.correlation import complete_pairs, correlate, paired_test
from srrg.metaeval.counts import category_prf, count_prf
from srrg.metaeval.ensembles import evaluate_ensemble, fit_linear, split_mask
from srrg.rank_correlation import orient
from srrg.resampling import bootstrap_p, percentile_ci

# ties on both sides
X = [1, 2, 2, 3, 4, 4, 4, 5, 6, 7]
Y = [2, 1, 3, 3, 5, 4, 4, 6, 6, 9]


def test_kendall_tau_b_and_spearman_match_scipy_with_ties():
    k = correlate(X, Y, "kendall", n_boot=0, seed=0)
    s = correlate(X, Y, "spearman", n_boot=0, seed=0)
    ref_k = stats.kendalltau(X, Y, variant="b")
    ref_s = stats.spearmanr(X, Y)
    assert k.value == pytest.approx(ref_k.statistic) and k.p_value == pytest.approx(ref_k.pvalue)
    assert s.value == pytest.approx(ref_s.statistic) and s.p_value == pytest.approx(ref_s.pvalue)


def test_kendall_tau_b_hand_computed():
    # x = (1, 2, 2), y = (1, 2, 3): concordant 2, discordant 0, one tie in x only
    # tau_b = (2 - 0) / sqrt((3 - 1) * 3) = 2 / sqrt(6)
    assert correlate([1, 2, 2], [1, 2, 3], "kendall", n_boot=0, seed=0).value == pytest.approx(2 / math.sqrt(6))


def test_sign_convention_and_missing_values():
    errors = [0, 1, 1, 3, 5]
    metric = [0.9, 0.7, 0.8, 0.3, 0.1]
    c = correlate(metric, orient(errors, lower_is_better=True), "spearman", n_boot=0, seed=0)
    assert c.value > 0.9
    a, b, dropped = complete_pairs([1.0, math.nan, 3.0], [1.0, 2.0, None])
    assert list(a) == [1.0] and dropped == 2
    assert math.isnan(correlate([1, 1, 1], [1, 2, 3], "kendall", n_boot=0, seed=0).value)  # constant metric


def test_bootstrap_ci_is_reproducible_with_a_seed():
    a = correlate(X, Y, "kendall", n_boot=200, seed=7)
    b = correlate(X, Y, "kendall", n_boot=200, seed=7)
    c = correlate(X, Y, "kendall", n_boot=200, seed=8)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.ci_low <= a.value <= a.ci_high


def test_paired_bootstrap_difference():
    rng = np.random.default_rng(0)
    human = rng.normal(size=60)
    good = human + rng.normal(scale=0.3, size=60)
    bad = rng.normal(size=60)
    t = paired_test(good, bad, human, "kendall", ("good", "bad"), n_boot=300, seed=1)
    assert t.difference > 0.3 and t.ci_low > 0 and t.p_value < 0.01
    same = paired_test(good, good, human, "kendall", n_boot=50, seed=1)
    assert same.difference == 0 and same.p_value == 1.0


def test_count_prf_hand_computed():
    # judge g, human h: (2, 1) -> TP 1, FP 1; (0, 2) -> FN 2; (1, 1) -> TP 1
    r = count_prf([2, 0, 1], [1, 2, 1])
    assert (r["tp"], r["fp"], r["fn"]) == (2, 1, 2)
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == pytest.approx(1 / 2)
    assert r["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert count_prf([0, 0], [0, 0]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "tp": 0.0, "fp": 0.0, "fn": 0.0}
    both = category_prf({"a": [2, 0], "b": [1, 1]}, {"a": [1, 2], "b": [1, 1], "c": [3, 3]})
    assert set(both) == {"a", "b", "all"}
    assert (both["all"]["tp"], both["all"]["fp"], both["all"]["fn"]) == (3, 1, 2)


def test_linear_ensemble_fitted_on_train_scored_on_test():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    assert fit_linear(x, 2 * x[:, 0] + 1) == pytest.approx([1.0, 2.0])
    ids = [f"p{i}" for i in range(40)]
    mask = split_mask(ids, 0.25, seed=3)
    assert mask.sum() == 10 and (split_mask(ids, 0.25, seed=3) == mask).all()
    assert split_mask(ids + ["extra"], 0.25, seed=3)[:40].sum() >= 9  # adding a pair barely moves the split
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=40), rng.normal(size=40)
    human = a + b
    res = evaluate_ensemble("ab", {"a": a, "b": b}, human, mask)
    assert res.n_train == 30 and res.n_test == 10
    assert res.weights["a"] == pytest.approx(1.0) and res.weights["b"] == pytest.approx(1.0)
    assert res.kendall == pytest.approx(1.0)


def test_bootstrap_helpers_skip_non_finite_resamples():
    """Shared by paired_test and srrg compare: percentile bounds and the doubled far-side share."""
    assert percentile_ci(np.array([0.0, 1.0, 2.0, 3.0, 4.0, np.nan]), 0.5) == (1.0, 3.0)  # 25th/75th percentiles
    assert bootstrap_p(np.array([1.0, 2.0, 3.0, -1.0, np.nan])) == pytest.approx(
        2 * 2 / 5
    )  # (1 + 1) / (4 + 1), doubled
    assert bootstrap_p(np.array([0.0, 0.0])) == 1.0  # capped
    assert all(math.isnan(v) for v in (*percentile_ci(np.array([np.nan]), 0.95), bootstrap_p(np.array([np.inf]))))
