"""LLM-proxy rating (S-RRG Table 3): a judge rates a candidate against the reference on Disease
Prediction and Detailed Descriptions; the mean of the two, scaled to [0, 1], stands in for a human
rating when no expert ratings exist (meta-evaluation then correlates the metrics with it).
The prompt asks for JSON either way; a structured request adds its schema (rating_schema) and the
answer is then read strictly (no repair), to the same values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from srrg.llm.base import LLMRequest
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judges.common import (
    OK,
    UNPARSEABLE,
    PairJudge,
    Reply,
    as_reply,
    decode_json_object,
    failure_counts,
    object_schema,
    pair_requests,
    strict_object,
)
from srrg.settings.metrics import ProxyRatingConfig

NAME = "proxy_rating"
DIMENSIONS = ("disease_prediction", "detailed_descriptions")
KEYS = ("proxy_rating", "proxy_disease_prediction", "proxy_detailed_descriptions", "proxy_status", "proxy_explanation")


def rating_schema(scale_max: int) -> dict[str, Any]:
    """JSON schema of a rating answer: each dimension an integer 0..scale_max, then an explanation."""
    rating = {"type": "integer", "minimum": 0, "maximum": scale_max}
    return object_schema(NAME, {**{d: rating for d in DIMENSIONS}, "explanation": {"type": "string"}})


def parse_rating(
    answer: str | Reply | None, scale_max: int, structured: bool = False
) -> tuple[dict[str, float] | None, str, str]:
    """(dimension ratings, explanation, status); a rating outside 0..scale_max is a parse failure,
    and a reply that failed in transport (no_response, truncated) is never read. structured: the
    answer must be exactly one object valid under rating_schema."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return None, "", reply.status
    obj = strict_object(reply, rating_schema(scale_max))[0] if structured else decode_json_object(reply.text)
    if obj is None:
        return None, "", UNPARSEABLE
    ratings: dict[str, float] = {}
    for dim in DIMENSIONS:
        value = obj.get(dim)
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return None, "", UNPARSEABLE
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= scale_max:
            return None, "", UNPARSEABLE
        ratings[dim] = float(value)
    explanation = obj.get("explanation")
    return ratings, explanation.strip() if isinstance(explanation, str) else "", OK


def score_responses(
    responses: Sequence[str | Reply | None], cfg: ProxyRatingConfig = ProxyRatingConfig(), structured: bool = False
) -> MetricResult:
    """Per-report dimension ratings (raw scale) and their mean scaled to [0, 1]."""
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for text in responses:
        ratings, explanation, status = parse_rating(text, cfg.scale_max, structured)
        per["proxy_rating"].append(sum(ratings.values()) / (len(DIMENSIONS) * cfg.scale_max) if ratings else math.nan)
        per["proxy_disease_prediction"].append(ratings["disease_prediction"] if ratings else math.nan)
        per["proxy_detailed_descriptions"].append(ratings["detailed_descriptions"] if ratings else math.nan)
        per["proxy_status"].append(status)
        per["proxy_explanation"].append(explanation)
    summary = {k: nanmean(per[k]) for k in ("proxy_rating", "proxy_disease_prediction", "proxy_detailed_descriptions")}
    summary.update(failure_counts("proxy", per["proxy_status"]))
    return MetricResult(per, summary)


def proxy_requests(
    refs: Sequence[str], hyps: Sequence[str], cfg: ProxyRatingConfig, structured: bool = False
) -> list[Any]:
    schema = rating_schema(cfg.scale_max) if structured else None
    return pair_requests(NAME, refs, hyps, cfg, json_mode=True, schema=schema, scale_max=str(cfg.scale_max))


@register
class ProxyRating(PairJudge):
    """The two-dimension rating prompt; options: ProxyRatingConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS
    status_keys = ("proxy_status",)

    def requests(self, refs: Sequence[str], hyps: Sequence[str], structured: bool = False) -> list[LLMRequest]:
        return proxy_requests(refs, hyps, self.cfg, structured)

    def score(self, replies: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
        return score_responses(replies, self.cfg, structured)
