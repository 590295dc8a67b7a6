"""VERT: one judge call enumerates significant/insignificant errors (a)-(f) and matched findings,
then gives a direct accuracy score in [0, 1] with two decimals (docs/judges.md).

The prompt comes in three variants (option `variant`): direct (the judge scores freely), formula
(the prompt states how the score follows from the counts) and rubric (the prompt gives score bands).
From the same counts it reports the unified family a*TP / (a*TP + bS*S + bI*I): GREEN (1, 1, 0),
F1 (2, 1, 0) and weighted (1, 2, 0.5), so one set of answers yields every variant. A structured
answer holds the same counts and the score as JSON fields (common.error_report_schema).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from srrg.llm.base import LLMRequest
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judges.common import (
    CATEGORIES,
    FAILED,
    OK,
    UNPARSEABLE,
    ErrorReport,
    PairJudge,
    Reply,
    as_reply,
    count_columns,
    error_report_schema,
    failure_counts,
    judge_signature,
    pair_requests,
    parse_direct_score,
    parse_error_report,
    population_std,
    prompt_text,
    structured_error_report,
    structured_template,
    template,
    unified_score,
)
from srrg.metrics.judges.few_shot import refuse_overlap, shots_block, shots_for
from srrg.metrics.signature import value_text
from srrg.settings.metrics import VertConfig

NAME = "vert"
# formula name -> (a, b_sig, b_insig)
FORMULAS = {"green_formula": (1.0, 1.0, 0.0), "f1_formula": (2.0, 1.0, 0.0), "weighted_formula": (1.0, 2.0, 0.5)}
SIG_KEYS = tuple(f"vert_sig_{c}" for c in CATEGORIES)
INSIG_KEYS = tuple(f"vert_insig_{c}" for c in CATEGORIES)
KEYS = ("vert", *FORMULAS, *SIG_KEYS, *INSIG_KEYS, "vert_matched", "vert_status", "vert_score_status")
# VertVariant -> prompt; two_lines is VERT's fine-tuning prompt (docs/judge_train.md)
VARIANTS = {"direct": "vert", "formula": "vert_formula", "rubric": "vert_rubric", "two_lines": "vert_two_lines"}
# prompt that states a scoring rule -> the column computing that rule from the counts (their weights
# must agree: tests/judges/test_prompt_formulas.py reads the rule out of the prompt text)
STATED_FORMULAS = {"vert_formula": "weighted_formula"}
SCHEMA = error_report_schema(NAME, score=True)
PAIR_START = "Reference report:\n{reference}"  # where the pair being scored begins in every VERT prompt


def score_status(reply: Reply, score: float) -> str:
    """Status of the direct score: the reply's transport status when it failed, else ok or unparseable."""
    if reply.status != OK:
        return reply.status
    return OK if not math.isnan(score) else UNPARSEABLE


def formula_scores(report: ErrorReport) -> dict[str, float]:
    """The unified family from parsed counts; NaN for every variant when the counts did not parse."""
    if not report.parsed:
        return {k: math.nan for k in FORMULAS}
    s, i = sum(report.significant), sum(report.insignificant)
    return {k: unified_score(report.matched, s, i, *w) for k, w in FORMULAS.items()}


def prompt_with_shots(name: str, cfg: VertConfig) -> str:
    """The variant's prompt text for cfg.modality with the few-shot examples (if any) put just
    before the pair it scores."""
    text = prompt_text(name, cfg.modality)
    block = shots_block(shots_for(cfg.few_shot), cfg.modality)
    if not block:
        return text
    if PAIR_START not in text:
        raise ValueError(f"prompt {name!r} has no {PAIR_START!r} to put few-shot examples before")
    return text.replace(PAIR_START, block + PAIR_START, 1)


def schema_answers(cfg: VertConfig, structured: bool) -> bool:
    """Whether answers are asked for and read as JSON: the two_lines prompt has no answer format to
    turn into a schema (a judge tuned on it answers `[Score]:` text), so it always uses text."""
    return structured and cfg.variant != "two_lines"


def vert_requests(refs: Sequence[str], hyps: Sequence[str], cfg: VertConfig, structured: bool = False) -> list[Any]:
    """The variant's prompt (with its few-shot examples; a scored pair among them is refused);
    structured: its answer format replaced by the JSON fields of SCHEMA."""
    name = VARIANTS[cfg.variant]
    refuse_overlap(shots_for(cfg.few_shot), refs, hyps)
    text = prompt_with_shots(name, cfg)
    if not schema_answers(cfg, structured):
        return pair_requests(name, refs, hyps, cfg, prompt=template(name, ("reference", "candidate"), text))
    prompt = structured_template(
        name, "Answer in exactly this format", "answer_error_counts_score", ("reference", "candidate"), text=text
    )
    return pair_requests(name, refs, hyps, cfg, schema=SCHEMA, prompt=prompt)


def read_answer(reply: Reply, cfg: VertConfig, structured: bool) -> tuple[ErrorReport, float]:
    """(counts, direct score) of one answer in the text format or in SCHEMA; the structured score
    is rounded to two decimals as the text one is."""
    if structured:
        report, obj = structured_error_report(reply, SCHEMA)
        return report, round(float(obj["score"]), 2) if report.parsed else math.nan
    return parse_error_report(reply, cfg.number_words), parse_direct_score(reply)


def score_responses(
    responses: Sequence[str | Reply | None], cfg: VertConfig = VertConfig(), structured: bool = False
) -> MetricResult:
    """Per-report direct score, formula variants, counts and statuses; summary means (NaN-aware),
    the std of the direct score, and the failures of the score and of the counts."""
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for reply in (as_reply(r) for r in responses):
        report, direct = read_answer(reply, cfg, structured)
        sig, insig, matched = count_columns(report)
        per["vert"].append(direct)
        for key, value in formula_scores(report).items():
            per[key].append(value)
        for i in range(len(CATEGORIES)):
            per[SIG_KEYS[i]].append(sig[i])
            per[INSIG_KEYS[i]].append(insig[i])
        per["vert_matched"].append(matched)
        per["vert_status"].append(report.status)
        per["vert_score_status"].append(score_status(reply, direct))
    summary = {k: nanmean(per[k]) for k in ("vert", *FORMULAS)}
    summary["vert_std"] = population_std(per["vert"])
    summary["vert_score_failures"] = float(sum(s in FAILED for s in per["vert_score_status"]))
    summary["vert_count_failures"] = float(sum(s in FAILED for s in per["vert_status"]))
    summary.update(failure_counts(NAME, per["vert_score_status"]))  # the direct score is VERT's headline
    return MetricResult(per, summary)


@register
class Vert(PairJudge):
    """VERT through the project's LLM client; options: VertConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS
    # a pair fails when its direct score does: a score-only answer (a tuned VERT judge) is valid
    status_keys = ("vert_score_status",)

    def requests(self, refs: Sequence[str], hyps: Sequence[str], structured: bool = False) -> list[LLMRequest]:
        return vert_requests(refs, hyps, self.cfg, structured)

    def signature(self, key: str) -> str:
        """judge_signature, naming the few-shot examples' pair ids (`shots:<id>+<id>`) when k > 0."""
        shots = shots_for(self.cfg.few_shot)
        extra = [("shots", value_text([s.pair_id for s in shots]))] if shots else []
        return judge_signature(self.name, self.cfg, lambda structured: self.requests([""], [""], structured), extra)

    def score(self, replies: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
        return score_responses(replies, self.cfg, schema_answers(self.cfg, structured))
