"""CRIMSON (Baharoon et al., 2026): an LLM lists the abnormal findings of both reports with a clinical
significance level each, matches them, and names false findings, missing findings and attribute
errors of matched findings; the score weighs each by its significance (docs/judges.md, CRIMSON).

The prompt is the published one, part by part (src/srrg/prompts/crimson.txt), with the patient
context (age, sex, indication) when the pair has one (Metric.compute_with_context). Scoring follows
the official formula (rajpurkarlab/CRIMSON, CRIMSON/generate_score.py `_calculate_crimson`),
written here from its definition; an answer that cannot be scored is never a number: NaN, with a
status saying why (docs/judges.md lists where our reading differs from the official code).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from srrg.llm.base import LLMRequest, PromptTemplate, schema_text
from srrg.metrics.base import MetricResult, nanmean, register
from srrg.metrics.judges.common import (
    NO_RESPONSE,
    OK,
    UNPARSEABLE,
    PairJudge,
    Reply,
    as_reply,
    failure_counts,
    judge_signature,
    load_prompt,
    object_schema,
    population_std,
    strict_object,
    truncate_words,
)
from srrg.report import decode_json
from srrg.settings.metrics import CrimsonConfig

NAME = "crimson"
# weight of a finding by its clinical significance, and of an attribute error by its severity
SIGNIFICANCE_WEIGHTS = {
    "urgent": 1.0,
    "actionable_not_urgent": 0.5,
    "not_actionable_not_urgent": 0.25,
    "benign_expected": 0.0,
}
ATTRIBUTE_WEIGHTS = {"significant": 0.5, "negligible": 0.0}
UNKNOWN_WEIGHT = 0.25  # a missing or unknown level (official: weights.get(level, 0.25))
ERROR_TYPES = (
    "location",
    "severity",
    "descriptor",
    "measurement",
    "certainty",
    "unspecific",
    "overinterpretation",
    "temporal",
)
ANSWER_KEYS = ("reference_findings", "predicted_findings", "matched_findings", "errors")
# the official fine-tuned judge (MedGemmaCRIMSON) was trained on the prompt without guidelines
FINE_TUNED = re.compile(r"medgemma-4b-it-crimson", re.IGNORECASE)
CONTEXT_LABELS = {"age": "Age", "sex": "Sex", "indication": "Indication"}  # as the official README writes them
MAX_FINDINGS = 40  # longest list a structured answer may hold (bounds a looping model; a CXR report has far fewer)
# the parts of crimson.txt in the official order (prompt_parts.build_prompt); a part with a switch is
# sent only when the switch is on
PART_ORDER = (
    ("objective", None),
    ("context", "context"),
    ("reference", None),
    ("candidate", None),
    ("task_steps", None),
    ("clinical_significance_levels", None),
    ("significance_examples", "guidelines"),
    ("significance_application", None),
    ("attribute_severity_levels", None),
    ("error_categories", None),
    ("matching_criteria", None),
    ("attribute_error_instructions", None),
    ("attribute_severity_guidelines", "guidelines"),
    ("context_guidelines", "context_guidelines"),
    ("output_format", None),
    ("important_notes", None),
)
COUNT_KEYS = (
    "crimson_false_findings",
    "crimson_missing_findings",
    "crimson_attribute_errors",
    *(f"crimson_{t}_errors" for t in ERROR_TYPES),
)
WEIGHT_KEYS = (
    "crimson_weighted_false",
    "crimson_weighted_missing",
    "crimson_weighted_attribute",
    "crimson_reference_weight",
    "crimson_correct",
)
KEYS = (
    "crimson",
    "crimson_status",
    *COUNT_KEYS,
    *WEIGHT_KEYS,
    "crimson_reference_findings",
    "crimson_predicted_findings",
)
_PART = re.compile(r"^==> (\w+) <==\n", re.MULTILINE)
_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL)


@cache
def prompt_parts() -> dict[str, str]:
    """The named parts of crimson.txt: each `==> name <==` line starts one, which runs to the next
    such line (its last line break is the file's separator, not part of the text)."""
    pieces = _PART.split(load_prompt(NAME))
    return {name: body.removesuffix("\n") for name, body in zip(pieces[1::2], pieces[2::2])}


def prompt_body(guidelines: bool, with_context: bool) -> str:
    """The user message as the official build_prompt assembles it: the parts in order, the switched
    ones only when on (the context guidelines need both switches), joined by one blank line."""
    on = {"context": with_context, "guidelines": guidelines, "context_guidelines": guidelines and with_context}
    parts = prompt_parts()
    return "\n\n".join(parts[name] for name, switch in PART_ORDER if switch is None or on[switch])


@cache
def crimson_template(guidelines: bool, with_context: bool) -> PromptTemplate:
    """The system and user messages; the version hashes both, so an edited part never reuses answers."""
    system, body = prompt_parts()["system"], prompt_body(guidelines, with_context)
    version = hashlib.sha256(f"{system}\n\n{body}".encode()).hexdigest()[:12]
    fields = ("reference", "candidate", *(("context",) if with_context else ()))
    return PromptTemplate(
        id=f"{NAME}_context" if with_context else NAME,
        version=version,
        messages=(("system", system), ("user", body)),
        fields=fields,
    )


def context_lines(context: Mapping[str, str]) -> str:
    """The official patient-context block's lines: `    <Label>: <value>` per field, each ending in a
    line break, in the order age, sex, indication."""
    return "".join(f"    {CONTEXT_LABELS[k]}: {context[k]}\n" for k in CONTEXT_LABELS if context.get(k))


def answer_schema() -> dict[str, Any]:
    """JSON schema of the published answer format (the prompt's Output Format), for structured answers."""
    ids = {"type": "array", "items": {"type": "string"}, "maxItems": MAX_FINDINGS}
    finding = object_schema(
        "finding",
        {
            "id": {"type": "string"},
            "finding": {"type": "string"},
            "clinical_significance": {"enum": list(SIGNIFICANCE_WEIGHTS)},
        },
    )
    match = object_schema("match", {"ref_id": {"type": "string"}, "pred_id": {"type": "string"}})
    attribute_error = object_schema(
        "attribute_error",
        {
            "ref_id": {"type": "string"},
            "pred_id": {"type": "string"},
            "severity": {"enum": list(ATTRIBUTE_WEIGHTS)},
            "error_types": {"type": "array", "items": {"enum": list(ERROR_TYPES)}, "maxItems": len(ERROR_TYPES)},
            "explanation": {"type": "string"},
        },
    )
    errors = object_schema(
        "errors",
        {
            "false_findings": ids,
            "missing_findings": ids,
            "attribute_errors": {"type": "array", "items": attribute_error, "maxItems": MAX_FINDINGS},
        },
    )
    findings = {"type": "array", "items": finding, "maxItems": MAX_FINDINGS}
    return object_schema(
        NAME,
        {
            "reference_findings": findings,
            "predicted_findings": findings,
            "matched_findings": {"type": "array", "items": match, "maxItems": MAX_FINDINGS},
            "errors": errors,
        },
    )


SCHEMA = answer_schema()


def pair_text(text: str, max_words: int) -> str:
    """A report as sent: whole and unchanged at max_words 0 (official), else its first max_words words."""
    return text if max_words <= 0 else truncate_words(text, max_words)


def crimson_requests(
    refs: Sequence[str],
    hyps: Sequence[str],
    contexts: Sequence[Mapping[str, str]],
    cfg: CrimsonConfig,
    guidelines: bool,
    structured: bool = False,
) -> list[LLMRequest]:
    """One JSON-mode request per pair (the official code asks for a JSON object); a pair with
    context (and cfg.context on) gets the context block and, with guidelines, the context
    guidelines; structured: the answer is constrained to SCHEMA."""
    out = []
    for ref, hyp, context in zip(refs, hyps, contexts, strict=True):
        block = context_lines(context) if cfg.context else ""
        values = {"reference": pair_text(ref, cfg.max_words), "candidate": pair_text(hyp, cfg.max_words)}
        if block:
            values["context"] = block
        out.append(
            crimson_template(guidelines, bool(block)).render(
                purpose=NAME,
                max_tokens=cfg.max_tokens,
                json_mode=True,
                json_schema=schema_text(SCHEMA) if structured else None,
                **values,
            )
        )
    return out


def _first_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object keeping the first of repeated keys (as the official parser does)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        out.setdefault(key, value)
    return out


def answer_object(text: str) -> dict[str, Any] | None:
    """The JSON object of a text answer: inside a ```json fence if there is one, from its first `{`
    to its last `}`; strict JSON (repeated keys: the first wins), else the project's JSON repair
    (srrg.report.decode_json) for the slips the official parser also repairs (stray quotes, invalid
    escapes, orphan keys); None when there is no object."""
    candidate = text.strip()
    fence = _FENCE.search(candidate)
    if fence:
        candidate = fence.group(1).strip()
    start, end = candidate.find("{"), candidate.rfind("}")
    if start != -1 and end > start:
        candidate = candidate[start : end + 1]
    try:
        obj = json.loads(candidate, object_pairs_hook=_first_key)
    except (ValueError, RecursionError):
        obj, _ = decode_json(candidate)
    return obj if isinstance(obj, dict) else None


@dataclass(frozen=True)
class CrimsonResult:
    """One answer's score and what it rests on; status ok or a failure (then everything is NaN)."""

    status: str
    score: float = math.nan
    counts: tuple[float, ...] = (math.nan,) * len(COUNT_KEYS)
    weights: tuple[float, ...] = (math.nan,) * len(WEIGHT_KEYS)
    reference_findings: str = ""
    predicted_findings: str = ""


def _level_weight(weights: Mapping[str, float], level: Any) -> float:
    return weights.get(level, UNKNOWN_WEIGHT) if isinstance(level, str) else UNKNOWN_WEIGHT


def _is_id(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))


def _well_formed(obj: Mapping[str, Any]) -> bool:
    """Every field the formula reads has the type it needs: the four answer keys; findings and
    matches objects with an id / ref_id; errors an object whose lists hold ids and attribute-error
    objects with a ref_id and error_types a list (or text)."""
    if not all(k in obj for k in ANSWER_KEYS):
        return False
    errors = obj["errors"]
    lists = [obj[k] for k in ANSWER_KEYS[:3]]
    if not isinstance(errors, Mapping) or not all(isinstance(x, list) for x in lists):
        return False
    for items, key in zip(lists, ("id", "id", "ref_id")):
        if not all(isinstance(i, Mapping) and key in i and _is_id(i[key]) for i in items):
            return False
    for key in ("false_findings", "missing_findings"):
        ids = errors.get(key, [])
        if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
            return False
    attributes = errors.get("attribute_errors", [])
    return isinstance(attributes, list) and all(
        isinstance(e, Mapping)
        and "ref_id" in e
        and _is_id(e["ref_id"])
        and isinstance(e.get("error_types", []), (list, str))
        for e in attributes
    )


def _listing(findings: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(f"{f['id']} {f.get('finding', '')} ({f.get('clinical_significance', '')})" for f in findings)


def score_answer(obj: Mapping[str, Any]) -> CrimsonResult:
    """The official CRIMSON score of one answer object (docs/judges.md, CRIMSON):
    correct = over matched reference findings (each once) its weight w, or w * w / (w + A) when it
    has attribute errors of total weight A; E_false, E_miss = the weights of the false / missing
    findings; N_G = the total weight of the reference findings (the number of matches when the
    answer lists none). S = (correct - E_false) / N_G, or with N_G = 0: 1 without false or missing
    findings, else negative. The score is S when S >= 0, else -x / (1 + x) with x = E_false -
    correct (0 when x <= 0), rounded to 4 decimals: a value in (-1, 1]."""
    if not _well_formed(obj):
        return CrimsonResult(UNPARSEABLE)
    refs, preds, matched, errors = (obj[k] for k in ANSWER_KEYS)
    ref_weight = {r["id"]: _level_weight(SIGNIFICANCE_WEIGHTS, r.get("clinical_significance")) for r in refs}
    pred_weight = {p["id"]: _level_weight(SIGNIFICANCE_WEIGHTS, p.get("clinical_significance")) for p in preds}
    false_ids, missing_ids = errors.get("false_findings", []), errors.get("missing_findings", [])
    attributes = errors.get("attribute_errors", [])
    e_false = sum(pred_weight.get(i, 0.0) for i in false_ids)
    e_miss = sum(ref_weight.get(i, 0.0) for i in missing_ids)
    by_ref: dict[Any, list[Mapping[str, Any]]] = {}
    for e in attributes:
        by_ref.setdefault(e["ref_id"], []).append(e)
    n_g = sum(_level_weight(SIGNIFICANCE_WEIGHTS, r.get("clinical_significance")) for r in refs)
    if n_g == 0 and not refs:
        n_g = len(matched) + e_miss
    correct, seen = 0.0, set()
    for m in matched:
        if m["ref_id"] in seen:
            continue  # one reference finding matched by several predicted ones counts once
        seen.add(m["ref_id"])
        w = ref_weight.get(m["ref_id"], 0.0)
        found = by_ref.get(m["ref_id"], [])
        if not found:
            correct += w
            continue
        total = w + sum(_level_weight(ATTRIBUTE_WEIGHTS, e.get("severity")) for e in found)
        correct += w * (w / total if total > 0 else 0.0)
    excess = e_false - correct
    if n_g == 0:
        s = 1.0 if e_false == 0 and e_miss == 0 else -(e_false + e_miss + 1)
    else:
        s = (correct - e_false) / n_g
    score = s if s >= 0 else (-excess / (1 + excess) if excess > 0 else 0.0)
    counts = (
        float(len(false_ids)),
        float(len(missing_ids)),
        float(len(attributes)),
        *(float(sum(t in e.get("error_types", []) for e in attributes)) for t in ERROR_TYPES),
    )
    weighted_attributes = sum(_level_weight(ATTRIBUTE_WEIGHTS, e.get("severity")) for e in attributes)
    return CrimsonResult(
        OK,
        round(score, 4),
        counts,
        (e_false, e_miss, weighted_attributes, n_g, correct),
        _listing(refs),
        _listing(preds),
    )


def read_answer(answer: str | Reply | None, structured: bool = False) -> CrimsonResult:
    """The result of one reply: a transport failure keeps its status (no_response, truncated: a cut-off
    JSON answer is never closed and scored); text without a well-formed answer object is unparseable.
    structured: the answer must be one object valid under SCHEMA (no repair)."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return CrimsonResult(reply.status if reply.status != OK else NO_RESPONSE)
    if structured:
        obj, status = strict_object(reply, SCHEMA)
        return score_answer(obj) if obj is not None else CrimsonResult(status)
    obj = answer_object(reply.text)
    return score_answer(obj) if obj is not None else CrimsonResult(UNPARSEABLE)


def score_responses(responses: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
    """Per-report score, counts, weights and findings; summary: the mean and population std of the
    score and the mean counts over the scored answers, and the failures."""
    results = [read_answer(r, structured) for r in responses]
    per: dict[str, list[Any]] = {
        "crimson": [r.score for r in results],
        "crimson_status": [r.status for r in results],
        **{k: [r.counts[i] for r in results] for i, k in enumerate(COUNT_KEYS)},
        **{k: [r.weights[i] for r in results] for i, k in enumerate(WEIGHT_KEYS)},
        "crimson_reference_findings": [r.reference_findings for r in results],
        "crimson_predicted_findings": [r.predicted_findings for r in results],
    }
    summary = {"crimson": nanmean(per["crimson"]), "crimson_std": population_std(per["crimson"])}
    summary.update({k: nanmean(per[k]) for k in COUNT_KEYS[:3]})
    summary["crimson_n_parsed"] = float(sum(r.status == OK for r in results))
    summary.update(failure_counts(NAME, per["crimson_status"]))
    return MetricResult(per, summary)


@register
class Crimson(PairJudge):
    """CRIMSON through the project's LLM client; options: CrimsonConfig fields or a shared `client`.
    The only judge that reads a pair's patient context (context_requests)."""

    name = NAME
    keys = KEYS
    status_keys = ("crimson_status",)

    def guidelines(self) -> bool:
        """cfg.guidelines, or (null) on unless the judge model is the official fine-tuned one."""
        if self.cfg.guidelines is not None:
            return self.cfg.guidelines
        backend = getattr(self.client, "backend", None)
        model = getattr(backend, "model", None) if self.client is not None else self.cfg.llm.get("model")
        return not FINE_TUNED.search(str(model or ""))

    def requests(self, refs: Sequence[str], hyps: Sequence[str], structured: bool = False) -> list[LLMRequest]:
        return self.context_requests(refs, hyps, [{}] * len(refs), structured)

    def context_requests(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]], structured: bool
    ) -> list[LLMRequest]:
        return crimson_requests(refs, hyps, contexts, self.cfg, self.guidelines(), structured)

    def signature(self, key: str) -> str:
        """judge_signature over both templates a run may send (a pair without and one with context)."""
        return judge_signature(
            self.name,
            self.cfg,
            lambda structured: crimson_requests(
                ["", ""], ["", ""], [{}, {"age": "0"}], self.cfg, self.guidelines(), structured
            ),
        )

    def score(self, replies: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
        return score_responses(replies, structured)
