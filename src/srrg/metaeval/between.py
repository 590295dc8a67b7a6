"""Is metric A better than metric B on the same ratings? (docs/metaeval.md, "Tests between
metrics"): a paired permutation test and the paired clustered bootstrap of the difference in
correlation (Deutsch, Dror & Roth 2021), the Williams test for two dependent Pearson correlations
sharing the human score (Williams 1959, in Steiger's 1980 form), each adjusted over all metric
pairs with the correction `srrg compare` offers, and the metric x metric "better than" matrix."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

from srrg.metaeval.correlation import (
    DIRECT_KENDALL_MAX,
    coefficient_value,
    paired_test,
    resampling_status,
)
from srrg.rank_correlation import coefficient
from srrg.resampling import adjust, randomization_p, swap_masks

# the statistic the "better than" matrix and the permutation test rank metrics by
MATRIX_METHOD = "kendall"
TESTS = ("p_permutation", "p_bootstrap", "p_williams")  # the Williams test is for Pearson only


def comparable(values: np.ndarray, method: str) -> np.ndarray:
    """A metric's scores on a scale two metrics share, so that swapping them between metrics is
    meaningful: ranks for the rank correlations (which they leave unchanged), z-scores for
    Pearson (which it leaves unchanged)."""
    if method == "pearson":
        spread = values.std()
        return (values - values.mean()) / (spread if spread > 0 else 1.0)
    return stats.rankdata(values)


def permutation_p(
    a: np.ndarray,
    b: np.ndarray,
    human: np.ndarray,
    method: str,
    *,
    n_rounds: int,
    seed: int,
    clusters: Sequence[str] | None = None,
) -> float:
    """Two-sided paired permutation test of corr(a, human) - corr(b, human) on complete pairs: in
    every round the two metrics' (comparable) scores swap, case by case when clusters are given
    (the pairs of one case swap together), pair by pair otherwise, with the rounds of
    srrg.resampling.randomization_p (exact over all 2^u swap patterns when that is at most n_rounds).
    Kendall tau-b (up to DIRECT_KENDALL_MAX pairs) and Pearson are computed for all rounds at once
    (round_coefficients: the same numbers as one round at a time); other methods round by round."""
    xa, xb = comparable(a, method), comparable(b, method)
    units = None if clusters is None else np.unique(np.asarray(clusters, dtype=str), return_inverse=True)[1]
    if method not in ("kendall", "pearson") or (method == "kendall" and len(human) > DIRECT_KENDALL_MAX):

        def stat(v: np.ndarray) -> float:
            return coefficient_value(method, v[:, 0], human)

        return randomization_p(xa[:, None], xb[:, None], stat, n_rounds, seed, units)
    observed = abs(coefficient_value(method, xb, human) - coefficient_value(method, xa, human))
    if math.isnan(observed):
        return math.nan
    masks, exact = swap_masks(len(xa) if units is None else int(units.max()) + 1, n_rounds, seed)
    m = masks if units is None else masks[:, units]
    first, second = round_coefficients(method, xa, xb, human, m)
    with np.errstate(invalid="ignore"):
        count = int((np.abs(first - second) >= observed - 1e-12).sum())  # NaN rounds never count
    return count / len(masks) if exact else (count + 1) / (len(masks) + 1)  # as randomization_p


def round_coefficients(
    method: str, xa: np.ndarray, xb: np.ndarray, y: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """coefficient_value(method, where(m_r, xa, xb), y) and the same of where(m_r, xb, xa) for every
    round r (row of the bool matrix m), bit for bit, NaN where a side is constant. Kendall: with
    S(x) the pair-sign matrix, the swapped series' signs come from four fixed matrices (both rows
    from a, both from b, one from each), so concordance and untied-pair counts of all rounds are
    quadratic forms in m, exact integer sums (one matrix product per form)."""
    if len(y) < 3 or np.all(y == y[0]):
        nan = np.full(len(m), math.nan)
        return nan, nan
    if method == "pearson":
        return _pearson_rows(np.where(m, xa, xb), y), _pearson_rows(np.where(m, xb, xa), y)
    if method != "kendall":
        raise ValueError(f"round_coefficients serves kendall and pearson, not {method!r}")
    sy = np.sign(y[:, None] - y[None, :])
    same_a, same_b = np.sign(xa[:, None] - xa[None, :]), np.sign(xb[:, None] - xb[None, :])
    cross = np.sign(xb[:, None] - xa[None, :])  # row i from b, row j from a
    mf = m.astype(float)
    uf = 1.0 - mf

    def forms(k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """m'Km, u'Ku, u'Km and m'Ku of every round (u = 1 - m)."""
        mk = mf @ k
        uk = k.sum(axis=0) - mk  # u'K = 1'K - m'K, exact for integer matrices
        return (mk * mf).sum(axis=1), (uk * uf).sum(axis=1), (uk * mf).sum(axis=1), (mk * uf).sum(axis=1)

    # x1 = where(m, xa, xb): pairs with both rows from a (m, m), both from b (u, u), i from b and
    # j from a (u, m: `cross`), i from a and j from b (m, u: minus cross transposed, whose forms
    # equal those of (u, m)); x2 = where(m, xb, xa) swaps the roles of m and u
    aa, aa_u, _, _ = forms(same_a * sy)
    bb_m, bb, _, _ = forms(same_b * sy)
    _, _, c_um, c_mu = forms(cross * sy)
    ta, ta_u, _, _ = forms(same_a * same_a)
    tb_m, tb, _, _ = forms(same_b * same_b)
    _, _, t_um, t_mu = forms(cross * cross)
    untied_y = (sy * sy).sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        first = (aa + bb + 2 * c_um) / np.sqrt((ta + tb + 2 * t_um) * untied_y)
        second = (aa_u + bb_m + 2 * c_mu) / np.sqrt((ta_u + tb_m + 2 * t_mu) * untied_y)
    return first, second


def _pearson_rows(v: np.ndarray, y: np.ndarray) -> np.ndarray:
    """coefficient_value("pearson", row, y) of every row of v (the same operations, row-wise)."""
    dx, dy = v - v.mean(axis=1, keepdims=True), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip((dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum()), -1.0, 1.0)
    return np.where(np.all(v == v[:, :1], axis=1), math.nan, r)


def williams(r_a: float, r_b: float, r_ab: float, n: int) -> tuple[float, float]:
    """(t, two-sided p) of the Williams test that two Pearson correlations with one shared variable
    (the human score) differ: r_a = r(human, A), r_b = r(human, B), r_ab = r(A, B), t with n - 3
    degrees of freedom (Williams 1959 in Steiger 1980; docs/metaeval.md). NaN below 4 pairs or an
    undefined correlation."""
    if n < 4 or not all(math.isfinite(v) for v in (r_a, r_b, r_ab)):
        return math.nan, math.nan
    det = 1 - r_a**2 - r_b**2 - r_ab**2 + 2 * r_a * r_b * r_ab
    mean = (r_a + r_b) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r_ab) ** 3
    if denominator <= 0:
        return math.nan, math.nan
    t = (r_a - r_b) * math.sqrt((n - 1) * (1 + r_ab) / denominator)
    return t, float(2 * stats.t.sf(abs(t), n - 3))


def metric_tests(
    xs: Mapping[str, np.ndarray],
    human: np.ndarray,
    boot: Mapping[str, Any],
    *,
    n_permutations: int,
    correction: str,
) -> list[dict[str, Any]]:
    """Every unordered metric pair (in the metrics' order) on the pairs both have, for Kendall tau-b
    (permutation test and paired bootstrap) and Pearson (the same two and the Williams test), each
    family of p-values adjusted over all metric pairs of one method. No permutation p where the
    bootstrap has too few cases either: the swap distribution of a few cases is as coarse."""
    rows = []
    clusters = boot.get("clusters")
    cache: dict[Any, np.ndarray] = {}  # each metric's resampled coefficients, once per method and kept pairs
    for method in (MATRIX_METHOD, "pearson"):
        for a, b in combinations(xs, 2):
            keep = np.isfinite(xs[a]) & np.isfinite(xs[b]) & np.isfinite(human)
            kept = None if clusters is None else np.asarray(clusters, dtype=str)[keep]
            xa, xb, y = xs[a][keep], xs[b][keep], human[keep]
            test = paired_test(xs[a], xs[b], human, method, (a, b), **boot, cache=cache)
            ok = resampling_status(len(y), kept, n_permutations, boot.get("min_clusters", 0)) == "ok"
            perm = permutation_p(xa, xb, y, method, n_rounds=n_permutations, seed=boot["seed"], clusters=kept)
            row = {
                "method": method, "metric_a": a, "metric_b": b, "difference": test.difference,
                "ci_low": test.ci_low, "ci_high": test.ci_high, "p_bootstrap": test.p_value,
                "p_permutation": perm if ok else math.nan, "n": test.n, "status": test.status,
            }  # fmt: skip
            if method == "pearson":
                t, p = williams(coefficient(method, xa, y)[0], coefficient(method, xb, y)[0],
                                coefficient(method, xa, xb)[0], len(y))  # fmt: skip
                row |= {"williams_t": t, "p_williams": p}
            rows.append(row)
    for method, keys in ((MATRIX_METHOD, TESTS[:2]), ("pearson", TESTS)):
        family = [r for r in rows if r["method"] == method]
        for key in keys:
            for r, p in zip(family, adjust([r[key] for r in family], correction)):
                r[f"{key}_adj"] = p
    return rows


def better_than(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> list[list[float | None]]:
    """matrix[i][j]: the adjusted permutation p that metric i correlates better (Kendall tau-b) than
    metric j where it does (difference > 0; NaN where the test was not run: too few cases), None
    elsewhere (the diagonal, the worse one of a pair, equal coefficients)."""
    index = {m: k for k, m in enumerate(metrics)}
    matrix: list[list[float | None]] = [[None] * len(metrics) for _ in metrics]
    for r in rows:
        if r["method"] != MATRIX_METHOD or not math.isfinite(r["difference"]) or r["difference"] == 0:
            continue
        better, worse = (r["metric_a"], r["metric_b"]) if r["difference"] > 0 else (r["metric_b"], r["metric_a"])
        matrix[index[better]][index[worse]] = r["p_permutation_adj"]
    return matrix
