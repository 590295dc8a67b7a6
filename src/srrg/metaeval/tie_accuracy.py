"""Pairwise accuracy with tie calibration (docs/metaeval.md, "Pairwise accuracy with tie
calibration"; Deutsch et al. 2023): over every pair of rated items, the metric is right when it
orders the two as the human score does, or calls them tied (a difference of at most epsilon) when
the human scores are equal. Epsilon is the metric's own tie threshold, chosen to maximise the
accuracy; on resamples it is chosen again in every resample, so the CI includes that choice."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from srrg.metaeval.correlation import complete_pairs, statistic_ci


@dataclass(frozen=True)
class TieAccuracy:
    """Accuracy at the best epsilon, that epsilon, the accuracy without calibration (epsilon 0: only
    equal scores tie), the bootstrap CI of the calibrated accuracy and its ci_status."""

    accuracy: float
    epsilon: float
    accuracy_untuned: float
    ci_low: float
    ci_high: float
    n: int
    ci_status: str = "ok"


def accuracy_curve(
    metric: np.ndarray, human: np.ndarray, origin: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(candidate epsilons ascending, the accuracy at each) over all item pairs i < j. origin: the
    original item of each position (a resample repeats items); two copies of one item are not a
    pair. The candidates are 0 and every absolute metric difference: between two of them the set
    of tied pairs does not change."""
    first, second = pair_indices(len(metric))
    if origin is not None:
        distinct = origin[first] != origin[second]
        first, second = first[distinct], second[distinct]
    if not len(first):
        return np.zeros(1), np.full(1, math.nan)
    difference = metric[first] - metric[second]
    gap = np.abs(difference)
    human_sign = np.sign(human[first] - human[second])
    agree = (np.sign(difference) == human_sign) & (human_sign != 0)
    order = np.argsort(gap)
    gap, human_tie, agree = gap[order], (human_sign == 0)[order], agree[order]
    tied_right = np.concatenate([[0], np.cumsum(human_tie)])  # human ties among the k smallest gaps
    agree_lost = np.concatenate([[0], np.cumsum(agree)])  # orderings that were right among them
    # every distinct gap (sorted), and k = how many gaps are <= it: the pairs it makes metric ties
    last = np.flatnonzero(np.append(gap[1:] != gap[:-1], True))
    epsilons, k = gap[last], last + 1
    if gap[0] > 0:  # epsilon 0 ties no pair
        epsilons, k = np.concatenate([[0.0], epsilons]), np.concatenate([[0], k])
    correct = tied_right[k] + agree_lost[-1] - agree_lost[k]
    return epsilons, correct / len(gap)


@lru_cache(maxsize=8)
def pair_indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(i, j) of every pair i < j of n positions (the same n on every resample of one table)."""
    return np.triu_indices(n, 1)


def calibrated(metric: np.ndarray, human: np.ndarray, origin: np.ndarray | None = None) -> tuple[float, float]:
    """(best accuracy, the smallest epsilon that reaches it)."""
    epsilons, accuracy = accuracy_curve(metric, human, origin)
    if not np.isfinite(accuracy).any():
        return math.nan, math.nan
    best = int(np.nanargmax(accuracy))
    return float(accuracy[best]), float(epsilons[best])


def tie_calibrated_accuracy(metric: Any, human: Any, boot: Mapping[str, Any]) -> TieAccuracy:
    """Calibrated pairwise accuracy of a metric against the human score, with a CI from the same
    (clustered) resamples as the correlations (boot: the keyword arguments of `correlate`),
    epsilon chosen again in every resample."""
    settings = dict(boot)
    clusters = settings.pop("clusters", None)
    x, y, _ = complete_pairs(metric, human)
    keep = np.isfinite(np.asarray(metric, dtype=float)) & np.isfinite(np.asarray(human, dtype=float))
    kept = None if clusters is None else np.asarray(clusters, dtype=str)[keep]
    accuracy, epsilon = calibrated(x, y)
    untuned = accuracy_curve(x, y)[1][0]
    low, high, status = statistic_ci(lambda idx: calibrated(x[idx], y[idx], idx)[0], len(x), clusters=kept, **settings)
    return TieAccuracy(accuracy, epsilon, float(untuned), low, high, len(x), status)
