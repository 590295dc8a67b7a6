"""The settings of `srrg compare` (docs/metrics.md, "Comparing systems"), and the multiple-comparison
corrections it and the meta-evaluation's tests between metrics offer (srrg.resampling.adjust)."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Literal

from srrg.settings.fields import Settings, doc

# holm: family-wise error rate; bh: Benjamini-Hochberg false discovery rate; none: raw p-values
Correction = Literal["holm", "bh", "none"]
CORRECTIONS: tuple[str, ...] = typing.get_args(Correction)


@dataclass(frozen=True)
class CompareConfig(Settings):
    """How `srrg compare` tests two systems on the same studies: a paired bootstrap for the CIs and
    approximate randomization for the p-values, adjusted over all metrics x system pairs."""

    n_boot: int = field(default=1000, metadata=doc("Bootstrap resamples of the studies.", minimum=1))
    n_rounds: int = field(
        default=10000,
        metadata=doc("Approximate-randomization rounds (all 2^n swaps when that is fewer).", minimum=1),
    )
    seed: int = field(default=0, metadata=doc("Seed of both tests: the same seed gives the same CIs and p-values."))
    ci_level: float = field(
        default=0.95, metadata=doc("Coverage of the confidence intervals.", exclusiveMinimum=0, exclusiveMaximum=1)
    )
    correction: Correction = field(
        default="holm", metadata=doc("Multiple-comparison adjustment over all metrics x system pairs.")
    )
