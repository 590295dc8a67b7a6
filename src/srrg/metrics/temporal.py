"""Temporal claims (docs/metrics.md, "Temporal claims"): how often generated reports state a
comparison with a previous study ("unchanged", "improved", "new", "compared with the prior").

A model that never saw the prior study cannot know that anything is unchanged; a report that says
so for a patient's first study is a hallucination a radiologist spots at once. The measure is the
share of hypotheses that state a comparison, overall and split by whether the study has a prior
(the `prior_study_id` column of the --refs file, written by ingest: srrg.sources.priors). Without
that column only the overall rate is known; the split rates are NaN.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from srrg.metrics.base import Metric, MetricResult, register

NAME = "temporal_claims"
PRIOR = "prior"  # the context key read_contexts fills from --refs' prior_study_id: "yes" or "no"
# phrases that compare with an earlier study; matched case-insensitively on word boundaries
PHRASES = (
    r"unchanged",
    r"no (?:significant |interval |appreciable )?change",
    r"not (?:significantly )?changed",
    r"stable",
    r"stably",
    r"improv(?:ed|ing|ement)",
    r"worse(?:n|ned|ning)?",
    r"resolv(?:ed|ing)",
    r"new(?:ly)?",
    r"interval(?:ly)?",
    r"persist(?:s|ent|ing)?",
    r"re-?demonstrat(?:ed|es|ion)",
    r"again (?:seen|noted|demonstrated|identified)",
    r"previous(?:ly)?",
    r"(?:since|than|from|on|to) (?:the )?(?:prior|last|earlier)",
    r"prior (?:study|studies|exam|examination|examinations|radiograph|radiographs|film|films|image|images|imaging)",
    r"compared (?:with|to)",
    r"in comparison (?:with|to)",
    r"(?:has|have) (?:increased|decreased|progressed|developed)",
    r"(?:increased|decreased|increasing|decreasing) (?:in size|since)",
)
PATTERN = re.compile(r"\b(?:" + "|".join(PHRASES) + r")\b", re.IGNORECASE)
KEYS = (
    "temporal_claim",
    "temporal_claim_rate",
    "temporal_claim_rate_no_prior",
    "temporal_claim_rate_with_prior",
    "temporal_claim_n_no_prior",
    "temporal_claim_n_with_prior",
)


def states_comparison(text: str) -> bool:
    """Whether a report states a comparison with an earlier study (one of PHRASES)."""
    return PATTERN.search(text or "") is not None


def rate(flags: Sequence[float]) -> float:
    """Mean of 0/1 flags; NaN for none (no study in that group)."""
    return sum(flags) / len(flags) if flags else math.nan


def temporal_claims(hyps: Sequence[str], has_prior: Sequence[bool | None]) -> MetricResult:
    """Per report: 1.0 when the hypothesis states a comparison; summary: the rate over all, over
    studies without a prior and with one (has_prior None: unknown, counted in the overall rate
    only), and the size of each group."""
    flags = [float(states_comparison(h)) for h in hyps]
    without = [f for f, p in zip(flags, has_prior, strict=True) if p is False]
    with_prior = [f for f, p in zip(flags, has_prior, strict=True) if p is True]
    summary = {
        "temporal_claim_rate": rate(flags),
        "temporal_claim_rate_no_prior": rate(without),
        "temporal_claim_rate_with_prior": rate(with_prior),
        "temporal_claim_n_no_prior": float(len(without)),
        "temporal_claim_n_with_prior": float(len(with_prior)),
    }
    return MetricResult({"temporal_claim": flags}, summary)


def prior_flag(context: Mapping[str, str]) -> bool | None:
    """A pair's has-prior flag from its context: True/False, None when the refs gave no prior column."""
    value = context.get(PRIOR)
    return None if value is None else value == "yes"


@register
class TemporalClaims(Metric):
    name = NAME
    keys = KEYS

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        return temporal_claims(hyps, [None] * len(hyps))

    def compute_with_context(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]]
    ) -> MetricResult:
        return temporal_claims(hyps, [prior_flag(c) for c in contexts])
