"""Shared pieces of the LLM-judge metrics (GREEN, VERT, GEMA, proxy rating).

Prompt templates are package data (src/srrg/prompts/*.txt) so that a prompt change is a data change
that the workflow tracks. The error-count parser reads answers exactly as the official GREEN
implementation does (its cleaner, sections, category lines, matched findings) because GREEN and VERT
share that answer format; docs/judges.md lists every place where our reading differs and why.

Every answer carries a status: ok; partial (scored as the official code scores it, but a section is
missing or a count could not be read); or a failure — unparseable, no_response (the endpoint gave
no answer after its retries), truncated (cut off by max_tokens). A failure is never a number: its
score and every count column are NaN, it is left out of means and count-level P/R/F1, the summary
counts it, and a run with more failures than `max_failure_fraction` raises JudgeFailed (a
StageFailed carrying the partial result, so the caller writes it before exiting non-zero).

Structured answers (`llm.structured`, docs/judges.md): where the backend can constrain decoding to a
JSON schema, each judge asks for its fields as JSON in that schema, reads the answer strictly (valid
JSON that satisfies the schema, no repair) and maps it onto the same per-report values as the
text format, so the same counts give the same scores whichever way they arrived.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from srrg.errors import StageFailed
from srrg.llm.base import LLMRequest, PromptTemplate, schema_text
from srrg.metrics.base import Metric, MetricResult
from srrg.report import decode_json
from srrg.settings.metrics import DEFAULT_MODALITY, JudgeConfig

CATEGORIES = ("a", "b", "c", "d", "e", "f")
CATEGORY_NAMES = {
    "a": "False report of a finding in the candidate",
    "b": "Missing a finding present in the reference",
    "c": "Misidentification of a finding's anatomic location/position",
    "d": "Misassessment of the severity of a finding",
    "e": "Mentioning a comparison that isn't in the reference",
    "f": "Omitting a comparison detailing a change from a prior study",
}
# JSON field of each category (a)..(f) in a structured answer
CATEGORY_FIELDS = (
    "false_finding",
    "missing_finding",
    "wrong_location",
    "wrong_severity",
    "false_comparison",
    "missing_comparison",
)
SIGNIFICANT = "Clinically Significant Errors"
INSIGNIFICANT = "Clinically Insignificant Errors"
MATCHED = "Matched Findings"
MODALITY_PHRASE = f"{DEFAULT_MODALITY} report"  # where our prompts name the modality
# options whose whole effect is the prompt text: the signature's prompt hash covers them
PROMPT_OPTIONS = frozenset({"modality", "few_shot"})

# statuses of one judge answer; FAILED ones have no score
OK, PARTIAL, UNPARSEABLE, NO_RESPONSE, TRUNCATED = "ok", "partial", "unparseable", "no_response", "truncated"
FAILED = (NO_RESPONSE, TRUNCATED, UNPARSEABLE)  # most to least severe

_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS = "|".join(_WORD_NUMBERS)
_ASSISTANT = "<|assistant|>"  # the official GREEN chat template's answer marker
_EXPLANATION = "[Explanation]:"
_ECHOED_EXPLANATION = "[Explanation]:\n    <Explanation>\n"  # the prompt's answer template, indented
# placeholders of the prompts' answer templates (GREEN, VERT), never part of a real answer
_PLACEHOLDERS = ("<The number of", "<number>", "<Error", "<Finding", "<error", "<finding")


@dataclass(frozen=True)
class Reply:
    """One judge answer as the parsers see it: its text (None when there is none) and how it
    arrived: ok | no_response (error after retries; `error` says why) | truncated (cut off)."""

    text: str | None
    status: str = OK
    error: str = ""


def as_reply(answer: str | Reply | None) -> Reply:
    """A plain answer text is an ok reply and None is no answer, so parsers accept either."""
    if isinstance(answer, Reply):
        return answer
    return Reply(None, NO_RESPONSE) if answer is None else Reply(answer)


@cache
def load_prompt(name: str) -> str:
    """The packaged prompt template `srrg/prompts/<name>.txt`."""
    return resources.files("srrg").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


def prompt_text(name: str, modality: str = DEFAULT_MODALITY) -> str:
    """The packaged prompt with its imaging modality: each "chest X-ray report" of our own prompts
    names `modality` instead; the default returns the packaged text unchanged, so answers cached
    for it stay valid (docs/judges.md "Modality")."""
    text = load_prompt(name)
    return text if modality == DEFAULT_MODALITY else text.replace(MODALITY_PHRASE, f"{modality} report")


def truncate_words(text: str | None, max_words: int) -> str:
    """First max_words whitespace tokens (GREEN truncates each report to 300 words); 0 keeps all."""
    words = (text or "").split()
    return " ".join(words[:max_words] if max_words > 0 else words)


def to_count(token: str) -> int | None:
    """A non-negative count written as digits or as an English word (zero..twenty)."""
    token = token.strip().lower()
    if token.isdigit():
        return int(token)
    return _WORD_NUMBERS.get(token)


def clean_response(text: str) -> str:
    """The official GREEN cleaner (green_score.utils.clean_responses), rule for rule: keep what
    follows the last `<|assistant|>`; then, when an `[Explanation]:` is present, keep what follows
    the last one — except when the indented answer template `[Explanation]:\\n    <Explanation>\\n`
    was echoed, where the official code keeps the text between the first and the second
    `[Explanation]:` (the echoed template); finally drop `</s>` and `<unk>`."""
    if _ASSISTANT in text:
        text = text.split(_ASSISTANT)[-1]
    if _EXPLANATION in text:
        parts = text.split(_EXPLANATION)
        text = parts[1] if _ECHOED_EXPLANATION in text else parts[-1]
    return text.replace("</s>", "").replace("<unk>", "")


def section(text: str, name: str) -> str | None:
    """Body of the first `[name]:`, which runs to the first blank line (official rule); None if absent."""
    match = re.search(rf"\[{re.escape(name)}\]:\s*(.*?)(?:\n\s*\n|\Z)", text, re.DOTALL)
    return match.group(1) if match else None


_SCORE_NUMBER = re.compile(r"(?<![\d.])(-?(?:\d*\.\d+|\d+))(%?)")  # a minus sign is kept: -0.2 is out of range
_SCORE_SCALE = re.compile(r"(?:/|\bout of\b)\s*(?:\d*\.\d+|\d+)", re.IGNORECASE)  # "0.8/1.0", "8 out of 10"


def parse_direct_score(answer: str | Reply | None) -> float:
    """The [Score] section's score: its only or last number once scale denominators ("/ 1.00",
    "out of 10") are dropped, rounded to two decimals; a percentage ("85%") is divided by 100.
    A value outside [0, 1], a missing number or an echoed template is NaN (no score is invented)."""
    reply = as_reply(answer)
    if reply.status != OK or not reply.text:
        return math.nan
    body = section(clean_response(reply.text), "Score")
    if body is None or "<score" in body:  # "<score between 0.00 and 1.00>": the template echoed
        return math.nan
    numbers = _SCORE_NUMBER.findall(_SCORE_SCALE.sub(" ", body))
    if not numbers:
        return math.nan
    digits, percent = numbers[-1]
    value = float(digits) / (100 if percent else 1)
    return round(value, 2) if 0.0 <= value <= 1.0 else math.nan


def _count_pattern(number_words: bool) -> re.Pattern[str]:
    alternatives = rf"\d+|{_NUMBER_WORDS}" if number_words else r"\d+"
    return re.compile(rf"(?<=: )\b(?:{alternatives})\b(?=\.)", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """What one section yielded: its counts, whether every count it announces was read, and
    whether any count was read at all (a section starting with "No" reads as all zeros)."""

    counts: tuple[int, ...]
    complete: bool
    any_read: bool


def category_counts(body: str, number_words: bool) -> Reading:
    """Six counts (a)..(f) from a category section, as the official parser reads them: lines
    `(x) ...: N.`, numbered (1)..(6) when no lettered line exists; the lines are sorted and the last
    line of a category with a readable count wins, so duplicated lines are never added up. A body
    starting with "No" means no errors. A category line without a readable count (or a body with no
    category line) reads as 0, as in the official code, but makes the reading incomplete.
    number_words=False is the exact official behaviour (a word count reads as 0)."""
    if body.startswith("No"):
        return Reading((0,) * len(CATEGORIES), True, True)
    labels = [f"({c}) " for c in CATEGORIES]
    lines = sorted(re.findall(r"\([a-f]\) .*", body))
    if not lines:
        lines = sorted(re.findall(r"\([1-6]\) .*", body))
        labels = [f"({i}) " for i in range(1, len(CATEGORIES) + 1)]
    pattern = _count_pattern(number_words)
    counts = [0] * len(CATEGORIES)
    complete, any_read = bool(lines), False
    for position, label in enumerate(labels):
        for line in lines:
            if line.startswith(label):
                found = pattern.findall(line)
                if found:
                    counts[position] = to_count(found[0]) or 0
                    any_read = True
                else:
                    complete = False
    return Reading(tuple(counts), complete, any_read)


def matched_count(body: str, number_words: bool) -> tuple[int | None, tuple[str, ...]]:
    """Matched findings: the integer before the first period at the very start of the section
    (official rule; "No ..." means 0) and the `;`-separated finding names after it; None when no
    count can be read there (the official code then reads 0)."""
    if body.startswith("No"):
        return 0, ()
    alternatives = rf"\d+|{_NUMBER_WORDS}" if number_words else r"\d+"
    match = re.match(rf"\b({alternatives})\b\.", body, re.IGNORECASE)
    if not match:
        return None, ()
    rest = body[match.end() :]
    names = tuple(n.strip().rstrip(".") for n in rest.split(";") if n.strip().rstrip("."))
    return to_count(match.group(1)) or 0, names


@dataclass(frozen=True)
class ErrorReport:
    """Parsed error-count answer: per-category significant and insignificant counts, matched
    findings, and a status (ok | partial | unparseable | no_response | truncated)."""

    significant: tuple[int, ...] = (0,) * 6
    insignificant: tuple[int, ...] = (0,) * 6
    matched: int = 0
    matched_findings: tuple[str, ...] = field(default=())
    status: str = UNPARSEABLE

    @property
    def parsed(self) -> bool:
        return self.status in (OK, PARTIAL)


def _echoes_template(bodies: Sequence[str | None]) -> bool:
    return any(body is not None and p in body for body in bodies for p in _PLACEHOLDERS)


def parse_error_report(answer: str | Reply | None, number_words: bool) -> ErrorReport:
    """Parse a GREEN-format answer; never raises. Counts are the official parser's; the status adds
    what it does not say: `partial` when a section is missing or a count could not be read (both
    read as 0, as officially); `unparseable` when neither the significant-error nor the
    matched-findings section exists, or when not one count could be read and the prompt's answer
    template was echoed; a reply that failed in transport keeps its status (no_response, truncated)."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return ErrorReport(status=reply.status if reply.status != OK else NO_RESPONSE)
    cleaned = clean_response(reply.text)
    sig, insig, matched = (section(cleaned, s) for s in (SIGNIFICANT, INSIGNIFICANT, MATCHED))
    if sig is None and matched is None:
        return ErrorReport(status=UNPARSEABLE)
    none = Reading((0,) * len(CATEGORIES), False, False)
    sig_read = category_counts(sig, number_words) if sig is not None else none
    insig_read = category_counts(insig, number_words) if insig is not None else none
    n_matched, names = matched_count(matched, number_words) if matched is not None else (None, ())
    if not (sig_read.any_read or insig_read.any_read or n_matched is not None) and _echoes_template(
        (sig, insig, matched)
    ):
        return ErrorReport(status=UNPARSEABLE)  # the model echoed the answer template, no count at all
    complete = sig_read.complete and insig_read.complete and n_matched is not None
    return ErrorReport(
        significant=sig_read.counts,
        insignificant=insig_read.counts,
        matched=n_matched or 0,
        matched_findings=names,
        status=OK if complete else PARTIAL,
    )


MAX_ITEMS = 20  # longest list a structured answer may hold (bounds what a looping model can emit)


def error_report_schema(title: str, score: bool = False) -> dict[str, Any]:
    """JSON schema of a GREEN-format answer: an explanation, six counts (a)..(f) of clinically
    significant and of insignificant errors, the matched findings (their number is the matched
    count) and, for VERT, the score in [0, 1]. Fields are in the text format's order."""
    counts = {
        "type": "object",
        "properties": {f: {"type": "integer", "minimum": 0} for f in CATEGORY_FIELDS},
        "required": list(CATEGORY_FIELDS),
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {
        "explanation": {"type": "string"},
        "clinically_significant_errors": counts,
        "clinically_insignificant_errors": counts,
        "matched_findings": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": MAX_ITEMS},
    }
    if score:
        properties["score"] = {"type": "number", "minimum": 0, "maximum": 1}
    return object_schema(title, properties)


def object_schema(title: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """An object schema with every property required and no other (what OpenAI's strict mode needs)."""
    return {
        "title": title,
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def strict_object(reply: Reply, schema: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(object, status) of a structured answer: the whole text must be one JSON object valid under
    the schema (no repair, no prose around it), else unparseable; a reply that failed in transport
    keeps its status (no_response, truncated). An answer nested deeper than Python's recursion
    limit (a degenerate model repeating `[`) is unparseable too, never a RecursionError."""
    import jsonschema

    if reply.status != OK or reply.text is None:
        return None, reply.status if reply.status != OK else NO_RESPONSE
    try:
        obj = json.loads(reply.text)
        valid = isinstance(obj, dict) and jsonschema.Draft202012Validator(schema).is_valid(obj)
    except (ValueError, RecursionError):
        return None, UNPARSEABLE
    return (obj, OK) if valid else (None, UNPARSEABLE)


def structured_error_report(
    answer: str | Reply | None, schema: Mapping[str, Any]
) -> tuple[ErrorReport, dict[str, Any]]:
    """(ErrorReport, the answer object) of a structured GREEN-format answer: the same counts the
    text parser reads from the same answer written as text; status ok or a failure, never partial
    (the schema makes every count present)."""
    obj, status = strict_object(as_reply(answer), schema)
    if obj is None:
        return ErrorReport(status=status), {}
    findings = tuple(f.strip() for f in obj["matched_findings"])
    return ErrorReport(
        significant=tuple(int(obj["clinically_significant_errors"][f]) for f in CATEGORY_FIELDS),
        insignificant=tuple(int(obj["clinically_insignificant_errors"][f]) for f in CATEGORY_FIELDS),
        matched=len(findings),
        matched_findings=findings,
        status=OK,
    ), obj


def count_columns(report: ErrorReport) -> tuple[list[float], list[float], float]:
    """(significant a..f, insignificant a..f, matched) as per-report column values: NaN for an
    answer that failed, so it can never count as "no errors" in means or count-level P/R/F1."""
    if not report.parsed:
        nan = [math.nan] * len(CATEGORIES)
        return nan, list(nan), math.nan
    return [float(c) for c in report.significant], [float(c) for c in report.insignificant], float(report.matched)


def failure_counts(prefix: str, statuses: Sequence[str]) -> dict[str, float]:
    """Summary keys `<prefix>_failures` (answers without a score) and one per failure kind."""
    out = {f"{prefix}_failures": float(sum(s in FAILED for s in statuses))}
    out.update({f"{prefix}_{kind}": float(sum(s == kind for s in statuses)) for kind in FAILED})
    return out


def unified_score(tp: float, sig: float, insig: float, a: float, b_sig: float, b_insig: float) -> float:
    """VERT's unified family a*TP / (a*TP + bS*S + bI*I); a zero numerator scores 0 (as GREEN
    scores a report without matched findings)."""
    numerator = a * tp
    if numerator <= 0:
        return 0.0
    return numerator / (numerator + b_sig * sig + b_insig * insig)


def decode_json_object(text: str | None) -> dict[str, Any] | None:
    """The JSON object in a model answer (strict first, then json-repair for prose, code fences or
    broken quoting); None when there is no object."""
    if not isinstance(text, str) or not text.strip():
        return None
    candidate = text.strip()
    start, end = candidate.find("{"), candidate.rfind("}")
    if start != -1 and end > start:
        candidate = candidate[start : end + 1]
    obj, _ = decode_json(candidate)
    return obj if isinstance(obj, dict) else None


def population_std(values: Sequence[float]) -> float:
    """Population standard deviation of the non-NaN values (np.std, as GREEN reports it)."""
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return math.nan
    mean = sum(kept) / len(kept)
    return math.sqrt(sum((v - mean) ** 2 for v in kept) / len(kept))


class JudgeFailed(StageFailed):
    """The judge could not answer well enough for its scores to be trusted. `result` holds the
    per-report values and statuses computed so far, for the caller to write before exiting."""

    def __init__(self, message: str, result: MetricResult) -> None:
        super().__init__(message)
        self.result = result


def template(
    name: str, fields_: Sequence[str], text: str | None = None, modality: str = DEFAULT_MODALITY
) -> PromptTemplate:
    """A one-message chat template from a packaged prompt for `modality` (or the given text under
    that id); its version is the text's hash, so an edited prompt never reuses answers cached for
    the old one."""
    text = prompt_text(name, modality) if text is None else text
    version = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return PromptTemplate(id=name, version=version, messages=(("user", text),), fields=tuple(fields_))


def structured_template(
    name: str,
    marker: str,
    answer: str,
    fields_: Sequence[str],
    modality: str = DEFAULT_MODALITY,
    text: str | None = None,
) -> PromptTemplate:
    """The packaged prompt `name` for `modality` (or the given text of it) with its answer-format
    part (from `marker` on) replaced by the packaged JSON instruction `answer`: the task text stays
    the published one."""
    text = prompt_text(name, modality) if text is None else text
    if marker not in text:
        raise ValueError(f"prompt {name!r} has no answer-format marker {marker!r}")
    body = text[: text.index(marker)].rstrip() + "\n\n" + load_prompt(answer)
    return template(f"{name}_structured", fields_, body)


def structured_mode(client: Any, text_model: re.Pattern[str] | None = None) -> bool:
    """Whether the judge asks for structured answers: `llm.structured` of the client's config, or,
    when that is null, whether the backend can constrain decoding to a schema (openai) and the
    model is not one tuned on the text format (`text_model`, e.g. the official GREEN models). A
    client without a config or backend (a test double) answers text. true on a backend without
    schema support is an error."""
    wanted = getattr(getattr(client, "cfg", None), "structured", None)
    backend = getattr(client, "backend", None)
    supports = bool(getattr(backend, "supports_schema", False))
    if wanted and not supports:
        raise ValueError(
            "llm.structured: true needs a backend with schema-constrained decoding (openai); "
            f"{describe(client)} has none"
        )
    if wanted is None:
        return supports and not (text_model is not None and text_model.search(str(getattr(backend, "model", ""))))
    return wanted


def ask(client: Any, requests: Sequence[LLMRequest]) -> list[Reply]:
    """Send all requests in one batch (so cache, concurrency and retries apply) and return one
    Reply per request, in order: the text with status ok, the cut-off text with status truncated,
    or no text with status no_response and the client's error."""
    if not requests:
        return []
    out = []
    for r in client.complete(list(requests)):
        if r.ok:
            out.append(Reply(r.text))
        elif r.status == TRUNCATED:
            out.append(Reply(r.text, TRUNCATED, r.error or ""))
        else:
            out.append(Reply(None, NO_RESPONSE, r.error or ""))
    return out


def describe(client: Any) -> str:
    """The client's endpoint for failure messages (any object with complete() may stand in)."""
    return client.describe() if hasattr(client, "describe") else type(client).__name__


def worst(statuses: Sequence[str]) -> str:
    """The most severe failure among several statuses of one pair, or ok."""
    return next((kind for kind in FAILED if kind in statuses), OK)


def check_failures(
    metric: str, statuses: Sequence[str], replies: Sequence[Reply], client: Any, cfg: JudgeConfig, result: MetricResult
) -> None:
    """Raise JudgeFailed when no request got an answer, or when the share of failed pairs exceeds
    cfg.max_failure_fraction; one line names the metric, the counts, the limit and the endpoint."""
    n = len(statuses)
    failed = [s for s in statuses if s in FAILED]
    no_answer = bool(replies) and all(r.status == NO_RESPONSE for r in replies)
    if not n or (not no_answer and len(failed) / n <= cfg.max_failure_fraction):
        return
    kinds = ", ".join(f"{failed.count(k)} {k}" for k in FAILED if k in failed)
    error = next((r.error for r in replies if r.error), "")
    raise JudgeFailed(
        f"{metric}: {len(failed)} of {n} judge answers failed ({kinds}; allowed share "
        f"{cfg.max_failure_fraction:g}, max_tokens {cfg.max_tokens}) from {describe(client)}"
        + (f"; first error: {error}" if error else ""),
        result,
    )


def judge_signature(name: str, cfg: JudgeConfig, requests: Any, extra: Sequence[tuple[str, str]] = ()) -> str:
    """A judge's signature: its options in declaration order, except PROMPT_OPTIONS, whose effect
    the `prompt:<hash8>` of its templates (requests(structured) for one empty pair) carries, then
    `extra` parts (VERT's few-shot ids); so a default judge's signature is the one it had before
    those options existed."""
    from srrg.metrics.signature import compose, config_parts, with_prompts

    parts = [p for p in config_parts(cfg) if p[0] not in PROMPT_OPTIONS]
    return with_prompts(compose(name, [*parts, *extra]), requests)


def client_for(client: Any, cfg: JudgeConfig) -> Any:
    """The given client, or one built from the `llm` slice (imported lazily: scoring BLEU must not
    load an LLM backend). The rules backend has no model and cannot judge."""
    if client is not None:
        return client
    from srrg.llm import LLMClient
    from srrg.settings.llm import LLMConfig

    llm_cfg = LLMConfig.from_dict(cfg.llm)
    if llm_cfg.backend == "rules":
        raise ValueError("LLM-judge metrics need llm.backend 'openai' or 'local'; 'rules' has no model")
    return LLMClient(llm_cfg)


class PairJudge(Metric):
    """A judge that sends one request per pair and scores the replies: subclasses name their config
    class and status columns, build the requests and parse the replies. `client` (any object with
    complete(requests)) lets several metrics share one client."""

    status_keys: ClassVar[tuple[str, ...]]
    text_model: ClassVar[re.Pattern[str] | None] = None  # models that answer text even where schemas work

    def __init__(self, client: Any = None, **options: Any) -> None:
        super().__init__(**options)
        self.client = client

    @abstractmethod
    def requests(self, refs: Sequence[str], hyps: Sequence[str], structured: bool = False) -> list[LLMRequest]:
        """One request per (reference, hypothesis) pair; structured: ask for the answer schema."""

    @abstractmethod
    def score(self, replies: Sequence[str | Reply | None], structured: bool = False) -> MetricResult:
        """Per-report values and summary from the replies (a plain text is an ok reply)."""

    def signature(self, key: str) -> str:
        """The options' signature plus the hash of the judge's prompt templates (judge_signature)."""
        return judge_signature(self.name, self.cfg, lambda structured: self.requests([""], [""], structured))

    def context_requests(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]], structured: bool
    ) -> list[LLMRequest]:
        """The requests of pairs with their patient context; a judge that reads context (CRIMSON)
        overrides this, every other one ignores the context."""
        return self.requests(refs, hyps, structured)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        return self.compute_with_context(refs, hyps, [{}] * len(refs))

    def compute_with_context(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]]
    ) -> MetricResult:
        client = client_for(self.client, self.cfg)
        structured = structured_mode(client, self.text_model)
        replies = ask(client, self.context_requests(refs, hyps, contexts, structured))
        result = self.score(replies, structured)
        statuses = [worst([result.per_report[k][i] for k in self.status_keys]) for i in range(len(replies))]
        check_failures(self.name, statuses, replies, client, self.cfg, result)
        return result


def pair_requests(
    name: str,
    refs: Sequence[str],
    hyps: Sequence[str],
    cfg: JudgeConfig,
    json_mode: bool = False,
    schema: Mapping[str, Any] | None = None,
    prompt: PromptTemplate | None = None,
    **extra: str,
) -> list[LLMRequest]:
    """One request per (reference, candidate) pair from `prompt` (default: the packaged prompt
    `name`); both reports are cut to cfg.max_words; `schema` asks for an answer in that JSON schema;
    `extra` fills further declared fields (e.g. a scale)."""
    prompt = prompt or template(name, ("reference", "candidate", *extra), modality=cfg.modality)
    return [
        prompt.render(
            purpose=name,
            max_tokens=cfg.max_tokens,
            json_mode=json_mode or schema is not None,
            json_schema=schema_text(schema) if schema is not None else None,
            reference=truncate_words(r, cfg.max_words),
            candidate=truncate_words(h, cfg.max_words),
            **extra,
        )
        for r, h in zip(refs, hyps, strict=True)
    ]
