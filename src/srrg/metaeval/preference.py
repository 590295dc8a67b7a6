"""Within-case preference agreement (docs/metaeval.md): for sets that rate two (or more) candidates
of the same case, how often does a metric order two candidates of one case as the radiologists'
mean rating does? Pairwise sets such as RadPref are read this way by their authors; a correlation
over all pairs mixes easy and hard cases.

Both sides are oriented higher-is-better first (see correlation.orient). Every within-case pair of
candidates with finite values is one comparison: `agree` / `disagree` when humans prefer one
candidate and the metric orders them the same / the other way, `metric_tie` when humans prefer one
and the metric scores both equal (within `tol`), `human_tie` when the mean human ratings are equal
(left out of both shares)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Agreement:
    """Counts of within-case comparisons; agreement = agree / (agree + disagree + metric_tie) (a
    metric tie counts as not agreeing), agreement_untied = agree / (agree + disagree)."""

    n_cases: int
    n_comparisons: int
    agree: int
    disagree: int
    metric_tie: int
    human_tie: int
    agreement: float
    agreement_untied: float


def _share(num: int, den: int) -> float:
    return num / den if den else math.nan


def preference_agreement(
    metric: Sequence[float], human: Sequence[float], clusters: Sequence[str], tol: float = 1e-12
) -> Agreement:
    """Agreement of the metric's within-case order with the human order (inputs one per pair)."""
    m, h = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if not len(m) == len(h) == len(clusters):
        raise ValueError(f"lengths differ: metric {len(m)}, human {len(h)}, clusters {len(clusters)}")
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(clusters):
        if np.isfinite(m[i]) and np.isfinite(h[i]):
            members[str(c)].append(i)
    counts = {"agree": 0, "disagree": 0, "metric_tie": 0, "human_tie": 0}
    cases = 0
    for idx in members.values():
        if len(idx) < 2:
            continue
        cases += 1
        for i, j in itertools.combinations(idx, 2):
            dh, dm = h[i] - h[j], m[i] - m[j]
            if dh == 0:
                counts["human_tie"] += 1
            elif abs(dm) <= tol:
                counts["metric_tie"] += 1
            else:
                counts["agree" if (dh > 0) == (dm > 0) else "disagree"] += 1
    decided = counts["agree"] + counts["disagree"]
    return Agreement(
        cases, sum(counts.values()), counts["agree"], counts["disagree"], counts["metric_tie"], counts["human_tie"],
        _share(counts["agree"], decided + counts["metric_tie"]), _share(counts["agree"], decided),
    )  # fmt: skip
