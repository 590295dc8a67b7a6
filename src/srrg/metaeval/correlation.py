"""Rank correlations of a metric with human scores, with seeded bootstrap confidence intervals.

Resampling unit: pairs by default; with cluster ids (the case of a RadPref pair, the study of a
ReXVal pair) whole clusters are drawn with replacement and bring all their pairs, because the
candidates of one case share its reference and are not independent (docs/metaeval.md).

Sign convention: both sides are oriented "higher is better" before correlating, so a metric that
agrees with humans correlates positively even when the human signal is an error count (the
caller negates lower-is-better series; see srrg.rank_correlation.orient). Pairs with a missing value on either side
are dropped and counted, never imputed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from srrg.rank_correlation import ALL_METHODS, coefficient
from srrg.resampling import bootstrap_indices, bootstrap_p, percentile_ci

Clusters = Sequence[str] | np.ndarray | None
# why a CI is (or is not) given: the status of every Correlation / PairedTest (docs/metaeval.md)
CI_STATUSES = ("ok", "not_resampled", "too_few_pairs", "too_few_cases", "no_finite_resample")


@dataclass(frozen=True)
class Correlation:
    """One metric vs the human score: coefficient, p-value, bootstrap 95% CI, pairs used/dropped,
    the clusters resampled (0: pairs were resampled) and why the CI is NaN when it is (CI_STATUSES)."""

    method: str
    value: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    n_dropped: int
    n_clusters: int = 0
    ci_status: str = "ok"


def complete_pairs(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray, int]:
    """The pairs where both values are finite, and how many were dropped."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"series differ in length: {a.shape[0]} vs {b.shape[0]}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep], int((~keep).sum())


# above this many pairs Kendall's tau is computed by scipy (n log n) rather than by all pair signs
DIRECT_KENDALL_MAX = 250


def coefficient_value(method: str, x: np.ndarray, y: np.ndarray) -> float:
    """The coefficient of `coefficient` without its p-value, computed directly with numpy: the same
    number (to rounding) at a fraction of scipy's per-call cost, for the thousands of resamples and
    permutation rounds of one table (docs/metaeval.md). NaN under the same rules."""
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    if method == "kendall":
        if len(x) > DIRECT_KENDALL_MAX:
            return float(stats.kendalltau(x, y, variant="b").statistic)
        sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
        # tau-b: (concordant - discordant) / sqrt(pairs untied in x * pairs untied in y)
        return float((sx * sy).sum() / math.sqrt((sx * sx).sum() * (sy * sy).sum()))
    if method == "spearman":
        x, y = average_ranks(x), average_ranks(y)
    elif method != "pearson":
        raise ValueError(f"unknown correlation method {method!r}; use one of {ALL_METHODS}")
    dx, dy = x - x.mean(), y - y.mean()
    return float(np.clip((dx * dy).sum() / math.sqrt((dx * dx).sum() * (dy * dy).sum()), -1.0, 1.0))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks (as Spearman's rho ranks them)."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return (np.cumsum(counts) - (counts - 1) / 2)[inverse]


def cluster_bootstrap_indices(clusters: Sequence[str] | np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    """n_boot resamples that draw as many clusters as there are, with replacement, each bringing
    all its pair indices (clusters numbered in sorted order; reproducible from the seed)."""
    _, inverse = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(int(inverse.max()) + 1)] if len(inverse) else []
    draws = np.random.default_rng(seed).integers(0, len(members), size=(n_boot, len(members)))
    return [np.concatenate([members[k] for k in row]) for row in draws]


def resample_indices(n: int, n_boot: int, seed: int, clusters: Clusters = None) -> list[np.ndarray] | np.ndarray:
    """Pair resamples, or cluster resamples when cluster ids (one per pair) are given."""
    if clusters is None:
        return bootstrap_indices(n, n_boot, seed)
    if len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster ids for {n} pairs")
    return cluster_bootstrap_indices(clusters, n_boot, seed)


def bootstrap_samples(
    stat: Callable[[np.ndarray], float], n: int, n_boot: int, seed: int, clusters: Clusters = None
) -> np.ndarray:
    """stat over each resample of pair (or cluster) indices: the one resampling every interval of
    the meta-evaluation uses, so a statistic of several series is resampled on the same draws."""
    return np.array([stat(idx) for idx in resample_indices(n, n_boot, seed, clusters)])


def statistic_ci(
    stat: Callable[[np.ndarray], float],
    n: int,
    *,
    n_boot: int,
    seed: int,
    level: float = 0.95,
    clusters: np.ndarray | None = None,
    min_clusters: int = 0,
) -> tuple[float, float, str]:
    """(low, high, ci_status) of a percentile bootstrap CI of any statistic of n kept pairs, with the
    same resamples and the same minimum case count as `correlate` (the human ceiling and the
    tie-calibrated accuracy are resampled exactly like the metrics' correlations)."""
    status = resampling_status(n, clusters, n_boot, min_clusters)
    if status != "ok":
        return math.nan, math.nan, status
    return _ci(bootstrap_samples(stat, n, n_boot, seed, clusters), level)


def _kept(clusters: Clusters, keep: np.ndarray) -> np.ndarray | None:
    return None if clusters is None else np.asarray(clusters, dtype=str)[keep]


def resampling_status(n_pairs: int, clusters: np.ndarray | None, n_boot: int, min_clusters: int) -> str:
    """Whether a bootstrap CI can be given: "ok", or why not: no resamples asked for, fewer than 3
    pairs (no coefficient), or a clustered bootstrap over fewer than min_clusters clusters (its
    resamples are too few and too alike for an interval to mean anything; docs/metaeval.md)."""
    if n_boot <= 0:
        return "not_resampled"
    if n_pairs < 3:
        return "too_few_pairs"
    if clusters is not None and len(set(clusters.tolist())) < min_clusters:
        return "too_few_cases"
    return "ok"


def _ci(samples: np.ndarray, level: float) -> tuple[float, float, str]:
    low, high = percentile_ci(samples, level)
    return low, high, "ok" if math.isfinite(low) else "no_finite_resample"


def correlate(
    metric: Sequence[float],
    human: Sequence[float],
    method: str,
    *,
    n_boot: int,
    seed: int,
    level: float = 0.95,
    clusters: Clusters = None,
    min_clusters: int = 0,
) -> Correlation:
    """Coefficient with p-value and a percentile bootstrap CI over resampled pairs, or over
    resampled clusters when cluster ids are given (seeded); no CI (NaN, with its ci_status) over
    fewer than min_clusters clusters. n_boot and seed: the caller's (MetaevalConfig's)."""
    x, y, dropped = complete_pairs(metric, human)
    kept = _kept(clusters, np.isfinite(np.asarray(metric, dtype=float)) & np.isfinite(np.asarray(human, dtype=float)))
    value, p = coefficient(method, x, y)
    low, high, status = math.nan, math.nan, resampling_status(len(x), kept, n_boot, min_clusters)
    if status == "ok":
        samples = bootstrap_samples(lambda idx: coefficient_value(method, x[idx], y[idx]), len(x), n_boot, seed, kept)
        low, high, status = _ci(samples, level)
    return Correlation(method, value, p, low, high, len(x), dropped, 0 if kept is None else len(set(kept)), status)


@dataclass(frozen=True)
class PairedTest:
    """Difference corr(A) - corr(B) against the same human scores, with its bootstrap CI and a
    two-sided bootstrap p-value (bootstrap_p); status says why both are NaN when they are."""

    method: str
    metric_a: str
    metric_b: str
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    status: str = "ok"


def paired_test(
    a: Sequence[float],
    b: Sequence[float],
    human: Sequence[float],
    method: str,
    names: tuple[str, str] = ("a", "b"),
    *,
    n_boot: int,
    seed: int,
    level: float = 0.95,
    clusters: Clusters = None,
    min_clusters: int = 0,
    cache: dict[Any, np.ndarray] | None = None,
) -> PairedTest:
    """Paired bootstrap: both metrics are correlated on the same resampled pairs (or clusters)
    each round; no CI or p-value (NaN, with its status) over fewer than min_clusters clusters.
    n_boot and seed: the caller's (MetaevalConfig's). cache: a dict shared by the tests of one
    table, so a metric's resampled coefficients on the same kept pairs are computed once, not once
    per metric it is compared with (names must then name the series)."""
    xa, xb, y = (np.asarray(v, dtype=float) for v in (a, b, human))
    keep = np.isfinite(xa) & np.isfinite(xb) & np.isfinite(y)
    xa, xb, y, kept = xa[keep], xb[keep], y[keep], _kept(clusters, keep)
    diff = coefficient(method, xa, y)[0] - coefficient(method, xb, y)[0]
    status = resampling_status(len(y), kept, n_boot, min_clusters)
    if status != "ok":
        return PairedTest(method, *names, diff, math.nan, math.nan, math.nan, len(y), status)
    resampled = [
        _resampled(method, x, y, (name, method, keep.tobytes()), cache, n_boot=n_boot, seed=seed, clusters=kept)
        for x, name in ((xa, names[0]), (xb, names[1]))
    ]
    samples = resampled[0] - resampled[1]  # the same resamples, so the difference of each round
    low, high, status = _ci(samples, level)
    return PairedTest(method, *names, diff, low, high, bootstrap_p(samples), len(y), status)


def _resampled(
    method: str,
    x: np.ndarray,
    y: np.ndarray,
    key: Any,
    cache: dict[Any, np.ndarray] | None,
    *,
    n_boot: int,
    seed: int,
    clusters: np.ndarray | None,
) -> np.ndarray:
    """The coefficient of x with y on every resample, from the cache when it holds the key."""
    if cache is not None and key in cache:
        return cache[key]
    samples = bootstrap_samples(lambda idx: coefficient_value(method, x[idx], y[idx]), len(y), n_boot, seed, clusters)
    if cache is not None:
        cache[key] = samples
    return samples
