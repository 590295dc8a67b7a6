"""GEMA-Score (docs/judges.md): agents as separate LLM calls with JSON answers, arithmetic in code.

1. entity agent (one call per distinct report): (disease, location, severity, uncertainty) tuples;
   disease names are mapped onto the project's finding vocabulary (srrg.vocab synonyms: "effusion"
   and "pleural effusion" are one disease), and a disease listed twice (two nodules) stays twice;
2. objective accuracy, computed here: per dimension (disease, location, severity, uncertainty) the
   harmonic mean of precision (share of candidate entities matched in the reference) and recall
   (share of reference entities matched in the candidate), an entity matching when the other
   report has any entity of its disease agreeing in that dimension (both empty -> 1, one empty ->
   0); S_obj = Σ w_d · score_d. Option objective: shared_findings keeps srrg's earlier reading;
3. subjective agent (one call per pair): fluency, grammar and terminology issue counts,
   S_sub = Σ w_a · max(0, 1 - 0.05 · errors_a), rounded to the nearest of {0, 0.2, ..., 1};
4. GEMA = α · S_obj + (1 - α) · S_sub (α = 0.8), with the explanations kept per report.
Structured requests add each agent's JSON schema (ENTITY_SCHEMA, SUBJECTIVE_SCHEMA) and read the
answers strictly (no repair), to the same values.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from srrg.llm.base import schema_text
from srrg.metrics.base import Metric, MetricResult, nanmean, register
from srrg.metrics.judges.common import (
    MAX_ITEMS,
    OK,
    UNPARSEABLE,
    Reply,
    as_reply,
    ask,
    check_failures,
    client_for,
    decode_json_object,
    failure_counts,
    judge_signature,
    object_schema,
    pair_requests,
    strict_object,
    structured_mode,
    template,
    to_count,
    truncate_words,
    worst,
)
from srrg.settings.metrics import GEMA_ASPECTS, GEMA_DIMENSIONS, GemaConfig
from srrg.text.spelling import plain_spelling
from srrg.vocab import severity_map, synonym_map

NAME = "gema"
KEYS = (
    "gema",
    "gema_obj",
    "gema_sub",
    *(f"gema_{d}" for d in GEMA_DIMENSIONS),
    *(f"gema_{a}_errors" for a in GEMA_ASPECTS),
    "gema_status",
    "gema_explanation",
    "gema_ref_entities",
    "gema_hyp_entities",
)
_UNCERTAINTY = {
    "certain": "certain", "definite": "certain", "present": "certain", "3": "certain",
    "probable": "probable", "likely": "probable", "probably": "probable", "2": "probable",
    "uncertain": "uncertain", "possible": "uncertain", "possibly": "uncertain", "questionable": "uncertain",
    "1": "uncertain",
}  # fmt: skip

Entity = tuple[str, str | None, str | None, str | None]
_TEXT_OR_NULL = {"type": ["string", "null"]}
_ENTITY = object_schema(
    "entity",
    {
        "disease": {"type": "string", "minLength": 1},
        "location": _TEXT_OR_NULL,
        "severity": _TEXT_OR_NULL,
        "uncertainty": {"enum": ["certain", "probable", "uncertain"]},
    },
)
ENTITY_SCHEMA = object_schema("gema_entities", {"entities": {"type": "array", "maxItems": MAX_ITEMS, "items": _ENTITY}})
SUBJECTIVE_SCHEMA = object_schema(
    "gema_subjective",
    {**{f"{a}_errors": {"type": "integer", "minimum": 0} for a in GEMA_ASPECTS}, "explanation": {"type": "string"}},
)
# aspect_weights_by: agent: the subjective agent also weighs the aspects (its own prompt and schema)
WEIGHTED_SUBJECTIVE = "gema_subjective_weights"
WEIGHTED_SUBJECTIVE_SCHEMA = object_schema(
    WEIGHTED_SUBJECTIVE,
    {
        **{f"{a}_errors": {"type": "integer", "minimum": 0} for a in GEMA_ASPECTS},
        **{f"{a}_weight": {"type": "number", "minimum": 0, "maximum": 1} for a in GEMA_ASPECTS},
        "explanation": {"type": "string"},
    },
)


def _optional(value: Any) -> str | None:
    if value is None or not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    text = plain_spelling(str(value))
    return None if text in {"", "null", "none", "n/a", "unknown"} else text


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[dict[str, str], re.Pattern[str]]:
    """The synonym map and one pattern of its surface forms, longest first (whole words only)."""
    synonyms = synonym_map()
    forms = sorted(synonyms, key=len, reverse=True)
    return synonyms, re.compile(r"\b(?:" + "|".join(re.escape(f) for f in forms) + r")\b")


def canonical_disease(name: str) -> str:
    """The vocabulary's canonical finding for a disease name: the whole name when it is a known
    surface form, else the longest known form inside it ("small left effusion" -> pleural
    effusion); a name with no known form is kept as written (open vocabulary)."""
    synonyms, pattern = _vocabulary()
    if name in synonyms:
        return synonyms[name]
    found = pattern.findall(name)
    return synonyms[max(found, key=len)] if found else name


def answer_object(reply: Reply, schema: Mapping[str, Any], structured: bool) -> dict[str, Any] | None:
    """The JSON object of an agent's ok answer: strictly valid under its schema when structured,
    else found and repaired in free text."""
    return strict_object(reply, schema)[0] if structured else decode_json_object(reply.text)


def parse_entities(answer: str | Reply | None, structured: bool = False) -> tuple[tuple[Entity, ...], str]:
    """Entity tuples from the entity agent's JSON, and a status. Disease names are canonical
    vocabulary names and severities canonical levels; repeated diseases are all kept. A reply that
    failed in transport (no_response, or truncated: a cut-off list is never repaired) has none."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return (), reply.status
    obj = answer_object(reply, ENTITY_SCHEMA, structured)
    items = obj.get("entities") if obj is not None else None
    if not isinstance(items, list):
        return (), UNPARSEABLE
    entities = []
    for item in items:
        if not isinstance(item, dict) or _optional(item.get("disease")) is None:
            continue
        disease = canonical_disease(_optional(item["disease"]) or "")
        severity = _optional(item.get("severity"))
        uncertainty = _optional(item.get("uncertainty"))
        entities.append(
            (
                disease,
                _optional(item.get("location")),
                severity_map().get(severity or "", severity),
                _UNCERTAINTY.get(uncertainty or "", uncertainty),
            )
        )
    return tuple(entities), OK


def match_entities(ref: Sequence[Entity], hyp: Sequence[Entity]) -> list[tuple[Entity, Entity]]:
    """One-to-one pairs of a reference and a candidate entity of the same disease, as many as the
    rarer side has; among entities of one disease the pairs that agree on most attributes are
    taken first (ties in report order), so a found nodule pairs with the nodule in its place."""
    candidates = sorted(
        (-sum(r[k] == h[k] for k in range(1, len(GEMA_DIMENSIONS))), i, j)
        for i, r in enumerate(ref)
        for j, h in enumerate(hyp)
        if r[0] == h[0]
    )
    used_ref: set[int] = set()
    used_hyp: set[int] = set()
    pairs = []
    for _, i, j in candidates:
        if i not in used_ref and j not in used_hyp:
            used_ref.add(i)
            used_hyp.add(j)
            pairs.append((ref[i], hyp[j]))
    return pairs


def _harmonic(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def paper_scores(ref: Sequence[Entity], hyp: Sequence[Entity]) -> dict[str, float]:
    """GEMA-Score's per-dimension precision and recall (docs/judges.md): in dimension d an entity
    of one report is matched when the other report holds ANY entity of the same disease that also
    agrees on d (disease: the disease alone); precision is the matched share of the candidate's
    entities, recall that of the reference's, the score their harmonic mean. A repeated finding
    matches as often as it occurs, and an omitted finding lowers every dimension's recall."""
    per = {}
    for i, d in enumerate(GEMA_DIMENSIONS):

        def found(entity: Entity, other: Sequence[Entity], i: int = i) -> bool:
            return any(o[0] == entity[0] and o[i] == entity[i] for o in other)

        precision = sum(found(h, ref) for h in hyp) / len(hyp)
        recall = sum(found(r, hyp) for r in ref) / len(ref)
        per[d] = _harmonic(precision, recall)
    return per


def shared_findings_scores(ref: Sequence[Entity], hyp: Sequence[Entity]) -> dict[str, float]:
    """srrg's earlier reading (option `objective: shared_findings`): disease = 2·matched /
    (|ref| + |hyp|) over one-to-one pairs of the same disease; location, severity and uncertainty =
    the share of those pairs that agree (0 without a pair), so an omission costs only in disease."""
    pairs = match_entities(ref, hyp)
    per = {"disease": 2 * len(pairs) / (len(ref) + len(hyp))}
    for i, d in enumerate(GEMA_DIMENSIONS[1:], start=1):
        per[d] = sum(r[i] == h[i] for r, h in pairs) / len(pairs) if pairs else 0.0
    return per


OBJECTIVES = {"paper": paper_scores, "shared_findings": shared_findings_scores}


def objective_scores(
    ref: Sequence[Entity], hyp: Sequence[Entity], weights: Mapping[str, float], objective: str
) -> dict[str, float]:
    """Per-dimension scores of the chosen reading (OBJECTIVES) and obj, their weighted sum. Two
    reports without entities agree (1 everywhere); exactly one without entities scores 0."""
    if not ref and not hyp:
        per = {d: 1.0 for d in GEMA_DIMENSIONS}
    elif not ref or not hyp:
        per = {d: 0.0 for d in GEMA_DIMENSIONS}
    else:
        per = OBJECTIVES[objective](ref, hyp)
    per["obj"] = sum(weights[d] * per[d] for d in GEMA_DIMENSIONS)
    return per


def parse_subjective(
    answer: str | Reply | None, structured: bool = False, schema: Mapping[str, Any] = SUBJECTIVE_SCHEMA
) -> tuple[dict[str, int] | None, str, str]:
    """(error counts per aspect, explanation, status) from the subjective agent's JSON (schema: the
    one the request asked for, WEIGHTED_SUBJECTIVE_SCHEMA with agent-set weights)."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return None, "", reply.status
    obj = answer_object(reply, schema, structured)
    if obj is None:
        return None, "", UNPARSEABLE
    counts: dict[str, int] = {}
    for aspect in GEMA_ASPECTS:
        value = obj.get(f"{aspect}_errors", obj.get(aspect))
        if isinstance(value, bool):
            return None, "", UNPARSEABLE
        count = (
            int(value)
            if isinstance(value, (int, float)) and value >= 0 and float(value).is_integer()
            else (to_count(value) if isinstance(value, str) else None)
        )
        if count is None:
            return None, "", UNPARSEABLE
        counts[aspect] = count
    explanation = obj.get("explanation")
    return counts, explanation.strip() if isinstance(explanation, str) else "", OK


def agent_weights(answer: str | Reply | None, structured: bool = False) -> dict[str, float] | None:
    """The aspect weights the subjective agent wrote (`<aspect>_weight`), normalized to sum 1; None
    when one is missing, not a finite non-negative number, or all are 0 (nothing to normalize)."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return None
    obj = answer_object(reply, WEIGHTED_SUBJECTIVE_SCHEMA, structured)
    if obj is None:
        return None
    raw = {a: obj.get(f"{a}_weight") for a in GEMA_ASPECTS}
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
               for v in raw.values()):  # fmt: skip
        return None
    total = sum(raw.values())
    return {a: float(v) / total for a, v in raw.items()} if total > 0 else None


def subjective_score(counts: Mapping[str, int], weights: Mapping[str, float], penalty: float = 0.05) -> float:
    """Σ w_a · max(0, 1 - penalty · errors_a), rounded to the nearest multiple of 0.2; an exact
    midpoint rounds up (0.9 -> 1.0, 0.3 -> 0.4) whatever the float noise of the weighted sum
    (Python's round() would round half to even and let 1e-16 errors pick the side)."""
    raw = sum(weights[a] * max(0.0, 1.0 - penalty * counts[a]) for a in GEMA_ASPECTS)
    return round(math.floor(raw * 5 + 0.5 + 1e-9) / 5, 1)


def _entities_json(entities: Sequence[Entity]) -> str:
    return json.dumps([dict(zip(GEMA_DIMENSIONS, e)) for e in entities], ensure_ascii=False)


def _objective_note(ref: Sequence[Entity], hyp: Sequence[Entity]) -> str:
    r, h = Counter(e[0] for e in ref), Counter(e[0] for e in hyp)

    def names(c: Counter[str]) -> str:
        return ", ".join(sorted(c.elements())) or "-"

    return f"matched: {names(r & h)}; missing: {names(r - h)}; extra: {names(h - r)}"


def pair_status(statuses: Mapping[str, str]) -> str:
    """ok, or `<worst failure>:<failed agents>` (e.g. truncated:hyp_entities)."""
    failed = [agent for agent, s in statuses.items() if s != OK]
    return OK if not failed else f"{worst(list(statuses.values()))}:{','.join(failed)}"


def score_answers(
    ref_answers: Sequence[str | Reply | None],
    hyp_answers: Sequence[str | Reply | None],
    subjective_answers: Sequence[str | Reply | None],
    cfg: GemaConfig = GemaConfig(),
    structured: bool = False,
) -> MetricResult:
    """GEMA per report from the three agents' answers; a failed agent makes that report NaN and
    its status names the failure and the agent."""
    per: dict[str, list[Any]] = {k: [] for k in KEYS}
    for ref_text, hyp_text, sub_text in zip(ref_answers, hyp_answers, subjective_answers, strict=True):
        ref, ref_status = parse_entities(ref_text, structured)
        hyp, hyp_status = parse_entities(hyp_text, structured)
        agent = cfg.aspect_weights_by == "agent"
        schema = WEIGHTED_SUBJECTIVE_SCHEMA if agent else SUBJECTIVE_SCHEMA
        counts, explanation, sub_status = parse_subjective(sub_text, structured, schema)
        weights = cfg.aspect_weights
        if agent and counts is not None:
            weights = agent_weights(sub_text, structured)
            if weights is None:  # counts without usable weights: no S_sub (Eq. 5 needs both)
                counts, sub_status = None, UNPARSEABLE
        status = pair_status({"ref_entities": ref_status, "hyp_entities": hyp_status, "subjective": sub_status})
        ok = ref_status == hyp_status == OK
        obj = objective_scores(ref, hyp, cfg.dimension_weights, cfg.objective) if ok else None
        sub = subjective_score(counts, weights, cfg.penalty_per_error) if counts is not None else math.nan
        s_obj = obj["obj"] if obj else math.nan
        per["gema"].append(cfg.alpha * s_obj + (1 - cfg.alpha) * sub)
        per["gema_obj"].append(s_obj)
        per["gema_sub"].append(sub)
        for d in GEMA_DIMENSIONS:
            per[f"gema_{d}"].append(obj[d] if obj else math.nan)
        for a in GEMA_ASPECTS:
            per[f"gema_{a}_errors"].append(float(counts[a]) if counts else math.nan)
        per["gema_status"].append(status)
        note = _objective_note(ref, hyp) if obj else ""
        per["gema_explanation"].append(" | ".join(p for p in (note, explanation) if p))
        per["gema_ref_entities"].append(_entities_json(ref))
        per["gema_hyp_entities"].append(_entities_json(hyp))
    summary = {k: nanmean(per[k]) for k in ("gema", "gema_obj", "gema_sub", *(f"gema_{d}" for d in GEMA_DIMENSIONS))}
    summary.update(failure_counts(NAME, [s.split(":")[0] for s in per["gema_status"]]))
    return MetricResult(per, summary)


def gema_requests(
    refs: Sequence[str], hyps: Sequence[str], cfg: GemaConfig, structured: bool = False
) -> tuple[list[Any], list[str], list[Any]]:
    """Entity requests for each distinct report text (with that text list) and one subjective
    request per pair; structured: each with its agent's schema."""
    entity_prompt = template("gema_entities", ("report",), modality=cfg.modality)
    texts = list(dict.fromkeys(truncate_words(t, cfg.max_words) for t in [*refs, *hyps]))
    schema = schema_text(ENTITY_SCHEMA) if structured else None
    entity = [
        entity_prompt.render(purpose=NAME, max_tokens=cfg.max_tokens, json_mode=True, json_schema=schema, report=t)
        for t in texts
    ]
    name, schema = (
        (WEIGHTED_SUBJECTIVE, WEIGHTED_SUBJECTIVE_SCHEMA)
        if cfg.aspect_weights_by == "agent"
        else ("gema_subjective", SUBJECTIVE_SCHEMA)
    )
    subjective = pair_requests(name, refs, hyps, cfg, json_mode=True, schema=schema if structured else None)
    return entity, texts, subjective


@register
class Gema(Metric):
    """GEMA-Score through the project's LLM client; options: GemaConfig fields or a shared `client`."""

    name = NAME
    keys = KEYS

    def __init__(self, client: Any = None, **options: Any) -> None:
        super().__init__(**options)
        self.client = client

    def signature(self, key: str) -> str:
        """The options' signature plus the hash of GEMA's prompt templates (judge_signature)."""

        def requests(structured: bool) -> list[Any]:
            entity, _, subjective = gema_requests([""], [""], self.cfg, structured)
            return [*entity, *subjective]

        return judge_signature(NAME, self.cfg, requests)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        client = client_for(self.client, self.cfg)
        structured = structured_mode(client)
        entity, texts, subjective = gema_requests(refs, hyps, self.cfg, structured)
        replies = ask(client, [*entity, *subjective])
        by_text = dict(zip(texts, replies[: len(entity)]))
        ref_answers = [by_text[truncate_words(r, self.cfg.max_words)] for r in refs]
        hyp_answers = [by_text[truncate_words(h, self.cfg.max_words)] for h in hyps]
        result = score_answers(ref_answers, hyp_answers, replies[len(entity) :], self.cfg, structured)
        check_failures(
            NAME, [s.split(":")[0] for s in result.per_report["gema_status"]], replies, client, self.cfg, result
        )
        return result
