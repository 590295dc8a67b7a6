"""The MIMIC-STRUC structured report: model, parsing of model output, canonicalization, rendering.

Everything that reads or writes a structured report goes through this module so that the
extractor, the trained models, the metrics and the tables all agree on one format (docs/report.md).
Parsing never raises on model output: it returns an (possibly empty) report and a status.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from pathlib import Path
from typing import Annotated, Any

import json_repair
import msgspec
import simplejson

from srrg.text.spelling import plain_spelling

VALID, REPAIRED, UNPARSEABLE = "valid", "repaired", "unparseable"
STATUSES = (VALID, REPAIRED, UNPARSEABLE)
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "structured_report.schema.json"  # package data

_FINDING_KEYS = frozenset({"name", "probability", "level", "location", "size"})
_REPORT_KEYS = frozenset({"positive", "negative"})
_TO_DICT_KEYS = (frozenset({"name", "probability", "level", "location"}), _FINDING_KEYS)  # what Finding.to_dict writes
_PROB_WORD = {3: "there is", 2: "there may be", 1: "there might be"}

# Caches keyed by model output are bounded in entries and in the length of what they keep
# (docs/inputs.md): a text over the cap is computed afresh, never stored, so a flood of long
# distinct outputs cannot grow memory (at most PARSE_CACHE_SIZE x PARSE_CACHE_MAX_CHARS characters
# of report text, and PHRASE_CACHE_SIZE x PHRASE_CACHE_MAX_CHARS per phrase cache).
PARSE_CACHE_SIZE = 1 << 13
PARSE_CACHE_MAX_CHARS = 8192
PHRASE_CACHE_SIZE = 1 << 16
PHRASE_CACHE_MAX_CHARS = 256
# json-repair costs ~25 us per character on long broken JSON (a 1 MB answer: ~25 s); a longer broken
# text is `unparseable` without trying (docs/report.md). Real reports are a few KB.
REPAIR_MAX_CHARS = 1 << 16


@dataclass(frozen=True, slots=True)
class Finding:
    """One positive finding; probability 3 = stated, 2 = probable, 1 = uncertain, None = missing.
    `size` is an optional measurement ("2 cm"), kept in JSON only when set; S-Score and the
    sentence rendering ignore it (docs/extraction.md)."""

    name: str
    probability: int | None = 3
    level: str | None = None
    location: str | None = None
    size: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "probability": self.probability, "level": self.level, "location": self.location}
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass(frozen=True, slots=True)
class StructuredReport:
    """Positive findings (one per name) and the names of negative findings, in report order."""

    positive: tuple[Finding, ...] = ()
    negative: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"positive": [f.to_dict() for f in self.positive], "negative": list(self.negative)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @property
    def is_empty(self) -> bool:
        return not self.positive and not self.negative


EMPTY = StructuredReport()


def _finding_builder() -> Callable[[str, int | None, str | None, str | None, str | None], Finding]:
    """Finding(name, probability, level, location, size) without the frozen dataclass's __init__,
    which sets each field through object.__setattr__ (~2 us a finding: a tenth of parsing a corpus
    of new findings on the fast path); the builder writes the slots through their descriptors, so
    the object is the same. Unpacking the five slots fails at import if Finding's fields change."""
    new = object.__new__
    set_name, set_probability, set_level, set_location, set_size = (
        getattr(Finding, slot).__set__ for slot in Finding.__slots__
    )

    def build(name: str, probability: int | None, level: str | None, location: str | None, size: str | None) -> Finding:
        finding = new(Finding)
        set_name(finding, name)
        set_probability(finding, probability)
        set_level(finding, level)
        set_location(finding, location)
        set_size(finding, size)
        return finding

    return build


_new_finding = _finding_builder()


@lru_cache(maxsize=1)
def default_synonyms() -> Mapping[str, str]:
    """Surface form -> canonical name from the packaged vocabulary (loaded once)."""
    from srrg.vocab import synonym_map

    return synonym_map()


@lru_cache(maxsize=PHRASE_CACHE_SIZE)
def _default_canonical(name: str) -> str:
    return canonical_name(name, default_synonyms())


def canonical_name(name: str, synonyms: Mapping[str, str] | None = None) -> str:
    """Map a finding name onto the vocabulary's canonical name; unknown names are kept (open vocabulary)."""
    if synonyms is None:
        if len(name) <= PHRASE_CACHE_MAX_CHARS:
            return _default_canonical(name)
        synonyms = default_synonyms()
    key = plain_spelling(name)
    return synonyms.get(key, key)


def _coerce_probability(value: Any) -> tuple[int | None, bool]:
    """Return (probability, exact): exact is False when the value had to be coerced or dropped."""
    if isinstance(value, bool):
        return None, False
    if isinstance(value, int):
        return (value, True) if 1 <= value <= 3 else (None, False)
    if isinstance(value, float) and value.is_integer() and 1 <= value <= 3:
        return int(value), False
    if isinstance(value, str) and value.strip() in {"1", "2", "3"}:
        return int(value.strip()), False
    return None, False


def _coerce_optional_text(value: Any) -> tuple[str | None, bool]:
    if value is None:
        return None, True
    if isinstance(value, str):
        text = plain_spelling(value)
        if text in {"", "null", "none"}:
            return None, False
        return text, text == value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return plain_spelling(str(value)), False
    return None, False


def _coerce_name(value: Any) -> tuple[str | None, bool]:
    if isinstance(value, str) and value.strip():
        name = plain_spelling(value)
        return name, name == value
    return None, False


def _coerce_finding(item: Any) -> tuple[Finding | None, bool]:
    """A positive entry from model output; a bare string becomes a finding of unknown probability."""
    if isinstance(item, str):
        name, _ = _coerce_name(item)
        return (Finding(name, None) if name else None), False
    if not isinstance(item, dict):
        return None, False
    name, exact = _coerce_name(item.get("name"))
    if name is None:
        return None, False
    prob, p_ok = _coerce_probability(item.get("probability"))
    level, l_ok = _coerce_optional_text(item.get("level"))
    loc, c_ok = _coerce_optional_text(item.get("location"))
    size, s_ok = _coerce_optional_text(item.get("size"))
    known = item.keys() <= _FINDING_KEYS
    ok = exact and p_ok and l_ok and c_ok and s_ok and known and "probability" in item
    return Finding(name, prob, level, loc, size), ok


def from_obj(obj: Any) -> tuple[StructuredReport, bool]:
    """Build a report from decoded JSON; the flag says whether it already met the schema exactly."""
    if not isinstance(obj, dict) or not ({"positive", "negative"} & set(obj)):
        raise ValueError("not a structured report object")
    exact = set(obj) == {"positive", "negative"}
    pos_raw, neg_raw = obj.get("positive", []), obj.get("negative", [])
    if not isinstance(pos_raw, list):
        pos_raw, exact = ([pos_raw] if pos_raw else []), False
    if not isinstance(neg_raw, list):
        neg_raw, exact = ([neg_raw] if neg_raw else []), False
    positive = []
    for item in pos_raw:
        finding, ok = _coerce_finding(item)
        exact = exact and ok
        if finding is not None:
            positive.append(finding)
    negative = []
    for item in neg_raw:
        name, ok = _coerce_name(item.get("name") if isinstance(item, dict) else item)
        exact = exact and ok and not isinstance(item, dict)
        if name is not None:
            negative.append(name)
    return StructuredReport(tuple(positive), tuple(negative)), exact


def _is_canonical_name(name: str) -> bool:
    """A finding name as canonicalize() leaves it: plain spelling, the vocabulary's canonical name, at
    most PHRASE_CACHE_MAX_CHARS. Names found canonical are remembered (_CANONICAL_NAMES)."""
    if name in _CANONICAL_NAMES:
        return True
    if type(name) is not str or len(name) > PHRASE_CACHE_MAX_CHARS or not name.strip():
        return False
    if plain_spelling(name) != name or _default_canonical(name) != name:
        return False
    if len(_CANONICAL_NAMES) < CANONICAL_CACHE_SIZE:
        _CANONICAL_NAMES.add(name)
    return True


def _is_canonical_text(text: str) -> bool:
    """A level, location or size as from_obj() leaves it: plain spelling, not a spelled-out null, at
    most PHRASE_CACHE_MAX_CHARS. Texts found canonical are remembered (_CANONICAL_TEXTS)."""
    if text in _CANONICAL_TEXTS:
        return True
    if type(text) is not str or len(text) > PHRASE_CACHE_MAX_CHARS:
        return False
    if text in {"", "null", "none"} or plain_spelling(text) != text:
        return False
    if len(_CANONICAL_TEXTS) < CANONICAL_CACHE_SIZE:
        _CANONICAL_TEXTS.add(text)
    return True


def _canonical_finding(name: str, probability: int, level: Any, location: Any, size: Any) -> Finding | None:
    """The Finding when every field is already canonical (see _canonical_parts), else None."""
    if not _is_canonical_name(name):
        return None
    for text in (level, location, size):
        if text is not None and not _is_canonical_text(text):
            return None
    return _new_finding(name, probability, level, location, size)


def _canonical_negatives(names: tuple[str, ...]) -> frozenset[str] | None:
    """The names as a set when each is a canonical name and none repeats, else None."""
    if not _CANONICAL_NAMES.issuperset(names) and not all(map(_is_canonical_name, names)):
        return None
    unique = frozenset(names)
    return unique if len(unique) == len(names) else None


class _CanonicalFinding(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    """A positive finding with exactly to_dict()'s keys (size optional) and an int probability 1..3;
    frozen, so hashable: the key of _FINDINGS."""

    name: str
    probability: Annotated[int, msgspec.Meta(ge=1, le=3)]
    level: str | None
    location: str | None
    size: str | None = None


class _CanonicalShape(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """Exactly the two lists of a report as to_json() writes it."""

    positive: tuple[_CanonicalFinding, ...]
    negative: tuple[str, ...]


# Strict JSON of that shape in one pass in C. On such texts it reads what simplejson reads (the
# last of repeated keys wins, the same escapes and whitespace); anything else (another shape, a
# float or bool probability, NaN, a byte-order mark) raises and goes to decode_json.
_CANONICAL_DECODER = msgspec.json.Decoder(_CanonicalShape)


# Per-finding and per-negative-list results of the canonical fast path, keyed by the decoded
# values (strings of at most PHRASE_CACHE_MAX_CHARS, an int probability 1..3): corpora repeat
# the same findings and lists; and the strings found to be canonical names and attribute texts.
# Only canonical entries are kept, at most CANONICAL_CACHE_SIZE each.
CANONICAL_CACHE_SIZE = 1 << 16
_FINDINGS: dict[_CanonicalFinding, Finding] = {}
_NEGATIVES: dict[tuple[str, ...], frozenset[str]] = {}
_CANONICAL_NAMES: set[str] = set()
_CANONICAL_TEXTS: set[str] = set()


ReportIndex = tuple[dict[str, Finding], frozenset[str]]  # positives by name, negative names as a set


def index_report(report: StructuredReport) -> ReportIndex:
    """A report's positives by name (in report order) and its negative names as a set: what
    metrics that match names look up (S-Score)."""
    return {f.name: f for f in report.positive}, frozenset(report.negative)


def _canonical_parts(text: str) -> tuple[ReportIndex, tuple[str, ...]] | None:
    """The index (index_report's) and the negative names of a text that is already canonical JSON,
    as the extractor and to_json() write it (exactly the two lists, findings with to_dict()'s keys,
    an int probability 1..3, canonical names once each, plain-spelled or null attributes); None for
    anything else, which the general path (decode_json + from_obj + canonicalize) then reads. Where
    it returns, the report is the one the general path builds, with nothing coerced or changed
    (status valid): the same conditions, the shape checked by the decoder and the values once per
    distinct finding and negative list instead of field by field."""
    try:
        shape = _CANONICAL_DECODER.decode(text)
    except msgspec.MsgspecError:
        return None
    by_name: dict[str, Finding] = {}
    for item in shape.positive:
        finding = _FINDINGS.get(item)
        if finding is None:
            finding = _canonical_finding(item.name, item.probability, item.level, item.location, item.size)
            if finding is None:
                return None
            if len(_FINDINGS) < CANONICAL_CACHE_SIZE:
                _FINDINGS[item] = finding
        by_name[finding.name] = finding
    names = shape.negative
    negatives = _NEGATIVES.get(names)
    if negatives is None:
        negatives = _canonical_negatives(names)
        if negatives is None:
            return None
        if len(_NEGATIVES) < CANONICAL_CACHE_SIZE:
            _NEGATIVES[names] = negatives
    if len(by_name) != len(shape.positive) or not negatives.isdisjoint(by_name):
        return None
    return (by_name, negatives), names


def _canonical_report(text: str) -> StructuredReport | None:
    """The report of canonical JSON (see _canonical_parts), else None."""
    parts = _canonical_parts(text)
    return None if parts is None else StructuredReport(tuple(parts[0][0].values()), parts[1])


def clear_parse_caches() -> None:
    """Empty the parse caches (benchmarks time cold runs)."""
    _parse_default.cache_clear()
    _FINDINGS.clear()
    _NEGATIVES.clear()
    _CANONICAL_NAMES.clear()
    _CANONICAL_TEXTS.clear()


def _certainty(f: Finding) -> tuple[int, int]:
    """Which mention of a finding wins: the most certain; among equally certain ones, the one that
    says more (a level or a location), since sections often repeat a finding without attributes."""
    return (f.probability or 0, (f.level is not None) + (f.location is not None))


def _canonicalize(report: StructuredReport, synonyms: Mapping[str, str] | None) -> tuple[StructuredReport, bool]:
    """canonicalize() plus whether anything changed (parse_report's valid/repaired decision)."""
    best: dict[str, Finding] = {}
    changed = False
    for f in report.positive:
        name = canonical_name(f.name, synonyms)
        current = best.get(name)
        changed = changed or name != f.name or current is not None
        if current is None or _certainty(f) > _certainty(current):
            best[name] = f if name == f.name else Finding(name, f.probability, f.level, f.location, f.size)
    negative: dict[str, None] = {}
    for n in report.negative:
        name = canonical_name(n, synonyms)
        changed = changed or name != n or name in best or name in negative
        if name not in best:
            negative.setdefault(name)
    if not changed:
        return report, False
    return StructuredReport(tuple(best.values()), tuple(negative)), True


def canonicalize(report: StructuredReport, synonyms: Mapping[str, str] | None = None) -> StructuredReport:
    """Canonical names, one entry per finding (most certain, then most detailed mention wins),
    positive wins over negative."""
    return _canonicalize(report, synonyms)[0]


def merge(reports: Iterable[StructuredReport], synonyms: Mapping[str, str] | None = None) -> StructuredReport:
    """Merge the reports of several sections into one (same rules as canonicalize)."""
    positive: list[Finding] = []
    negative: list[str] = []
    for r in reports:
        positive.extend(r.positive)
        negative.extend(r.negative)
    return canonicalize(StructuredReport(tuple(positive), tuple(negative)), synonyms)


def decode_json(text: str) -> tuple[Any, bool]:
    """Strict JSON first (simplejson), then json-repair for texts up to REPAIR_MAX_CHARS; returns
    (object or None, strict). The one lenient JSON reader for model output (structured reports and
    judge answers)."""
    try:
        return simplejson.loads(text), True
    except (ValueError, RecursionError):
        pass
    if len(text) > REPAIR_MAX_CHARS:
        return None, False
    try:
        return json_repair.loads(text), False
    except Exception:  # json-repair is a heuristic parser: any failure means "no JSON here"
        return None, False


def parse_report(text: str | bytes | None, synonyms: Mapping[str, str] | None = None) -> tuple[StructuredReport, str]:
    """Parse model output into a canonical report and a status in {valid, repaired, unparseable}.

    Never raises: anything that is not a structured report gives the empty report, `unparseable`.
    With the packaged vocabulary the result is cached per text (texts up to PARSE_CACHE_MAX_CHARS):
    corpora repeat the same (normal) reports many times, and reports are immutable, so sharing
    them is safe.
    """
    if synonyms is None and isinstance(text, str) and len(text) <= PARSE_CACHE_MAX_CHARS:
        return _parse_default(text)
    return _parse(text, synonyms)


def parse_indexed(texts: Iterable[Any]) -> tuple[list[ReportIndex], list[str]]:
    """parse_report of every text as index_report's index, and the statuses: each distinct text
    parsed and indexed once per call (one shared index object per distinct text). Canonical JSON is
    indexed straight from the decoded findings, without building the report; other texts go through
    parse_report and its cache."""
    texts = list(texts)
    try:
        indexes: dict[Any, ReportIndex] = dict.fromkeys(texts)
    except TypeError:  # an unhashable item (not a text): each item on its own
        parsed = [parse_report(text) for text in texts]
        return [index_report(report) for report, _ in parsed], [status for _, status in parsed]
    statuses: dict[Any, str] = {}  # the texts whose status is not valid
    for text in indexes:
        parts = _canonical_parts(text) if isinstance(text, str) else None
        if parts is not None:
            indexes[text] = parts[0]
            continue
        report, status = parse_report(text)
        indexes[text] = index_report(report)
        if status != VALID:
            statuses[text] = status
    return list(map(indexes.__getitem__, texts)), list(map(statuses.get, texts, repeat(VALID)))


def parse_reports(
    texts: Iterable[Any], synonyms: Mapping[str, str] | None = None
) -> list[tuple[StructuredReport, str]]:
    """parse_report of every text, each distinct text parsed once per call. A corpus with more
    distinct texts than the shared cache holds (PARSE_CACHE_SIZE) bypasses that cache: it would
    only evict its own entries before they are asked for again."""
    texts = list(texts)
    seen: dict[str, tuple[StructuredReport, str]] = {}
    distinct = len({t for t in texts if isinstance(t, str)})
    parse = parse_report if distinct <= PARSE_CACHE_SIZE else _parse
    out = []
    for text in texts:
        if not isinstance(text, str):
            out.append(parse_report(text, synonyms))
            continue
        got = seen.get(text)
        if got is None:
            got = seen[text] = parse(text, synonyms)
        out.append(got)
    return out


@lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_default(text: str) -> tuple[StructuredReport, str]:
    return _parse(text, None)


def _parse(text: str | bytes | None, synonyms: Mapping[str, str] | None) -> tuple[StructuredReport, str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        return EMPTY, UNPARSEABLE
    if synonyms is None:
        fast = _canonical_report(text)
        if fast is not None:
            return fast, VALID
    return _parse_general(text, synonyms)


def _parse_general(text: str, synonyms: Mapping[str, str] | None) -> tuple[StructuredReport, str]:
    """The general path: lenient decoding, from_obj and canonicalize; on canonical JSON the fast
    path (_canonical_parts) gives the same report and status."""
    obj, strict = decode_json(text)
    try:
        report, exact = from_obj(obj)
    except (ValueError, TypeError, AttributeError):
        return EMPTY, UNPARSEABLE
    canon, changed = _canonicalize(report, synonyms)
    return canon, VALID if strict and exact and not changed else REPAIRED


def render_sentences(report: StructuredReport) -> str:
    """The templates of docs/report.md, in report order; a missing probability renders as stated."""
    parts = []
    for f in report.positive:
        words = [_PROB_WORD.get(f.probability or 3, "there is")]
        if f.level:
            words.append(f.level)
        words.append(f.name)
        if f.location:
            words.append(f.location)
        parts.append(" ".join(words) + ".")
    parts.extend(f"no evidence of {n}." for n in report.negative)
    return " ".join(parts)


def looks_structured(text: str | None) -> bool:
    """True when text is meant as a structured report: a JSON object, however broken, or text in
    which parse_report reads one (raw model output in a code fence or after a lead-in), so every
    metric reads the same report that S-Score scored. Free text never parses (docs/report.md)."""
    if not isinstance(text, str):
        return False
    return text.lstrip().startswith("{") or parse_report(text)[1] != UNPARSEABLE


def text_for_nlg(text: str | None) -> str:
    """NLG metrics read sentence renderings of structured reports (empty for a broken one) and
    free text as written."""
    if looks_structured(text):
        return render_sentences(parse_report(text)[0])
    return text if isinstance(text, str) else ""
