"""How a metric's corpus value follows from its per-report columns (docs/metrics.md, "Comparing
systems"): the mean of the per-report values (NaN skipped), except where the corpus value is not a
mean: CE micro precision/recall/F1 are recomputed from per-report counts and BLEU from its per-pair
n-gram statistics, so both equal the summary's numbers on the full set. `srrg compare` resamples
these statistics; the RadJudge ranking check (srrg.metaeval.radjudge) reads them per candidate."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from srrg.metrics.nlg import BLEU_STATS, corpus_bleu
from srrg.resampling import Stat

MEAN = "mean of per-report values"
COUNT_COLUMNS = ("ce_tp", "ce_fp", "ce_fn")
BLEU_COLUMNS = tuple(f"bleu_stat_{s}" for s in BLEU_STATS)
BLEU_KEYS = tuple(f"bleu_{k}" for k in range(1, 5))


@dataclass(frozen=True)
class Statistic:
    """How one metric's corpus value follows from per-report columns."""

    key: str
    columns: tuple[str, ...]
    fn: Stat
    label: str


def column_mean(values: np.ndarray) -> float:
    col = values[:, 0]
    kept = col[~np.isnan(col)]
    return float(kept.mean()) if kept.size else math.nan


def _micro(part: str) -> Stat:
    """CE micro precision / recall / F1 from per-report tp, fp, fn columns (zero denominator -> 0)."""

    def stat(values: np.ndarray) -> float:
        tp, fp, fn = values.sum(axis=0)
        num, den = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "f1": (2 * tp, 2 * tp + fp + fn)}[part]
        return float(num / den) if den else 0.0

    return stat


def _corpus_bleu(k: int) -> Stat:
    def stat(values: np.ndarray) -> float:
        return float(corpus_bleu(values.sum(axis=0))[k - 1])

    return stat


def statistics(columns: Sequence[str]) -> list[Statistic]:
    """The statistics a per-report table supports: every numeric column's mean; CE micro P/R/F1
    when its count columns are present; corpus BLEU (replacing the mean of sentence BLEU) when the
    BLEU statistics columns are present. Count and statistics columns are not compared themselves."""
    hidden = set(COUNT_COLUMNS) | set(BLEU_COLUMNS)
    corpus = set(BLEU_COLUMNS) <= set(columns)
    stats = [
        Statistic(c, (c,), column_mean, "mean of sentence BLEU, not corpus BLEU" if c in BLEU_KEYS else MEAN)
        for c in columns
        if c not in hidden and not (corpus and c in BLEU_KEYS)
    ]
    if corpus:
        stats += [
            Statistic(f"bleu_{k}", BLEU_COLUMNS, _corpus_bleu(k), "corpus BLEU, as in summary.csv") for k in range(1, 5)
        ]
    if set(COUNT_COLUMNS) <= set(columns):
        stats += [
            Statistic(f"ce_{p}_micro", COUNT_COLUMNS, _micro(p), "micro, from per-report counts")
            for p in ("precision", "recall", "f1")
        ]
    return stats
