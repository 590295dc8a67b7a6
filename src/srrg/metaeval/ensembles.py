"""Metric ensembles (VERT): least squares fitted on a train split of the rated pairs, and the simple
average of z-scored members fitted on nothing; both reported on the held-out split only, so an
ensemble never scores the data it was fitted on."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from srrg.errors import UserError
from srrg.rank_correlation import coefficient


@dataclass(frozen=True)
class EnsembleResult:
    """weights: feature -> coefficient plus "intercept"; correlations on the held-out pairs."""

    name: str
    features: tuple[str, ...]
    weights: dict[str, float]
    n_train: int
    n_test: int
    kendall: float
    kendall_p: float
    spearman: float
    spearman_p: float


def hash_order(pair_ids: Sequence[str], seed: int) -> np.ndarray:
    """Positions of the pairs ranked by a hash of seed and id: a pair's rank among others depends
    only on its id and the seed, not on row order or on which other pairs exist."""
    keys = [hashlib.sha256(f"{seed}:{p}".encode()).hexdigest() for p in pair_ids]
    return np.argsort(keys, kind="stable")


def first_n(pair_ids: Sequence[str], pool: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Mask of the first n pairs of `pool` in hash_order (all of the pool when it has fewer): the
    stated number of training instances an ensemble is fitted on."""
    chosen = np.zeros(len(pair_ids), dtype=bool)
    ranked = [i for i in hash_order(pair_ids, seed) if pool[i]]
    chosen[ranked[:n]] = True
    return chosen


def split_mask(pair_ids: Sequence[str], test_fraction: float, seed: int) -> np.ndarray:
    """True for held-out pairs. A pair's side depends only on its id and the seed (hash-ranked), so
    adding pairs to a dataset does not reshuffle the others."""
    if not 0.0 < test_fraction < 1.0:
        raise UserError(f"test_fraction must be in (0, 1), got {test_fraction}")
    order = hash_order(pair_ids, seed)
    n_test = max(1, round(len(pair_ids) * test_fraction))
    mask = np.zeros(len(pair_ids), dtype=bool)
    mask[order[:n_test]] = True
    return mask


def fit_linear(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients [intercept, w_1, ..., w_k]."""
    design = np.column_stack([np.ones(len(x)), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return coef


def predict(coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    return coef[0] + x @ coef[1:]


def complete_rows(features: Mapping[str, Sequence[float]], human: Sequence[float]) -> np.ndarray:
    """Pairs with a finite value for every feature and for the human score."""
    x = np.column_stack([np.asarray(features[c], dtype=float) for c in features])
    return np.isfinite(x).all(axis=1) & np.isfinite(np.asarray(human, dtype=float))


def evaluate_ensemble(
    name: str,
    features: Mapping[str, Sequence[float]],
    human: Sequence[float],
    test_mask: np.ndarray,
    train_mask: np.ndarray | None = None,
) -> EnsembleResult:
    """Fit on the complete train rows (train_mask, default: every row outside test_mask), correlate
    predictions with human scores on complete test rows."""
    cols = tuple(features)
    x = np.column_stack([np.asarray(features[c], dtype=float) for c in cols])
    y = np.asarray(human, dtype=float)
    complete = complete_rows(features, human)
    train = complete & (~test_mask if train_mask is None else train_mask & ~test_mask)
    test = complete & test_mask
    if train.sum() <= len(cols) or test.sum() < 3:
        nan = math.nan
        return EnsembleResult(name, cols, {}, int(train.sum()), int(test.sum()), nan, nan, nan, nan)
    coef = fit_linear(x[train], y[train])
    pred = predict(coef, x[test])
    tau, tau_p = coefficient("kendall", pred, y[test])
    rho, rho_p = coefficient("spearman", pred, y[test])
    weights = {"intercept": float(coef[0]), **{c: float(w) for c, w in zip(cols, coef[1:])}}
    return EnsembleResult(name, cols, weights, int(train.sum()), int(test.sum()), tau, tau_p, rho, rho_p)


def zscores(x: np.ndarray) -> np.ndarray:
    """Each column centred on its mean and divided by its population standard deviation (a
    constant column becomes 0: it cannot order the pairs, so it must not sway the mean)."""
    centred = x - x.mean(axis=0)
    std = x.std(axis=0)
    return np.divide(centred, std, out=np.zeros_like(centred), where=std > 0)


def evaluate_mean_ensemble(
    name: str,
    features: Mapping[str, Sequence[float]],
    human: Sequence[float],
    test_mask: np.ndarray,
    train_mask: np.ndarray | None = None,  # evaluate_ensemble's signature: nothing is fitted here
) -> EnsembleResult:
    """VERT's simple-average ensemble: the mean of the members' z-scores over the complete
    held-out pairs, fitted on nothing (no human score is read to build it; the z-scores use only
    the metric values), correlated with the human scores of the same pairs the least-squares
    ensemble is scored on. Z-scores, not min-max: docs/judges.md ("Ensembles")."""
    cols = tuple(features)
    x = np.column_stack([np.asarray(features[c], dtype=float) for c in cols])
    y = np.asarray(human, dtype=float)
    complete = np.isfinite(x).all(axis=1) & np.isfinite(y)
    test = complete & test_mask
    if test.sum() < 3:
        nan = math.nan
        return EnsembleResult(name, cols, {}, 0, int(test.sum()), nan, nan, nan, nan)
    pred = zscores(x[test]).mean(axis=1)
    tau, tau_p = coefficient("kendall", pred, y[test])
    rho, rho_p = coefficient("spearman", pred, y[test])
    weights = {c: 1.0 / len(cols) for c in cols}  # equal weights on the z-scores; nothing is fitted (n_train 0)
    return EnsembleResult(name, cols, weights, 0, int(test.sum()), tau, tau_p, rho, rho_p)
