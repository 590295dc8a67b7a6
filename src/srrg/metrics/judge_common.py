"""Shared pieces of the LLM-judge metrics (GREEN, VERT, GEMA, proxy rating).

Prompt templates are package data (src/srrg/prompts/*.txt) so that a prompt change is a data change
that the workflow tracks. The error-count parser follows the official GREEN implementation
(Stanford-AIMI/GREEN, `parse_error_counts`) because GREEN and VERT share that answer format; where
this module goes beyond the official parser (numbers written as words) it says so.
"""

from __future__ import annotations

import hashlib
import math
import re
from abc import abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, ClassVar, Mapping, Sequence

from srrg.config import from_dict
from srrg.llm.base import LLMRequest, PromptTemplate
from srrg.metrics.base import Metric, MetricResult
from srrg.report import decode_json

CATEGORIES = ("a", "b", "c", "d", "e", "f")
CATEGORY_NAMES = {
    "a": "False report of a finding in the candidate",
    "b": "Missing a finding present in the reference",
    "c": "Misidentification of a finding's anatomic location/position",
    "d": "Misassessment of the severity of a finding",
    "e": "Mentioning a comparison that isn't in the reference",
    "f": "Omitting a comparison detailing a change from a prior study",
}
SIGNIFICANT = "Clinically Significant Errors"
INSIGNIFICANT = "Clinically Insignificant Errors"
MATCHED = "Matched Findings"

# parse statuses of one judge answer
OK, PARTIAL, UNPARSEABLE, NO_RESPONSE = "ok", "partial", "unparseable", "no_response"

_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS = "|".join(_WORD_NUMBERS)
_CHAT_MARKERS = ("<|assistant|>", "<|im_start|>assistant")
# text of the prompts' answer templates (GREEN, VERT), never of a real answer
_PLACEHOLDERS = ("<The number of", "<number>")


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """The packaged prompt template `srrg/prompts/<name>.txt`."""
    return resources.files("srrg").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


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
    """Drop what precedes the answer: echoed chat markers and any preamble before the last
    `[Explanation]:` (the official GREEN cleaner does the same for its own chat template)."""
    for marker in _CHAT_MARKERS:
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    if "[Explanation]:" in text:
        text = text.rsplit("[Explanation]:", 1)[-1]
    return text.replace("</s>", "").replace("<unk>", "")


def section(text: str, name: str) -> str | None:
    """Body of `[name]:`, which runs to the first blank line (official GREEN rule); None if absent."""
    match = re.search(rf"\[{re.escape(name)}\]:\s*(.*?)(?:\n\s*\n|\Z)", text, re.DOTALL)
    return match.group(1) if match else None


def _count_pattern(number_words: bool) -> re.Pattern[str]:
    alternatives = rf"\d+|{_NUMBER_WORDS}" if number_words else r"\d+"
    return re.compile(rf"(?<=: )\b(?:{alternatives})\b(?=\.)", re.IGNORECASE)


def category_counts(body: str, number_words: bool = True) -> tuple[int, ...]:
    """Six counts (a)..(f) from a category section, as the official parser reads them: lines
    `(x) ...: N.`, numbered (1)..(6) when no lettered line exists; the lines are sorted and the last
    line of a category wins, so duplicated lines are never added up. A body starting with "No"
    means no errors. number_words=False is the exact official behaviour (a word count reads as 0)."""
    counts = [0] * len(CATEGORIES)
    if body.startswith("No"):
        return tuple(counts)
    labels = [f"({c}) " for c in CATEGORIES]
    lines = sorted(re.findall(r"\([a-f]\) .*", body))
    if not lines:
        lines = sorted(re.findall(r"\([1-6]\) .*", body))
        labels = [f"({i}) " for i in range(1, len(CATEGORIES) + 1)]
    pattern = _count_pattern(number_words)
    for position, label in enumerate(labels):
        for line in lines:
            if line.startswith(label):
                found = pattern.findall(line)
                if found:
                    counts[position] = to_count(found[0]) or 0
    return tuple(counts)


def matched_count(body: str, number_words: bool = True) -> tuple[int, tuple[str, ...]]:
    """Matched findings: the integer before the first period at the start of the section (official
    rule) and the `;`-separated finding names after it."""
    if body.startswith("No"):
        return 0, ()
    alternatives = rf"\d+|{_NUMBER_WORDS}" if number_words else r"\d+"
    match = re.match(rf"\b({alternatives})\b\.", body, re.IGNORECASE)
    if not match:
        return 0, ()
    rest = body[match.end() :]
    names = tuple(n.strip().rstrip(".") for n in rest.split(";") if n.strip().rstrip("."))
    return to_count(match.group(1)) or 0, names


@dataclass(frozen=True)
class ErrorReport:
    """Parsed error-count answer: per-category significant and insignificant counts, matched
    findings, and a status (ok | partial: a section missing and read as zero | unparseable |
    no_response)."""

    significant: tuple[int, ...] = (0,) * 6
    insignificant: tuple[int, ...] = (0,) * 6
    matched: int = 0
    matched_findings: tuple[str, ...] = field(default=())
    status: str = UNPARSEABLE

    @property
    def parsed(self) -> bool:
        return self.status in (OK, PARTIAL)


def parse_error_report(text: str | None, number_words: bool = True) -> ErrorReport:
    """Parse a GREEN-format answer; never raises. Missing sections read as zero (official) and
    mark the answer `partial`; with neither the significant-error nor the matched-findings section,
    or with the prompt's answer template echoed instead of counts, the answer is `unparseable`."""
    if text is None:
        return ErrorReport(status=NO_RESPONSE)
    cleaned = clean_response(text)
    sig, insig, matched = (section(cleaned, s) for s in (SIGNIFICANT, INSIGNIFICANT, MATCHED))
    if sig is None and matched is None:
        return ErrorReport(status=UNPARSEABLE)
    if any(body is not None and p in body for body in (sig, matched) for p in _PLACEHOLDERS):
        return ErrorReport(status=UNPARSEABLE)  # the model echoed the answer template
    n_matched, names = matched_count(matched, number_words) if matched is not None else (0, ())
    return ErrorReport(
        significant=category_counts(sig, number_words) if sig is not None else (0,) * 6,
        insignificant=category_counts(insig, number_words) if insig is not None else (0,) * 6,
        matched=n_matched,
        matched_findings=names,
        status=OK if None not in (sig, insig, matched) else PARTIAL,
    )


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


@dataclass(frozen=True)
class JudgeConfig:
    """Options every judge metric takes.

    llm: the `llm` config slice (srrg.llm.LLMConfig) naming backend, model, cache and concurrency;
    max_words: each report is cut to this many words before prompting (GREEN uses 300; 0 keeps all);
    max_tokens: answer length limit sent with every request.
    """

    llm: Mapping[str, Any] = field(default_factory=dict)
    max_words: int = 300
    max_tokens: int = 512

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Any:
        return from_dict(cls, data, f"{cls.__name__} options")


def template(name: str, fields_: Sequence[str]) -> PromptTemplate:
    """A one-message chat template from a packaged prompt; its version is the text's hash, so an
    edited prompt never reuses answers cached for the old one."""
    text = load_prompt(name)
    version = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return PromptTemplate(id=name, version=version, messages=(("user", text),), fields=tuple(fields_))


def answers(client: Any, requests: Sequence[LLMRequest]) -> list[str | None]:
    """Send all requests in one batch (so cache, concurrency and retries apply) and return the
    answer texts in order; a failed request gives None, which the parsers record as no_response."""
    if not requests:
        return []
    responses = client.complete(list(requests))
    return [r.text if r.ok else None for r in responses]


def client_for(client: Any, cfg: JudgeConfig) -> Any:
    """The given client, or one built from the `llm` slice (imported lazily: scoring BLEU must not
    load an LLM backend). The rules backend has no model and cannot judge."""
    if client is not None:
        return client
    from srrg.llm import LLMClient, LLMConfig

    llm_cfg = LLMConfig.from_dict(cfg.llm)
    if llm_cfg.backend == "rules":
        raise ValueError("LLM-judge metrics need llm.backend 'openai' or 'local'; 'rules' has no model")
    return LLMClient(llm_cfg)


class PairJudge(Metric):
    """A judge that sends one request per pair and scores the answer texts: subclasses name their
    config class, build the requests and parse the answers. `client` (any object with
    complete(requests)) lets several metrics share one client."""

    config_class: ClassVar[type[JudgeConfig]]

    def __init__(self, client: Any = None, **options: Any) -> None:
        self.cfg = self.config_class.from_dict(options)
        self.client = client

    @abstractmethod
    def requests(self, refs: Sequence[str], hyps: Sequence[str]) -> list[LLMRequest]:
        """One request per (reference, hypothesis) pair."""

    @abstractmethod
    def score(self, texts: Sequence[str | None]) -> MetricResult:
        """Per-report values and summary from the answers (None = no answer)."""

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        return self.score(answers(client_for(self.client, self.cfg), self.requests(refs, hyps)))


def pair_requests(
    name: str, refs: Sequence[str], hyps: Sequence[str], cfg: JudgeConfig, json_mode: bool = False, **extra: str
) -> list[LLMRequest]:
    """One request per (reference, candidate) pair from the packaged prompt `name`; both reports
    are cut to cfg.max_words; `extra` fills further declared fields (e.g. a scale)."""
    prompt = template(name, ("reference", "candidate", *extra))
    return [
        prompt.render(
            purpose=name,
            max_tokens=cfg.max_tokens,
            json_mode=json_mode,
            reference=truncate_words(r, cfg.max_words),
            candidate=truncate_words(h, cfg.max_words),
            **extra,
        )
        for r, h in zip(refs, hyps, strict=True)
    ]
