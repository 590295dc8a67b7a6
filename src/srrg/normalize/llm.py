"""The LLM path: one request per unique phrase, the answer cleaned and validated (short, anatomical,
same laterality as the raw phrase), the rules phrase as fallback."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from srrg.llm import LLMClient, LLMResponse, PromptTemplate
from srrg.normalize.rules import one_side, parse_phrase, rules_normalize, segments, tokens
from srrg.normalize.vocabulary import ANATOMY, GLUE, LEFT, RIGHT, SIDE_WORDS
from srrg.settings.normalize import NormalizeConfig
from srrg.text.spelling import plain_spelling

_REFUSAL = re.compile(r"\b(sorry|cannot|can't|unable|as an ai|language model|i am|i'm|please|note|here is|assistant)\b")
_PREPOSITIONS = (
    "in ",
    "at ",
    "on ",
    "along ",
    "within ",
    "over ",
    "near ",
    "adjacent ",
    "involving ",
    "of ",
    "diffusely ",
    "multifocally ",
)


def _prompt() -> PromptTemplate:
    """The prompt (prompt.txt, our wording) as a template; its version is the text's hash, so an
    edited prompt never reuses answers cached for the old one."""
    text = resources.files(__package__).joinpath("prompt.txt").read_text(encoding="utf-8").strip()
    version = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return PromptTemplate(
        id="normalize_location", version=version, messages=(("system", text), ("user", "{phrase}")), fields=("phrase",)
    )


PROMPT = _prompt()


def clean_answer(text: str) -> str:
    """First line of the answer without quotes, arrows or a final period, in the shared spelling."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.split("->")[-1]
    return plain_spelling(line.strip().strip("\"'`*").rstrip(".").strip("\"'`* "))


def validate_answer(raw: str, answer: str, max_words: int) -> str | None:
    """None when the answer is acceptable, else the reason it is rejected. max_words applies per
    comma-separated part of the raw phrase."""
    if not answer:
        return "empty"
    if _REFUSAL.search(answer):
        return "refusal or explanation"
    words = tokens(answer)
    limit = max_words * len(segments(raw))
    if len(words) > limit:
        return f"longer than {limit} words"
    if re.search(r"[^a-z\s,'()-]", answer):
        return "characters outside a phrase"
    if not answer.startswith(_PREPOSITIONS):
        return "does not start with a preposition"
    unknown = [w for w in words if w not in ANATOMY and w not in GLUE]
    if unknown:
        return f"non-anatomical words {unknown[:3]}"
    raw_parse = parse_phrase(raw)
    if (raw_parse.sites or raw_parse.lobes or raw_parse.zones) and not any(
        w in ANATOMY and w not in SIDE_WORDS for w in words
    ):
        return "no anatomical structure"
    raw_side, ans_side = one_side(raw_parse.sides), one_side(parse_phrase(answer).sides)
    if (raw_side is not None and ans_side != raw_side) or (raw_side is None and ans_side in (LEFT, RIGHT)):
        return f"laterality changed ({raw_side} -> {ans_side})"
    return None


@dataclass(frozen=True)
class PhraseResult:
    """How one unique raw phrase was normalized; path: rules | llm | cache; reason: why rules were used."""

    raw: str
    normalized: str | None
    path: str
    llm_answer: str | None = None
    reason: str | None = None


def normalize_phrases(
    phrases: Sequence[str], cfg: NormalizeConfig, client: LLMClient | None = None
) -> list[PhraseResult]:
    """Normalize each unique phrase once. With method llm, only the phrases are sent to the client."""
    rules = [rules_normalize(p) for p in phrases]
    if cfg.method == "rules":
        return [PhraseResult(p, r, "rules") for p, r in zip(phrases, rules)]
    client = client or LLMClient(cfg.llm)
    if not client.has_model:
        return [PhraseResult(p, r, "rules", reason="llm backend has no model") for p, r in zip(phrases, rules)]
    answers = client.complete([PROMPT.render("normalize", max_tokens=cfg.max_tokens, phrase=p) for p in phrases])
    return [_judge(p, r, a, cfg) for p, r, a in zip(phrases, rules, answers)]


def _judge(raw: str, rules: str | None, answer: LLMResponse, cfg: NormalizeConfig) -> PhraseResult:
    if not answer.ok:
        return PhraseResult(raw, rules, "rules", None, f"llm error: {answer.error}")
    cleaned = clean_answer(answer.text)
    reason = validate_answer(raw, cleaned, cfg.max_words)
    if reason:
        return PhraseResult(raw, rules, "rules", answer.text, f"invalid answer: {reason}")
    return PhraseResult(raw, cleaned, "cache" if answer.cached else "llm", answer.text)
