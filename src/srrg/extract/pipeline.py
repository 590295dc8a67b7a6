"""The extraction pipeline: free text -> MIMIC-STRUC structured report with provenance (docs/extraction.md).

spaCy does the text work: a tokenizer (blank English, or a configured installed model) and four
components registered here: `srrg_sentences` (sentence ids; the model's own boundaries when it has
them), `srrg_mentions` (one PhraseMatcher over the whole vocabulary), `srrg_context` (negation /
hedging) and `srrg_linking` (severity and location). Sections are extracted separately and merged
with `srrg.report.merge`, so the "one entry per finding, most certain mention wins, positive wins"
rule lives in one place.
"""

from __future__ import annotations

import importlib.util
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, pairwise
from pathlib import Path
from typing import Any

from srrg.spacy_import import spacy  # first: spaCy imported without torch (docs/extraction.md, "Speed")

# isort: split
from spacy.attrs import IDX, LENGTH, LOWER, SENT_START
from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc
from spacy.util import minibatch

from srrg import vocab
from srrg.extract.context import NEGATIVE, POSITIVE, STATED, Mention, assert_sentence
from srrg.extract.linking import link_sentence, link_sizes
from srrg.extract.mentions import (
    Entry,
    Item,
    drop_descriptive,
    expand_compounds,
    pair_compositions,
    phrase_table,
    resolve_overlaps,
)
from srrg.gc_policy import relaxed_gc
from srrg.report import Finding, StructuredReport, canonicalize, merge
from srrg.settings.extract import NODULAR_READINGS, ExtractConfig
from srrg.text.sections import Section, select_sections, split_sections
from srrg.text.spelling import plain_spelling

OK, EMPTY_TEXT, TRUNCATED, LONG_SENTENCE, ERROR = "ok", "empty_text", "truncated", "long_sentence", "error"
# A sentence is cut into pieces of at most this many tokens (issue 16): the rules compare the
# items of one sentence pairwise, so an endless run-on "sentence" would cost quadratic time. Real
# report sentences stay far below it (IU X-ray: at most 50 tokens); a report with a cut sentence
# gets status `long_sentence` (docs/extraction.md).
MAX_SENTENCE_TOKENS = 128
_BLANK_LINES = re.compile(r"\r?\n[ \t\r]*\n")
SENTENCE_ENDS = frozenset(".!?")
_LINE_BREAK = re.compile(r"[\r\n\t]")
# Section texts repeat verbatim across reports ("No acute cardiopulmonary abnormality."; IU X-ray:
# 4,466 distinct of 7,346). A text's result depends only on the text and the extractor's config,
# so each extractor keeps the results of this many texts (docs/extraction.md, "Speed").
TEXT_CACHE_SIZE = 16_384
# Sentences repeat far more than whole texts (MIMIC-CXR findings are nearly all distinct, their
# sentences mostly are not), and every rule works inside one sentence, so each extractor also keeps
# the results of this many sentences (docs/extraction.md, "Speed").
SENTENCE_CACHE_SIZE = 65_536
# a candidate sentence end: ".", "!" or "?" and one space before a non-space character
_SENTENCE_CUT = re.compile(r"[.!?] (?=\S)")


class _Strings(dict):
    """Token string id -> its text, one str object per id: the rules index the lower-cased tokens
    of every sentence many times, and a plain list of shared strings is the cheapest to read."""

    def __init__(self, strings: Any):
        super().__init__()
        self.strings = strings

    def __missing__(self, key: int) -> str:
        text = self[key] = self.strings[key]
        return text


@dataclass
class DocState:
    """Per-document scratch shared by the rule components."""

    items: list[Item]
    sent_of: list[int]
    lowers: list[str]  # lower-cased token texts
    groups: dict[int, list[Item]] = field(default_factory=dict)  # sentence -> its items, in text order
    mentions: list[Mention] = field(default_factory=list)
    has_units: bool = False  # a measurement unit ("cm") occurs: sizes are looked for
    cut: bool = False  # a sentence longer than MAX_SENTENCE_TOKENS was cut into pieces


@dataclass(frozen=True)
class Extraction:
    """Result for one report: the structured report, provenance records and a status."""

    report: StructuredReport
    provenance: list[dict[str, Any]]
    status: str

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()


STATE = "srrg"  # the DocState's key in Doc.user_data


class BatchComponent(ABC):
    """A rule component that spaCy runs over a whole batch before the next component starts (spaCy
    calls a component's `pipe` when it has one; without it every doc goes through all components
    before the next doc starts). Running one component's code over many docs in a row was 1.3x
    faster than doc by doc on the IU reports (docs/extraction.md, "Speed"); the results are the same."""

    @abstractmethod
    def __call__(self, doc: Doc) -> Doc:
        """The component's work on one doc."""

    def pipe(self, docs: Iterable[Doc], batch_size: int) -> Iterator[Doc]:
        """The docs batch by batch; nlp.pipe passes its batch_size (extract.batch_size)."""
        for batch in minibatch(docs, size=batch_size):
            yield from [self(doc) for doc in batch]


class _EndTokens(dict):
    """Lower-cased token id -> whether the token ends a sentence (".", "?!", ".."), worked out once per id."""

    def __init__(self, strings: Any):
        super().__init__()
        self.strings = strings

    def __missing__(self, key: int) -> bool:
        text = self.strings[key]
        end = self[key] = bool(text) and set(text) <= SENTENCE_ENDS
        return end


class SentenceComponent(BatchComponent):
    """Sentence ids per token: from the model's sentence boundaries when it has a parser, senter or
    sentencizer, else a split after tokens made of ".", "!" and "?" ("..", "?!"); blank lines
    already became "." in prepare_text. Either way no sentence is longer than MAX_SENTENCE_TOKENS."""

    def __init__(self, nlp: Language, use_model: bool):
        self.use_model = use_model
        self.is_end = _EndTokens(nlp.vocab.strings)
        self.texts = _Strings(nlp.vocab.strings)
        self.units = frozenset(nlp.vocab.strings.add(u) for u in vocab.size_words().units)

    def __call__(self, doc: Doc) -> Doc:
        if not len(doc):
            doc.user_data[STATE] = DocState([], [], [])
            return doc
        lower = doc.to_array(LOWER).tolist()
        if self.use_model:
            starts = (doc.to_array([SENT_START]).reshape(-1) == 1).tolist()
        else:
            is_end = self.is_end
            starts = [False, *[is_end[o] for o in lower[:-1]]]
        sent_of, cut = _sentence_ids(starts)
        texts = self.texts
        state = DocState([], sent_of, [texts[o] for o in lower], cut=cut)
        state.has_units = not self.units.isdisjoint(lower)
        doc.user_data[STATE] = state
        return doc


def _sentence_ids(starts: Sequence[bool]) -> tuple[list[int], bool]:
    """Sentence id per token from sentence-start flags (the first token always starts one),
    cutting every sentence into pieces of at most MAX_SENTENCE_TOKENS tokens; the flag says
    whether a sentence was cut."""
    n = len(starts)
    bounds = [0, *compress(range(1, n), starts[1:]), n]
    sent_of: list[int] = []
    k = 0
    for start, end in pairwise(bounds):
        for piece in range(start, end, MAX_SENTENCE_TOKENS):
            sent_of.extend([k] * (min(end, piece + MAX_SENTENCE_TOKENS) - piece))
            k += 1
    return sent_of, k > len(bounds) - 1


class MentionComponent(BatchComponent):
    """Vocabulary phrases -> resolved items (longest match, unmentions, compositions)."""

    def __init__(self, nlp: Language, nodular_opacity: str = NODULAR_READINGS[0], versus_probability: int = STATED):
        table = phrase_table(nodular_opacity, versus_probability)
        self.matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
        self.entries: dict[int, Entry] = {}
        phrases = list(table)
        for phrase, pattern in zip(phrases, nlp.tokenizer.pipe(phrases)):
            key = nlp.vocab.strings.add(phrase)
            self.entries[key] = table[phrase]
            self.matcher.add(phrase, [pattern])
        self.compositions = vocab.compositions()

    def __call__(self, doc: Doc) -> Doc:
        state: DocState = doc.user_data[STATE]
        spans = [(s, e, self.entries[k]) for k, s, e in self.matcher(doc)]
        items = expand_compounds(resolve_overlaps(spans))
        items = pair_compositions(items, state.sent_of, state.lowers, self.compositions)
        state.items = drop_descriptive(items, state.lowers)
        state.groups = _groups(state.items, state.sent_of)
        return doc


def _groups(items: Sequence[Item], sent_of: Sequence[int]) -> dict[int, list[Item]]:
    groups: dict[int, list[Item]] = {}
    for item in items:
        groups.setdefault(sent_of[item.start], []).append(item)
    return groups


class ContextComponent(BatchComponent):
    """Assert every finding item (stated, hedged, negated, ignored) within its sentence."""

    def __call__(self, doc: Doc) -> Doc:
        state: DocState = doc.user_data[STATE]
        for sentence, group in state.groups.items():
            state.mentions.extend(assert_sentence(group, state.lowers, sentence))
        return doc


class LinkingComponent(BatchComponent):
    """Attach severity and location phrases to their own finding."""

    def __init__(self, borderline_probability: int = STATED) -> None:
        words = vocab.location_words()
        self.joiners = words.joiners
        self.links = frozenset(w for phrase in vocab.context_triggers().links for w in phrase.split())
        self.hedged_levels = dict.fromkeys(vocab.hedged_levels(), borderline_probability)
        self.size_words = vocab.size_words()

    def __call__(self, doc: Doc) -> Doc:
        state: DocState = doc.user_data[STATE]
        by_sentence: dict[int, list[Mention]] = {}
        for m in state.mentions:
            by_sentence.setdefault(m.sentence, []).append(m)
        for sentence, group in state.groups.items():
            mentions = by_sentence.get(sentence, [])
            link_sentence(group, mentions, state.lowers, self.joiners, self.links, self.hedged_levels)
            if state.has_units:
                link_sizes(group, mentions, state.lowers, self.size_words)
        return doc


@Language.factory("srrg_sentences", default_config={"use_model": False})
def _make_sentences(nlp: Language, name: str, use_model: bool) -> SentenceComponent:
    return SentenceComponent(nlp, use_model)


@Language.factory(
    "srrg_mentions", default_config={"nodular_opacity": NODULAR_READINGS[0], "versus_probability": STATED}
)
def _make_mentions(nlp: Language, name: str, nodular_opacity: str, versus_probability: int) -> MentionComponent:
    return MentionComponent(nlp, nodular_opacity, versus_probability)


@Language.factory("srrg_context")
def _make_context(nlp: Language, name: str) -> ContextComponent:
    return ContextComponent()


@Language.factory("srrg_linking", default_config={"borderline_probability": STATED})
def _make_linking(nlp: Language, name: str, borderline_probability: int) -> LinkingComponent:
    return LinkingComponent(borderline_probability)


def _is_installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def build_nlp(
    spacy_model: str | None = None,
    borderline_probability: int = STATED,
    nodular_opacity: str = NODULAR_READINGS[0],
    versus_probability: int = STATED,
) -> Language:
    """Blank English + the srrg sentence splitter and rule components; a configured model (an
    installed package name or a pipeline folder) supplies the tokenizer and, when it has a parser,
    senter or sentencizer, the sentence boundaries (its entity/lemma/text components are not loaded).
    The conventions are the ExtractConfig options of the same names."""
    if spacy_model:
        if not Path(spacy_model).is_dir() and not _is_installed(spacy_model):
            raise ValueError(
                f"extract.spacy_model {spacy_model!r} is neither an installed package nor a folder (or set null)"
            )
        nlp = spacy.load(spacy_model, exclude=["ner", "lemmatizer", "textcat", "entity_linker", "attribute_ruler"])
        use_model = any(nlp.has_pipe(p) for p in ("parser", "senter", "sentencizer"))
    else:
        nlp = spacy.blank("en")
        use_model = False
    nlp.add_pipe("srrg_sentences", config={"use_model": use_model})
    nlp.add_pipe("srrg_mentions", config={"nodular_opacity": nodular_opacity, "versus_probability": versus_probability})
    nlp.add_pipe("srrg_context")
    nlp.add_pipe("srrg_linking", config={"borderline_probability": borderline_probability})
    return nlp


def drop_leading_spaces(text: str, offset: int) -> tuple[str, int]:
    """The text without its leading spaces and the offset of what is left: spaCy 3.8 caches no
    token of a doc whose first span is whitespace (a special case), which made tokenizing 6-8x
    slower for section bodies cut after "FINDINGS:"; provenance spans stay exact."""
    body = text.lstrip(" ")
    return body, offset + len(text) - len(body)


def prepare_text(text: str) -> str:
    """Blank lines end a sentence and line breaks are spaces, keeping every character offset."""
    if "\n" not in text and "\r" not in text and "\t" not in text:
        return text
    text = _BLANK_LINES.sub(lambda m: "." + " " * (len(m.group()) - 1), text)
    return _LINE_BREAK.sub(" ", text)


Span = tuple[int, int]  # character offsets [start, end) in the text spaCy saw
# (name, status, probability, level, location, spans of name / trigger / level / locations / size)
MentionRecord = tuple[
    str, str, int | None, str | None, str | None, tuple[Span, Span | None, Span | None, tuple[Span, ...], Span | None]
]


@dataclass(frozen=True, slots=True)
class TextResult:
    """What one section text yields whatever its section and offset: the structured report, one
    record per kept mention, and whether a sentence was cut (docs/extraction.md, "Speed")."""

    report: StructuredReport
    records: tuple[MentionRecord, ...]
    cut: bool

    def provenance(self, section: str, offset: int) -> list[dict[str, Any]]:
        """One provenance record per kept mention, spans moved by the text's offset in its section."""

        return [
            {
                "name": name,
                "section": section,
                "status": status,
                "probability": probability,
                "level": level,
                "location": location,
                "spans": {
                    "name": [n[0] + offset, n[1] + offset],
                    "trigger": None if t is None else [t[0] + offset, t[1] + offset],
                    "level": None if lv is None else [lv[0] + offset, lv[1] + offset],
                    "location": [[a + offset, b + offset] for a, b in locs],
                    "size": None if z is None else [z[0] + offset, z[1] + offset],
                },
            }
            for name, status, probability, level, location, (n, t, lv, locs, z) in self.records
        ]


@dataclass(frozen=True, slots=True)
class SentenceResult:
    """The kept mentions of one processed text (a sentence or a whole text) before they are
    merged into a report: texts made of several sentences join their sentences' parts."""

    positive: tuple[Finding, ...]
    negative: tuple[str, ...]
    records: tuple[MentionRecord, ...]
    cut: bool


def sentence_result(doc: Doc, text: str) -> SentenceResult:
    """The kept mentions of one processed text (`text` is what spaCy got: doc.text, without
    building a Token per token)."""
    state: DocState = doc.user_data[STATE]
    mentions = [m for m in state.mentions if m.status in (POSITIVE, NEGATIVE)]
    if not mentions:
        return SentenceResult((), (), (), state.cut)
    positive: list[Finding] = []
    negative: list[str] = []
    records: list[MentionRecord] = []
    arr = doc.to_array([IDX, LENGTH]).reshape(len(doc), 2).tolist()

    def span(start: int, end: int) -> Span:
        """Character offsets of tokens [start, end)."""
        return arr[start][0], arr[end - 1][0] + arr[end - 1][1]

    for m in mentions:
        stated = m.status == POSITIVE
        level = m.level[0] if m.level and stated else None
        locations = tuple(span(s, e) for s, e in m.locations) if stated else ()
        location = ", ".join(plain_spelling(text[a:b]) for a, b in locations) or None
        size = m.size[0] if m.size and stated else None
        if stated:
            positive.append(Finding(m.name, m.probability, level, location, size))
        else:
            negative.append(m.name)
        spans = (
            span(m.item.start, m.item.end),
            span(m.trigger.start, m.trigger.end) if m.trigger else None,
            span(m.level[1], m.level[2]) if level else None,  # type: ignore[index]
            locations,
            span(m.size[1], m.size[2]) if size else None,  # type: ignore[index]
        )
        records.append((m.name, m.status, m.probability, level, location, spans))
    return SentenceResult(tuple(positive), tuple(negative), tuple(records), state.cut)


def _moved(record: MentionRecord, offset: int) -> MentionRecord:
    """A record with its spans moved by `offset` characters."""
    name, status, probability, level, location, (n, t, lv, locs, z) = record
    spans = (
        (n[0] + offset, n[1] + offset),
        None if t is None else (t[0] + offset, t[1] + offset),
        None if lv is None else (lv[0] + offset, lv[1] + offset),
        tuple((a + offset, b + offset) for a, b in locs),
        None if z is None else (z[0] + offset, z[1] + offset),
    )
    return name, status, probability, level, location, spans


def joined_result(parts: Sequence[tuple[int, SentenceResult]]) -> TextResult:
    """The result of a text from its sentences' results at their offsets, in text order: the same
    as the text's own, since no rule looks past a sentence end (docs/extraction.md, "Speed")."""
    if len(parts) == 1 and parts[0][0] == 0:
        only = parts[0][1]
        positive, negative, records = only.positive, only.negative, only.records
    else:
        positive = tuple(f for _, p in parts for f in p.positive)
        negative = tuple(n for _, p in parts for n in p.negative)
        records = tuple(r if offset == 0 else _moved(r, offset) for offset, p in parts for r in p.records)
    cut = any(p.cut for _, p in parts)
    if not records:
        return TextResult(StructuredReport(), (), cut)
    return TextResult(canonicalize(StructuredReport(positive, negative)), records, cut)


class Extractor:
    """A built pipeline plus the section selection of one config."""

    def __init__(self, config: ExtractConfig | None = None):
        self.config = config or ExtractConfig()
        cfg = self.config
        self.nlp = build_nlp(cfg.spacy_model, cfg.borderline_probability, cfg.nodular_opacity, cfg.versus_probability)
        self._cache: dict[str, TextResult] = {}  # prepared section text -> its result
        self._sentences: dict[str, SentenceResult] = {}  # sentence -> its result (SENTENCE_CACHE_SIZE)
        self._ends: dict[str, bool] = {}  # last word of a candidate sentence -> whether it ends one
        # with a model the sentence boundaries are the model's, seen on the whole text: no sentence cache
        self._by_sentence = not self.nlp.get_pipe("srrg_sentences").use_model

    def _texts(self, sections: Sequence[Section]) -> list[tuple[str, int]]:
        """(text for spaCy, its offset in the section's source text) per section."""
        return [drop_leading_spaces(prepare_text(s.text[: self.config.max_chars]), s.offset) for s in sections]

    @relaxed_gc()
    def run(self, reports: Iterable[Sequence[Section]]) -> list[Extraction]:
        """One Extraction per report (a report = its selected sections); never raises on text."""
        reports = [list(r) for r in reports]
        flat = [(i, s) for i, secs in enumerate(reports) for s in secs if s.text.strip()]
        texts = self._texts([s for _, s in flat])
        results = self._results([t for t, _ in texts])
        parts: list[list[tuple[StructuredReport, list[dict[str, Any]]]]] = [[] for _ in reports]
        failed: set[int] = set()
        truncated = {i for i, s in flat if len(s.text) > self.config.max_chars}
        cut: set[int] = set()
        for (i, sec), (_, offset), result in zip(flat, texts, results):
            if result is None:
                failed.add(i)
            else:
                if result.cut:
                    cut.add(i)
                parts[i].append((result.report, result.provenance(sec.name, offset)))
        out = []
        for i, got in enumerate(parts):
            if i in failed:
                out.append(Extraction(StructuredReport(), [], ERROR))
            elif not got:
                out.append(Extraction(StructuredReport(), [], EMPTY_TEXT))
            else:
                report = got[0][0] if len(got) == 1 else merge(r for r, _ in got)
                status = TRUNCATED if i in truncated else LONG_SENTENCE if i in cut else OK
                out.append(Extraction(report, [p for _, prov in got for p in prov], status))
        return out

    def _results(self, texts: list[str]) -> list[TextResult | None]:
        """The result of every text (None: its pipeline failed), each distinct text worked out once
        and kept in the text cache, which forgets its oldest entries once TEXT_CACHE_SIZE are kept."""
        cache = self._cache
        results = [cache.get(t) for t in texts]
        todo = list(dict.fromkeys(t for t, r in zip(texts, results) if r is None))
        fresh = dict(zip(todo, self._fresh(todo)))
        for text, result in fresh.items():
            if result is not None:
                if len(cache) >= TEXT_CACHE_SIZE:
                    del cache[next(iter(cache))]
                cache[text] = result
        return [fresh[t] if r is None else r for t, r in zip(texts, results)]

    def _fresh(self, texts: list[str]) -> list[TextResult | None]:
        """The results of texts the text cache lacks: each text cut into its sentences
        (split_sentences), each distinct sentence run once and kept in the sentence cache."""
        units = [self.split_sentences(t) for t in texts]
        known = self._sentences
        todo = list(dict.fromkeys(s for parts in units for _, s in parts if s not in known))
        fresh = {s: None if d is None else sentence_result(d, s) for s, d in zip(todo, self._pipe(todo))}
        out: list[TextResult | None] = []
        for parts in units:
            got = [(offset, known.get(s) or fresh[s]) for offset, s in parts]
            out.append(None if any(r is None for _, r in got) else joined_result(got))  # type: ignore[arg-type]
        for sentence, result in fresh.items():
            if result is not None:
                if len(known) >= SENTENCE_CACHE_SIZE:
                    del known[next(iter(known))]
                known[sentence] = result
        return out

    def split_sentences(self, text: str) -> list[tuple[int, str]]:
        """(offset, sentence) of a prepared text, cut only where the pipeline itself ends a sentence
        and spaCy would tokenize both sides alike: at one space after a word whose last token is made
        of ".", "!" and "?" ("effusion.", not "e.g." or "1."). The whole text when sentences come
        from a model."""
        if not self._by_sentence:
            return [(0, text)]
        parts, start = [], 0
        for m in _SENTENCE_CUT.finditer(text):
            space = m.end() - 1
            if self._ends_sentence(text[start:space].rsplit(None, 1)[-1]):
                parts.append((start, text[start:space]))
                start = space + 1
        parts.append((start, text[start:]))
        return parts

    def _ends_sentence(self, word: str) -> bool:
        """Whether a word (no whitespace) ends in a token that ends a sentence; worked out once per word."""
        ends = self._ends.get(word)
        if ends is None:
            tokens = self.nlp.tokenizer(word)
            ends = self._ends[word] = (
                bool(len(tokens)) and bool(tokens[-1].lower_) and set(tokens[-1].lower_) <= SENTENCE_ENDS
            )
        return ends

    def clear_cache(self) -> None:
        """Forget every kept text and sentence result (a benchmark's cold start)."""
        self._cache.clear()
        self._sentences.clear()

    def _pipe(self, texts: list[str]) -> list[Doc | None]:
        """nlp.pipe in batches; a batch that fails is redone text by text so one bad text costs one row."""
        try:
            return list(self.nlp.pipe(texts, batch_size=self.config.batch_size))
        except Exception:  # a rule bug must not take down a whole corpus: isolate the text
            docs: list[Doc | None] = []
            for text in texts:
                try:
                    docs.append(self.nlp(text))
                except Exception:
                    docs.append(None)
            return docs


def _as_text(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) and value.strip() else None


def text_sections(text: Any, wanted: Sequence[str]) -> list[Section]:
    """The wanted sections of one free-text report (see sections.select_sections); bad input -> []."""
    text = _as_text(text)
    return select_sections(split_sections(text), wanted) if text else []


def column_sections(row: Mapping[str, Any], wanted: Sequence[str]) -> list[Section]:
    """Sections from a table row whose columns are named after the sections (findings, impression)."""
    out = []
    for name in wanted:
        value = _as_text(row.get(name))
        if value:
            out.append(Section(name, name.upper(), value, 0))
    return out


def get_extractor(config: ExtractConfig | None = None) -> Extractor:
    """One built pipeline per config and process (building it takes about a second); no config is
    the default config, so both share one extractor and its text cache."""
    return _built(config or ExtractConfig())


@lru_cache(maxsize=4)
def _built(config: ExtractConfig) -> Extractor:
    return Extractor(config)


def _run_chunk(config: ExtractConfig | None, reports: list[list[Section]]) -> list[Extraction]:
    return get_extractor(config).run(reports)


def run_reports(
    reports: Sequence[Sequence[Section]], config: ExtractConfig | None, *, n_process: int
) -> list[Extraction]:
    """Extract many reports in order; n_process > 1 hands contiguous chunks to worker processes (the
    caller decides: a table's chunks already run in config.n_process workers)."""
    reports = [list(r) for r in reports]
    if n_process <= 1 or len(reports) < 2 * n_process:
        return _run_chunk(config, reports)
    size = -(-len(reports) // n_process)
    chunks = [reports[i : i + size] for i in range(0, len(reports), size)]
    with ProcessPoolExecutor(max_workers=n_process) as pool:
        return [e for part in pool.map(_run_chunk, [config] * len(chunks), chunks) for e in part]
