"""The findings of a reference and a predicted report as one aligned list, marked as S-Score counts
them (docs/cases.md): the names come from srrg.metrics.sscore.match_names and a matched positive
finding's attributes from attribute_scores, so what the page shows is what the score counted."""

from __future__ import annotations

from dataclasses import dataclass

from srrg.metrics.sscore import attribute_scores, match_names
from srrg.report import Finding, StructuredReport

MATCHED, ATTRIBUTE, MISSED, FALSE = "matched", "attribute", "missed", "false"
MARKS = (MATCHED, ATTRIBUTE, MISSED, FALSE)
POSITIVE, NEGATIVE = "positive", "negative"


@dataclass(frozen=True, slots=True)
class AlignedFinding:
    """One name of one set (positive or negative) of R ∪ H; the mark says which sides have it.
    `ref` / `hyp` are the positive findings of each side (None when that side lacks the name, and
    for negative names, which carry no attributes); `scores` the (s_prob, s_level, s_loc) of a
    positive name that both sides have."""

    name: str
    polarity: str
    mark: str
    ref: Finding | None
    hyp: Finding | None
    scores: tuple[float, float, float] | None = None


def _mark(in_ref: bool, in_hyp: bool, scores: tuple[float, float, float] | None) -> str:
    if in_ref and in_hyp:
        return ATTRIBUTE if scores is not None and min(scores) < 1.0 else MATCHED
    return MISSED if in_ref else FALSE


def align(ref: StructuredReport, hyp: StructuredReport) -> list[AlignedFinding]:
    """Positive names first (reference order, then the hypothesis-only ones), then negative names.
    A positive name in both reports is `matched` when its probability, level and location all score
    1 in S-Score, else `attribute` (differs); a name on one side only is `missed` (reference only)
    or `false` (hypothesis only). A name positive on one side and negative on the other is a missed
    or false entry in each set, as S-Score's P_pos and P_neg count it."""
    r_pos = {f.name: f for f in ref.positive}
    h_pos = {f.name: f for f in hyp.positive}
    rows = []
    for name, in_ref, in_hyp in match_names(r_pos, h_pos):
        rf, hf = r_pos.get(name), h_pos.get(name)
        scores = attribute_scores(rf, hf) if rf is not None and hf is not None else None
        rows.append(AlignedFinding(name, POSITIVE, _mark(in_ref, in_hyp, scores), rf, hf, scores))
    for name, in_ref, in_hyp in match_names(ref.negative, hyp.negative):
        rows.append(AlignedFinding(name, NEGATIVE, _mark(in_ref, in_hyp, None), None, None))
    return rows
