"""Count-level agreement between judge-predicted and human error counts (VERT's formulation).

Per report and category: TP = min(g, h), FP = max(0, g - h), FN = max(0, h - g) with g the judge's
count and h the human count; summed over reports, then P = TP/(TP+FP), R = TP/(TP+FN) and F1;
a zero denominator gives 0. A report whose judge answer failed (no answer, cut off, unparseable)
has NaN counts (docs/judges.md): it is skipped here, never read as "no errors".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def count_prf(judge: Sequence[float], human: Sequence[float]) -> dict[str, float]:
    """Precision, recall, F1 and the summed TP/FP/FN of one category; pairs with a missing count
    on either side are skipped."""
    tp = fp = fn = 0.0
    for g, h in zip(judge, human, strict=True):
        if g is None or h is None or math.isnan(g) or math.isnan(h):
            continue
        tp += min(g, h)
        fp += max(0.0, g - h)
        fn += max(0.0, h - g)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def category_prf(
    judge: Mapping[str, Sequence[float]], human: Mapping[str, Sequence[float]]
) -> dict[str, dict[str, float]]:
    """count_prf for every category present on both sides, plus the micro-average "all" over them."""
    shared = [c for c in judge if c in human]
    out = {c: count_prf(judge[c], human[c]) for c in shared}
    if shared:
        tp, fp, fn = (sum(out[c][k] for c in shared) for k in ("tp", "fp", "fn"))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        out["all"] = {
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "tp": tp,
            "fp": fp,
            "fn": fn,
        }
    return out
