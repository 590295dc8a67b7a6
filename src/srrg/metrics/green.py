"""GREEN (Ostmeier et al., 2024): an LLM counts clinically significant and insignificant errors of
six categories and the matched findings; GREEN = matched / (matched + significant errors).

The prompt is the published one (src/srrg/prompts/green.txt) and parsing follows the official
implementation (see judge_common). Unlike the official code, an answer without any scorable
section is not silently scored: its GREEN is NaN, its status says why, and the summary counts it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from srrg.llm.base import LLMRequest
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judge_common import (
    CATEGORIES,
    NO_RESPONSE,
    PARTIAL,
    UNPARSEABLE,
    ErrorReport,
    JudgeConfig,
    PairJudge,
    parse_error_report,
    population_std,
    pair_requests,
    section,
)

NAME = "green"
SIG_KEYS = tuple(f"green_sig_{c}" for c in CATEGORIES)
INSIG_KEYS = tuple(f"green_insig_{c}" for c in CATEGORIES)
KEYS = ("green", *SIG_KEYS, *INSIG_KEYS, "green_matched", "green_status", "green_matched_findings", "green_explanation")


@dataclass(frozen=True)
class GreenConfig(JudgeConfig):
    """number_words: also read counts written as words ("two."); False is the official parser."""

    number_words: bool = True


def green_value(report: ErrorReport) -> float:
    """matched / (matched + significant errors); 0 without matched findings (official); NaN when
    the answer could not be parsed."""
    if not report.parsed:
        return math.nan
    if report.matched == 0:
        return 0.0
    return report.matched / (report.matched + sum(report.significant))


def green_requests(refs: Sequence[str], hyps: Sequence[str], cfg: GreenConfig) -> list[Any]:
    return pair_requests(NAME, refs, hyps, cfg)


def summarize(reports: Sequence[ErrorReport], scores: Sequence[float]) -> dict[str, float]:
    """Mean and population std of GREEN over the parsed answers, per category the share of parsed
    answers with zero significant errors, and the counts of partial and failed answers."""
    parsed = [r for r in reports if r.parsed]
    summary = {"green": nanmean(scores), "green_std": population_std(scores)}
    for i, c in enumerate(CATEGORIES):
        zero = sum(1 for r in parsed if r.significant[i] == 0)
        summary[f"green_zero_sig_{c}"] = zero / len(parsed) if parsed else math.nan
    summary["green_n_parsed"] = float(len(parsed))
    summary["green_partial"] = float(sum(r.status == PARTIAL for r in reports))
    summary["green_parse_failures"] = float(sum(r.status in (UNPARSEABLE, NO_RESPONSE) for r in reports))
    return summary


def score_responses(responses: Sequence[str | None], cfg: GreenConfig = GreenConfig()) -> MetricResult:
    """Per-report GREEN values, counts, status and explanation from the judge's answers."""
    reports = [parse_error_report(text, cfg.number_words) for text in responses]
    scores = [green_value(r) for r in reports]
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for text, report, score in zip(responses, reports, scores):
        per["green"].append(score)
        for i in range(len(CATEGORIES)):
            per[SIG_KEYS[i]].append(report.significant[i])
            per[INSIG_KEYS[i]].append(report.insignificant[i])
        per["green_matched"].append(report.matched)
        per["green_status"].append(report.status)
        per["green_matched_findings"].append("; ".join(report.matched_findings))
        per["green_explanation"].append((section(text, "Explanation") or "").strip() if text else "")
    return MetricResult(per, summarize(reports, scores))


@register
class Green(PairJudge):
    """GREEN through the project's LLM client; options: GreenConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS
    config_class = GreenConfig

    def requests(self, refs: Sequence[str], hyps: Sequence[str]) -> list[LLMRequest]:
        return green_requests(refs, hyps, self.cfg)

    def score(self, texts: Sequence[str | None]) -> MetricResult:
        return score_responses(texts, self.cfg)
