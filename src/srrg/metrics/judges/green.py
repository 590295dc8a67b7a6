"""GREEN (Ostmeier et al., 2024): an LLM counts clinically significant and insignificant errors of
six categories and the matched findings; GREEN = matched / (matched + significant errors).
From the same counts: GREEN-EC (the significant error total, lower is better) and GREEN-F1
(2 matched / (2 matched + significant errors)), as VERT reports them (docs/judges.md).

The prompt is the published one (src/srrg/prompts/green.txt) and parsing follows the official
implementation (see judges.common; docs/judges.md lists where ours differs). Unlike the official
code, an answer that cannot be scored (unparseable, cut off, or none) is not silently 0: its GREEN
and every count column are NaN, its status says why, and the summary counts it. A structured answer
(common.error_report_schema) gives the same counts, hence the same GREEN, as the text format.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from srrg.llm.base import LLMRequest
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judges.common import (
    CATEGORIES,
    PARTIAL,
    ErrorReport,
    PairJudge,
    Reply,
    as_reply,
    count_columns,
    error_report_schema,
    failure_counts,
    pair_requests,
    parse_error_report,
    population_std,
    section,
    structured_error_report,
    structured_template,
    unified_score,
)
from srrg.metrics.judges.vert import FORMULAS
from srrg.settings.metrics import GreenConfig

NAME = "green"
# GREEN-F1 is VERT's unified family at its F1 weights (a, bS, bI) = (2, 1, 0) (docs/judges.md)
F1_WEIGHTS = FORMULAS["f1_formula"]
SIG_KEYS = tuple(f"green_sig_{c}" for c in CATEGORIES)
INSIG_KEYS = tuple(f"green_insig_{c}" for c in CATEGORIES)
SCHEMA = error_report_schema(NAME)
# the official GREEN models (GREEN-RadLlama2-7b, GREEN-RadPhi2, ...) were tuned on the text format
OFFICIAL_MODEL = re.compile(r"GREEN-Rad", re.IGNORECASE)
KEYS = (
    "green",
    "green_ec",
    "green_f1",
    *SIG_KEYS,
    *INSIG_KEYS,
    "green_matched",
    "green_status",
    "green_matched_findings",
    "green_explanation",
)


def green_value(report: ErrorReport) -> float:
    """matched / (matched + significant errors); 0 without matched findings (official); NaN when
    the answer could not be parsed."""
    if not report.parsed:
        return math.nan
    if report.matched == 0:
        return 0.0
    return report.matched / (report.matched + sum(report.significant))


def green_ec(report: ErrorReport) -> float:
    """GREEN-EC: the number of clinically significant errors over categories (a)-(f), a metric
    where lower is better; NaN when the answer could not be parsed (never "no errors")."""
    return float(sum(report.significant)) if report.parsed else math.nan


def green_f1(report: ErrorReport) -> float:
    """GREEN-F1: 2M / (2M + S) on the answer's matched count M and significant error total S (the
    unified family at F1_WEIGHTS; 0 when nothing matched); NaN when the answer could not be parsed."""
    if not report.parsed:
        return math.nan
    return unified_score(report.matched, sum(report.significant), sum(report.insignificant), *F1_WEIGHTS)


def green_requests(refs: Sequence[str], hyps: Sequence[str], cfg: GreenConfig, structured: bool = False) -> list[Any]:
    """The published prompt; structured: its answer format replaced by the JSON fields of SCHEMA."""
    if not structured:
        return pair_requests(NAME, refs, hyps, cfg)
    prompt = structured_template(NAME, "Follow this specific format", "answer_error_counts", ("reference", "candidate"))
    return pair_requests(NAME, refs, hyps, cfg, schema=SCHEMA, prompt=prompt)


def read_answer(reply: Reply, cfg: GreenConfig, structured: bool) -> tuple[ErrorReport, str]:
    """(counts, explanation) of one answer in the text format or in SCHEMA."""
    if structured:
        report, obj = structured_error_report(reply, SCHEMA)
        return report, str(obj.get("explanation", "")).strip()
    explanation = (section(reply.text, "Explanation") or "").strip() if reply.text else ""
    return parse_error_report(reply, cfg.number_words), explanation


def summarize(reports: Sequence[ErrorReport], scores: Sequence[float]) -> dict[str, float]:
    """Mean and population std of GREEN over the parsed answers, per category the share of parsed
    answers with zero significant errors, and the counts of partial and failed answers
    (green_failures, split into green_no_response / green_truncated / green_unparseable)."""
    parsed = [r for r in reports if r.parsed]
    summary = {
        "green": nanmean(scores),
        "green_std": population_std(scores),
        "green_ec": nanmean([green_ec(r) for r in reports]),
        "green_f1": nanmean([green_f1(r) for r in reports]),
    }
    for i, c in enumerate(CATEGORIES):
        zero = sum(1 for r in parsed if r.significant[i] == 0)
        summary[f"green_zero_sig_{c}"] = zero / len(parsed) if parsed else math.nan
    summary["green_n_parsed"] = float(len(parsed))
    summary["green_partial"] = float(sum(r.status == PARTIAL for r in reports))
    summary.update(failure_counts("green", [r.status for r in reports]))
    return summary


def score_responses(
    responses: Sequence[str | Reply | None], cfg: GreenConfig = GreenConfig(), structured: bool = False
) -> MetricResult:
    """Per-report GREEN values, counts, status and explanation from the judge's replies."""
    read = [read_answer(as_reply(r), cfg, structured) for r in responses]
    reports = [report for report, _ in read]
    scores = [green_value(r) for r in reports]
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for (report, explanation), score in zip(read, scores):
        sig, insig, matched = count_columns(report)
        per["green"].append(score)
        per["green_ec"].append(green_ec(report))
        per["green_f1"].append(green_f1(report))
        for i in range(len(CATEGORIES)):
            per[SIG_KEYS[i]].append(sig[i])
            per[INSIG_KEYS[i]].append(insig[i])
        per["green_matched"].append(matched)
        per["green_status"].append(report.status)
        per["green_matched_findings"].append("; ".join(report.matched_findings))
        per["green_explanation"].append(explanation)
    return MetricResult(per, summarize(reports, scores))


@register
class Green(PairJudge):
    """GREEN through the project's LLM client; options: GreenConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS
    status_keys = ("green_status",)
    text_model = OFFICIAL_MODEL

    def requests(self, refs: Sequence[str], hyps: Sequence[str], structured: bool = False) -> list[LLMRequest]:
        return green_requests(refs, hyps, self.cfg, structured)

    def score(self, replies: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
        return score_responses(replies, self.cfg, structured)
