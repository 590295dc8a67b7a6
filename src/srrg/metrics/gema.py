"""GEMA-Score (DESIGN §4.5): agents as separate LLM calls with JSON answers, arithmetic in code.

1. entity agent (one call per distinct report): (disease, location, severity, uncertainty) tuples;
2. objective accuracy, computed here: per dimension the symmetric match rates S(x, x̂) = |x ∩ x̂|/|x|
   and S(x̂, x) = |x ∩ x̂|/|x̂| and their harmonic mean; a dimension other than disease compares
   (disease, value) pairs, so a wrong location of a shared disease is a miss; both sides empty -> 1,
   one empty -> 0 (as the S-Score's set F1, which this reuses); S_obj = Σ w_d · F1_d;
3. subjective agent (one call per pair): fluency, grammar and terminology issue counts,
   S_sub = Σ w_a · max(0, 1 - 0.05 · errors_a), rounded to the nearest of {0, 0.2, ..., 1};
4. GEMA = α · S_obj + (1 - α) · S_sub (α = 0.8), with the explanations kept per report.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from srrg.metrics.base import Metric, MetricResult, nanmean, register
from srrg.metrics.judge_common import (
    NO_RESPONSE,
    OK,
    UNPARSEABLE,
    JudgeConfig,
    answers,
    client_for,
    decode_json_object,
    pair_requests,
    template,
    to_count,
    truncate_words,
)
from srrg.metrics.sscore import set_f1
from srrg.report import normalize_text

NAME = "gema"
DIMENSIONS = ("disease", "location", "severity", "uncertainty")
ASPECTS = ("fluency", "grammar", "terminology")
KEYS = (
    "gema",
    "gema_obj",
    "gema_sub",
    *(f"gema_{d}" for d in DIMENSIONS),
    *(f"gema_{a}_errors" for a in ASPECTS),
    "gema_status",
    "gema_explanation",
    "gema_ref_entities",
    "gema_hyp_entities",
)
_UNCERTAINTY = {
    "certain": "certain", "definite": "certain", "present": "certain", "3": "certain",
    "probable": "probable", "likely": "probable", "probably": "probable", "2": "probable",
    "uncertain": "uncertain", "possible": "uncertain", "possibly": "uncertain", "questionable": "uncertain", "1": "uncertain",
}  # fmt: skip

Entity = tuple[str, str | None, str | None, str | None]


@dataclass(frozen=True)
class GemaConfig(JudgeConfig):
    """dimension_weights: disease/location/severity/uncertainty weights of S_obj (sum 1);
    aspect_weights: fluency/grammar/terminology weights of S_sub (sum 1); alpha: weight of S_obj."""

    dimension_weights: Mapping[str, float] = field(default_factory=lambda: {d: 0.25 for d in DIMENSIONS})
    aspect_weights: Mapping[str, float] = field(default_factory=lambda: {a: 1 / 3 for a in ASPECTS})
    alpha: float = 0.8
    penalty_per_error: float = 0.05

    def __post_init__(self) -> None:
        for label, weights, names in (("dimension", self.dimension_weights, DIMENSIONS), ("aspect", self.aspect_weights, ASPECTS)):
            if set(weights) != set(names) or min(weights.values()) < 0 or not math.isclose(sum(weights.values()), 1.0, abs_tol=1e-9):
                raise ValueError(f"gema {label}_weights need non-negative weights for {list(names)} summing to 1, got {dict(weights)}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"gema alpha must be in [0, 1], got {self.alpha}")


def _optional(value: Any) -> str | None:
    if value is None or not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    text = normalize_text(str(value))
    return None if text in {"", "null", "none", "n/a", "unknown"} else text


def parse_entities(text: str | None) -> tuple[tuple[Entity, ...], str]:
    """Entity tuples from the entity agent's JSON, and a status; duplicate diseases keep the first."""
    if text is None:
        return (), NO_RESPONSE
    obj = decode_json_object(text)
    items = obj.get("entities") if obj is not None else None
    if not isinstance(items, list):
        return (), UNPARSEABLE
    seen: dict[str, Entity] = {}
    for item in items:
        if not isinstance(item, dict) or _optional(item.get("disease")) is None:
            continue
        disease = _optional(item["disease"]) or ""
        uncertainty = _optional(item.get("uncertainty"))
        entity = (disease, _optional(item.get("location")), _optional(item.get("severity")), _UNCERTAINTY.get(uncertainty or "", uncertainty))
        seen.setdefault(disease, entity)
    return tuple(seen.values()), OK


def dimension_items(entities: Sequence[Entity], dimension: str) -> set[Any]:
    """The set compared for one dimension: disease names, or (disease, value) pairs."""
    index = DIMENSIONS.index(dimension)
    return {e[0] if index == 0 else (e[0], e[index]) for e in entities}


def objective_scores(ref: Sequence[Entity], hyp: Sequence[Entity], weights: Mapping[str, float]) -> dict[str, float]:
    """Per-dimension harmonic mean of the two match rates and their weighted sum S_obj."""
    per = {d: set_f1(dimension_items(ref, d), dimension_items(hyp, d)) for d in DIMENSIONS}
    per["obj"] = sum(weights[d] * per[d] for d in DIMENSIONS)
    return per


def parse_subjective(text: str | None) -> tuple[dict[str, int] | None, str, str]:
    """(error counts per aspect, explanation, status) from the subjective agent's JSON."""
    if text is None:
        return None, "", NO_RESPONSE
    obj = decode_json_object(text)
    if obj is None:
        return None, "", UNPARSEABLE
    counts: dict[str, int] = {}
    for aspect in ASPECTS:
        value = obj.get(f"{aspect}_errors", obj.get(aspect))
        if isinstance(value, bool):
            return None, "", UNPARSEABLE
        count = int(value) if isinstance(value, (int, float)) and value >= 0 and float(value).is_integer() else (
            to_count(value) if isinstance(value, str) else None
        )
        if count is None:
            return None, "", UNPARSEABLE
        counts[aspect] = count
    explanation = obj.get("explanation")
    return counts, explanation.strip() if isinstance(explanation, str) else "", OK


def subjective_score(counts: Mapping[str, int], weights: Mapping[str, float], penalty: float = 0.05) -> float:
    """Σ w_a · max(0, 1 - penalty · errors_a), rounded to the nearest multiple of 0.2; an exact
    midpoint rounds up (0.9 -> 1.0, 0.3 -> 0.4) whatever the float noise of the weighted sum
    (Python's round() would round half to even and let 1e-16 errors pick the side)."""
    raw = sum(weights[a] * max(0.0, 1.0 - penalty * counts[a]) for a in ASPECTS)
    return round(math.floor(raw * 5 + 0.5 + 1e-9) / 5, 1)


def _entities_json(entities: Sequence[Entity]) -> str:
    return json.dumps([dict(zip(DIMENSIONS, e)) for e in entities], ensure_ascii=False)


def _objective_note(ref: Sequence[Entity], hyp: Sequence[Entity]) -> str:
    r, h = dimension_items(ref, "disease"), dimension_items(hyp, "disease")
    return f"matched: {', '.join(sorted(r & h)) or '-'}; missing: {', '.join(sorted(r - h)) or '-'}; extra: {', '.join(sorted(h - r)) or '-'}"


def score_answers(
    ref_answers: Sequence[str | None],
    hyp_answers: Sequence[str | None],
    subjective_answers: Sequence[str | None],
    cfg: GemaConfig = GemaConfig(),
) -> MetricResult:
    """GEMA per report from the three agents' answers; a failed agent makes that report NaN and
    its status names the agent."""
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for ref_text, hyp_text, sub_text in zip(ref_answers, hyp_answers, subjective_answers, strict=True):
        ref, ref_status = parse_entities(ref_text)
        hyp, hyp_status = parse_entities(hyp_text)
        counts, explanation, sub_status = parse_subjective(sub_text)
        failed = [n for n, s in (("ref_entities", ref_status), ("hyp_entities", hyp_status), ("subjective", sub_status)) if s != OK]
        obj = objective_scores(ref, hyp, cfg.dimension_weights) if ref_status == hyp_status == OK else None
        sub = subjective_score(counts, cfg.aspect_weights, cfg.penalty_per_error) if counts is not None else math.nan
        s_obj = obj["obj"] if obj else math.nan
        per["gema"].append(cfg.alpha * s_obj + (1 - cfg.alpha) * sub)
        per["gema_obj"].append(s_obj)
        per["gema_sub"].append(sub)
        for d in DIMENSIONS:
            per[f"gema_{d}"].append(obj[d] if obj else math.nan)
        for a in ASPECTS:
            per[f"gema_{a}_errors"].append(counts[a] if counts else None)
        per["gema_status"].append(OK if not failed else "failed:" + ",".join(failed))
        note = _objective_note(ref, hyp) if obj else ""
        per["gema_explanation"].append(" | ".join(p for p in (note, explanation) if p))
        per["gema_ref_entities"].append(_entities_json(ref))
        per["gema_hyp_entities"].append(_entities_json(hyp))
    summary = {k: nanmean(per[k]) for k in ("gema", "gema_obj", "gema_sub", *(f"gema_{d}" for d in DIMENSIONS))}
    summary["gema_failures"] = float(sum(s != OK for s in per["gema_status"]))
    return MetricResult(per, summary)


def gema_requests(refs: Sequence[str], hyps: Sequence[str], cfg: GemaConfig) -> tuple[list[Any], list[str], list[Any]]:
    """Entity requests for each distinct report text (with that text list) and one subjective
    request per pair."""
    entity_prompt = template("gema_entities", ("report",))
    texts = list(dict.fromkeys(truncate_words(t, cfg.max_words) for t in [*refs, *hyps]))
    entity = [entity_prompt.render(purpose=NAME, max_tokens=cfg.max_tokens, json_mode=True, report=t) for t in texts]
    subjective = pair_requests("gema_subjective", refs, hyps, cfg, json_mode=True)
    return entity, texts, subjective


@register
class Gema(Metric):
    """GEMA-Score through the project's LLM client; options: GemaConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS

    def __init__(self, client: Any = None, **options: Any) -> None:
        self.cfg = GemaConfig.from_dict(options)
        self.client = client

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        entity, texts, subjective = gema_requests(refs, hyps, self.cfg)
        replies = answers(client_for(self.client, self.cfg), [*entity, *subjective])
        by_text = dict(zip(texts, replies[: len(entity)]))
        ref_answers = [by_text[truncate_words(r, self.cfg.max_words)] for r in refs]
        hyp_answers = [by_text[truncate_words(h, self.cfg.max_words)] for h in hyps]
        return score_answers(ref_answers, hyp_answers, replies[len(entity) :], self.cfg)
