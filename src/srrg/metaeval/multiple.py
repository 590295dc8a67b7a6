"""Multiple-comparison adjustment of p-values (docs/metrics.md, "Comparing systems"): Holm's
step-down method controls the family-wise error rate (the default); Benjamini-Hochberg controls
the false discovery rate. NaN p-values are not part of the family and stay NaN."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

CORRECTIONS = ("holm", "bh", "none")


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
