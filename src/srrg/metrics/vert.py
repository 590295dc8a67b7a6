"""VERT: one judge call enumerates significant/insignificant errors (a)-(f) and matched findings,
then gives a direct accuracy score in [0, 1] with two decimals (DESIGN §4.4).

From the same counts it reports the unified family a*TP / (a*TP + bS*S + bI*I): GREEN (1, 1, 0),
F1 (2, 1, 0) and weighted (1, 2, 0.5), so one set of answers yields every variant.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

from srrg.llm.base import LLMRequest
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judge_common import (
    CATEGORIES,
    NO_RESPONSE,
    OK,
    UNPARSEABLE,
    ErrorReport,
    JudgeConfig,
    PairJudge,
    parse_error_report,
    population_std,
    pair_requests,
    section,
    unified_score,
)

NAME = "vert"
# formula name -> (a, b_sig, b_insig)
FORMULAS = {"green_formula": (1.0, 1.0, 0.0), "f1_formula": (2.0, 1.0, 0.0), "weighted_formula": (1.0, 2.0, 0.5)}
SIG_KEYS = tuple(f"vert_sig_{c}" for c in CATEGORIES)
INSIG_KEYS = tuple(f"vert_insig_{c}" for c in CATEGORIES)
KEYS = ("vert", *FORMULAS, *SIG_KEYS, *INSIG_KEYS, "vert_matched", "vert_status", "vert_score_status")
_NUMBER = re.compile(r"(?<![\d.])(\d*\.\d+|\d+)(%?)")


@dataclass(frozen=True)
class VertConfig(JudgeConfig):
    number_words: bool = True


def parse_direct_score(text: str | None) -> float:
    """The [Score] section's number in [0, 1], rounded to two decimals; a percentage (e.g. "85%")
    is divided by 100; anything else is NaN (no score is invented)."""
    if not text:
        return math.nan
    body = section(text, "Score")
    if body is None or "<score" in body:  # "<score between 0.00 and 1.00>": the template echoed
        return math.nan
    match = _NUMBER.search(body)
    if not match:
        return math.nan
    value = float(match.group(1)) / (100 if match.group(2) else 1)
    return round(value, 2) if 0.0 <= value <= 1.0 else math.nan


def formula_scores(report: ErrorReport) -> dict[str, float]:
    """The unified family from parsed counts; NaN for every variant when the counts did not parse."""
    if not report.parsed:
        return {k: math.nan for k in FORMULAS}
    s, i = sum(report.significant), sum(report.insignificant)
    return {k: unified_score(report.matched, s, i, *w) for k, w in FORMULAS.items()}


def vert_requests(refs: Sequence[str], hyps: Sequence[str], cfg: VertConfig) -> list[Any]:
    return pair_requests(NAME, refs, hyps, cfg)


def score_responses(responses: Sequence[str | None], cfg: VertConfig = VertConfig()) -> MetricResult:
    """Per-report direct score, formula variants, counts and statuses; summary means (NaN-aware),
    the std of the direct score and the failure counts."""
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for text in responses:
        report = parse_error_report(text, cfg.number_words)
        direct = parse_direct_score(text)
        per["vert"].append(direct)
        for key, value in formula_scores(report).items():
            per[key].append(value)
        for i in range(len(CATEGORIES)):
            per[SIG_KEYS[i]].append(report.significant[i])
            per[INSIG_KEYS[i]].append(report.insignificant[i])
        per["vert_matched"].append(report.matched)
        per["vert_status"].append(report.status)
        per["vert_score_status"].append(NO_RESPONSE if text is None else OK if not math.isnan(direct) else UNPARSEABLE)
    summary = {k: nanmean(per[k]) for k in ("vert", *FORMULAS)}
    summary["vert_std"] = population_std(per["vert"])
    summary["vert_score_failures"] = float(sum(s != OK for s in per["vert_score_status"]))
    summary["vert_count_failures"] = float(sum(s in (UNPARSEABLE, NO_RESPONSE) for s in per["vert_status"]))
    return MetricResult(per, summary)


@register
class Vert(PairJudge):
    """VERT through the project's LLM client; options: VertConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS
    config_class = VertConfig

    def requests(self, refs: Sequence[str], hyps: Sequence[str]) -> list[LLMRequest]:
        return vert_requests(refs, hyps, self.cfg)

    def score(self, texts: Sequence[str | None]) -> MetricResult:
        return score_responses(texts, self.cfg)
