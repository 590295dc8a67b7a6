"""S-Score of free-text report pairs: the project's extractor turns both sides into structured
reports, then the S-Score of docs/metrics.md scores them. No LLM, deterministic, fast, so any report
generator (or a ratings dataset) can be scored on the structured scale.

A side that already is a structured report (looks_structured, docs/report.md: e.g. a Structured-First
prediction, fenced or not) is parsed instead of extracted. Texts are extracted once however often they repeat.
"""

from __future__ import annotations

from typing import Any, Sequence

from srrg.extract import ExtractConfig, extract_detailed
from srrg.metrics.base import Metric, MetricResult, hypothesis_rates, register
from srrg.metrics.sscore import KEYS as SSCORE_KEYS
from srrg.metrics.sscore import SScoreConfig, score_reports
from srrg.report import StructuredReport, looks_structured, parse_report

NAME = "s_score_text"
FREE_TEXT = "free_text"
SUFFIX = "_text"
KEYS = (*(k + SUFFIX for k in SSCORE_KEYS), "s_score_text_status")


def structure(texts: Sequence[str | None], extract_cfg: ExtractConfig) -> dict[str, tuple[StructuredReport, str]]:
    """Distinct text -> (structured report, status): parse_report's status for JSON, the
    extractor's (ok | empty_text | truncated | long_sentence | error) for free text."""
    distinct = list(dict.fromkeys(t if isinstance(t, str) else "" for t in texts))
    out = {t: parse_report(t) for t in distinct if looks_structured(t)}
    free = [t for t in distinct if t not in out]
    if free:
        results = extract_detailed(free, extract_cfg)
        out.update({t: (r.report, r.status) for t, r in zip(free, results)})
    return out


def hypothesis_kinds(hyps: Sequence[str | None], hyp_statuses: Sequence[str]) -> list[str]:
    """parse_report's status for a structured hypothesis, FREE_TEXT for one that was extracted: the
    parse rates of a metric that also reads free text (docs/judges.md)."""
    return [s if looks_structured(h) else FREE_TEXT for h, s in zip(hyps, hyp_statuses)]


def score_texts(
    refs: Sequence[str | None], hyps: Sequence[str | None], sscore_cfg: SScoreConfig = SScoreConfig(), extract_cfg: ExtractConfig = ExtractConfig()
) -> MetricResult:
    """Per-pair S-Score values (keys suffixed `_text`) and a status naming the side that had no
    usable text; such a side counts as the empty report, as in the S-Score of structured outputs."""
    table = structure([*refs, *hyps], extract_cfg)
    ref_reports = [table[r if isinstance(r, str) else ""] for r in refs]
    hyp_reports = [table[h if isinstance(h, str) else ""] for h in hyps]
    result = score_reports([r for r, _ in ref_reports], [h for h, _ in hyp_reports], sscore_cfg)
    per: dict[str, list[Any]] = {k + SUFFIX: v for k, v in result.per_report.items()}
    per["s_score_text_status"] = [
        ",".join(f"{side}:{status}" for side, (_, status) in (("ref", r), ("hyp", h)) if status not in {"ok", "valid", "repaired"}) or "ok"
        for r, h in zip(ref_reports, hyp_reports)
    ]
    summary = {k + SUFFIX: v for k, v in result.summary.items()}
    summary["s_score_text_failures"] = float(sum(s != "ok" for s in per["s_score_text_status"]))
    summary.update(hypothesis_rates(NAME, hypothesis_kinds(hyps, [s for _, s in hyp_reports]), extra=(FREE_TEXT,)))
    return MetricResult(per, summary)


@register
class SScoreText(Metric):
    """Options: `extract` (the extract config slice) and the SScoreConfig fields (weights, d_over)."""

    name = NAME
    keys = KEYS

    def __init__(self, extract: Any = None, **options: Any) -> None:
        self.sscore_cfg = SScoreConfig.from_dict(options)
        self.extract_cfg = ExtractConfig.from_dict(extract)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        return score_texts(refs, hyps, self.sscore_cfg, self.extract_cfg)
