"""Resampling and multiple testing: the statistics `srrg compare` and `srrg.metaeval` share
(docs/metrics.md, "Comparing systems"; docs/metaeval.md): seeded bootstrap resamples, percentile
intervals and paired-bootstrap p-values, the approximate-randomization (paired permutation) test,
and the adjustment of p-values for multiple comparisons: Holm's step-down method controls the
family-wise error rate (the default); Benjamini-Hochberg controls the false discovery rate. NaN
p-values are not part of the family and stay NaN."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from srrg.settings.compare import CORRECTIONS

Stat = Callable[[np.ndarray], float]


def bootstrap_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    """n_boot resamples of n pair indices with replacement, reproducible from the seed."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def percentile_ci(samples: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile bootstrap interval at `level` over the finite samples; NaN bounds when none is."""
    kept = samples[np.isfinite(samples)]
    if kept.size == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_p(differences: np.ndarray) -> float:
    """Two-sided paired-bootstrap p-value with the +1 correction: of the B finite resampled
    differences, the count on the far side of zero plus one, over B + 1, doubled (capped at 1); NaN
    when none is finite. B resamples cannot support a smaller p than bootstrap_p_floor(B)
    (docs/metrics.md, "Comparing systems"). Serves paired_test and srrg compare."""
    kept = differences[np.isfinite(differences)]
    if not kept.size:
        return math.nan
    far = min(int(np.sum(kept <= 0)), int(np.sum(kept >= 0)))
    return min(1.0, 2 * (far + 1) / (kept.size + 1))


def bootstrap_p_floor(differences: np.ndarray) -> float:
    """The smallest value bootstrap_p can give for these resamples: 2 / (B + 1), B the finite ones
    (NaN when none is)."""
    finite = int(np.isfinite(differences).sum())
    return min(1.0, 2 / (finite + 1)) if finite else math.nan


def enumerates_all(n: int, n_rounds: int) -> bool:
    """Whether the randomization test enumerates all 2^n swap patterns (at most n_rounds of them)."""
    return n < 63 and 2**n <= n_rounds


def randomization_floor(n: int, n_rounds: int) -> float:
    """The smallest p randomization_p can give: 1 / (n_rounds + 1) when rounds are sampled; 0 when
    the test is exact (its p is then exact, whatever its size)."""
    return 0.0 if enumerates_all(n, n_rounds) else 1 / (n_rounds + 1)


def swap_masks(n: int, n_rounds: int, seed: int) -> tuple[np.ndarray, bool]:
    """Which studies swap their two outputs in each round: all 2^n patterns when that is at most
    n_rounds (an exact permutation test), else n_rounds seeded random patterns."""
    if enumerates_all(n, n_rounds):
        return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool), True
    return np.random.default_rng(seed).random((n_rounds, n)) < 0.5, False


def randomization_p(
    a: np.ndarray, b: np.ndarray, stat: Stat, n_rounds: int, seed: int, units: np.ndarray | None = None
) -> float:
    """Approximate randomization (paired permutation) test of stat(b) - stat(a): per round each
    study's two outputs swap with probability 1/2; p = share of rounds with a difference at least
    as large in absolute value ((count + 1) / (rounds + 1) when sampled, count / 2^n when exact).
    units: the unit number (0..u-1) of every row, whose rows swap together (the pairs of one case
    in the meta-evaluation's tests between metrics; docs/metaeval.md); None: each row is a unit."""
    observed = abs(stat(b) - stat(a))
    if math.isnan(observed):
        return math.nan
    masks, exact = swap_masks(len(a) if units is None else int(units.max()) + 1, n_rounds, seed)
    count = 0
    for mask in masks:
        m = (mask if units is None else mask[units])[:, None]
        count += abs(stat(np.where(m, a, b)) - stat(np.where(m, b, a))) >= observed - 1e-12
    return count / len(masks) if exact else (count + 1) / (len(masks) + 1)


# ---- multiple testing -------------------------------------------------------------------------


def holm(p: np.ndarray) -> np.ndarray:
    """Holm: the i-th smallest of m p-values times (m - i + 1), made monotone, capped at 1."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg: the i-th smallest of m p-values times m / i, made monotone from the
    largest down, capped at 1."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(1.0, stepped)
    return out


def adjust(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values in the input order; method holm | bh | none."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; use one of {CORRECTIONS}")
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    finite = np.isfinite(p)
    if method != "none" and finite.any():
        out[finite] = (holm if method == "holm" else benjamini_hochberg)(p[finite])
    return [float(v) if np.isfinite(v) else math.nan for v in out]
