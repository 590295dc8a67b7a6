"""Vocabulary phrases -> typed items on a token sequence: findings, triggers, severity, locations.

All word lists are matched in one spaCy PhraseMatcher pass (lower-cased tokens); overlapping
matches are resolved longest-first, which is how "calcified granuloma" beats "calcified",
"cannot be excluded" beats "not" and an unmention ("mass effect") hides the finding inside it.
Normal statements ("heart size is normal") and compositions ("the heart is enlarged") are then
paired into finding items; a compound form ("fibronodular") becomes one item per finding it reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from srrg import vocab
from srrg.settings.extract import NODULAR_READINGS

# item kinds
FINDING, SUBJECT, STATE, LEVEL, LOCATION = "finding", "subject", "state", "level", "location"
NEGATION, HEDGE, IGNORE = "negation", "hedge", "ignore"
PSEUDO, TERMINATION, SEPARATOR, UNMENTION = "pseudo", "termination", "separator", "unmention"
CLOSING = "closing"  # ends a trigger's scope once a finding stands between them ("no effusion seen, ...")
VERDICT = "verdict"  # a normal verdict ("normal", "clear") that is no trigger of its own
TRIGGERS = frozenset({NEGATION, HEDGE, IGNORE})
# tokens that may sit between a descriptive adjective and its finding besides levels and locations
_NOUN_PHRASE_FILLER = frozenset({"mm", "cm", "-", "sub", "centimeter", "millimeter", "small", "tiny"})

# a composition pairs subject and state at most this many tokens apart, with none of these between
MAX_PAIR_GAP = 6
_PAIR_BLOCKERS = frozenset({"normal", "unremarkable", "clear"})
# terminations that open a new clause (verbs like "remains" may sit between subject and state)
CLAUSE_BREAKS = frozenset(
    {"but", "however", ";", ":", "although", "though", "whereas", "which", "while", "yet", "except", "there"}
)


@dataclass(frozen=True, slots=True)
class Entry:
    """What a phrase means. `value`: finding name, level, probability or composition indices."""

    kind: str
    value: object = None
    pre: bool = False
    post: bool = False
    location: bool = False
    specific: bool = False
    level: str | None = None
    standalone: bool = False
    negatable: bool = False  # a hedge that an earlier negation cancels ("no opacity to suggest ...")
    descriptive: bool = False  # a finding form that only describes a following finding ("calcified")
    verdict: bool = False  # a normal verdict: with a subject it rules findings out ("heart size is normal")
    rules_out: frozenset[str] = frozenset()  # findings this subject's normal verdict rules out
    normal: bool = False  # a finding item made of subject + verdict: stated, it is a negative
    alternative: bool = False  # a "versus" hedge: another trigger that reaches the finding wins over it


@dataclass(slots=True)
class Item:
    """A matched phrase on tokens [start, end). Findings made from compositions span subject..state
    and keep the later part's start as `anchor` (negation must come before the anchor)."""

    start: int
    end: int
    kind: str
    entry: Entry
    anchor: int = -1
    level: tuple[str, int, int] | None = None  # level carried by a composition state

    def __post_init__(self) -> None:
        if self.anchor < 0:
            self.anchor = self.start


class VocabularyConflict(ValueError):
    """One phrase was given two incompatible roles in the vocabulary files."""


def _add(table: dict[str, Entry], phrase: str, entry: Entry) -> None:
    current = table.get(phrase)
    if current is None:
        table[phrase] = entry
        return
    if current.kind == entry.kind and current.kind in (SUBJECT, STATE):
        merged = frozenset(current.value) | frozenset(entry.value)  # type: ignore[arg-type]
        table[phrase] = Entry(current.kind, merged, standalone=current.standalone or entry.standalone)
        return
    if current.kind == entry.kind and current.kind in TRIGGERS and current.value == entry.value:
        table[phrase] = Entry(
            current.kind,
            current.value,
            current.pre or entry.pre,
            current.post or entry.post,
            negatable=current.negatable or entry.negatable,
        )
        return
    raise VocabularyConflict(
        f"phrase {phrase!r} is both {current.kind} ({current.value}) and {entry.kind} ({entry.value})"
    )


@lru_cache(maxsize=4)
def phrase_table(nodular_opacity: str, versus_probability: int) -> Mapping[str, Entry]:
    """Every vocabulary phrase -> its meaning; raises VocabularyConflict on an ambiguous phrase.
    The conventions (docs/extraction.md, "Conventions"): `nodular_opacity` is the finding the
    nodular-opacity forms report (`lung opacity` or `nodule`), `versus_probability` the
    probability of the findings a "versus" alternative names (1 to 3); their defaults are the
    ExtractConfig fields of the same names."""
    if nodular_opacity not in NODULAR_READINGS:
        raise ValueError(f"nodular_opacity {nodular_opacity!r} is not one of {', '.join(NODULAR_READINGS)}")
    table: dict[str, Entry] = {}
    descriptive = vocab.descriptive()
    nodular = vocab.nodular_opacity_forms()
    for name, forms in vocab.findings().items():
        for form in forms:
            reading = nodular_opacity if form in nodular else name
            _add(table, form, Entry(FINDING, reading, descriptive=form in descriptive))
    for form, names in vocab.compounds().items():
        _add(table, form, Entry(FINDING, names))
    for idx, comp in enumerate(vocab.compositions()):
        for subject in comp.subjects:
            _add(table, subject, Entry(SUBJECT, frozenset({idx})))
        for state in comp.states:
            _add(table, state, Entry(STATE, frozenset({idx}), standalone=comp.standalone))
    for phrase in vocab.unmentions():
        _add(table, phrase, Entry(UNMENTION))
    ctx = vocab.context_triggers()
    for phrases, kind, pre in (
        (ctx.negation_pre, NEGATION, True),
        (ctx.negation_post, NEGATION, False),
        (ctx.ignore_pre, IGNORE, True),
        (ctx.ignore_post, IGNORE, False),
    ):
        for phrase in phrases:
            _add(table, phrase, Entry(kind, None, pre=pre, post=not pre))
    for hedges, pre in ((ctx.hedge_pre, True), (ctx.hedge_post, False)):
        for phrase, prob in hedges.items():
            _add(table, phrase, Entry(HEDGE, prob, pre=pre, post=not pre, negatable=phrase in ctx.negated_hedges))
    for phrase in ctx.alternatives:
        _add(table, phrase, Entry(HEDGE, versus_probability, pre=True, post=True, alternative=True))
    unknown = ctx.negated_hedges - set(ctx.hedge_pre)
    if unknown:
        raise VocabularyConflict(f"negated_hedges must be pre hedges: {sorted(unknown)}")
    for phrase in ctx.pseudo:
        _add(table, phrase, Entry(PSEUDO))
    for phrase in ctx.termination:
        _add(table, phrase, Entry(TERMINATION))
    for phrase in ctx.closing:
        _add(table, phrase, Entry(CLOSING))
    for phrase in ctx.separators:
        _add(table, phrase, Entry(SEPARATOR))
    for phrase, level in vocab.severity_map().items():
        current = table.get(phrase)
        if current is not None and current.kind == STATE:
            table[phrase] = Entry(STATE, current.value, level=level, standalone=current.standalone)
        else:
            _add(table, phrase, Entry(LEVEL, level))
    words = vocab.location_words()
    for phrases, specific in ((words.specific, True), (words.generic, False)):
        for phrase in phrases:
            current = table.get(phrase)
            if current is not None and current.kind == SUBJECT:
                table[phrase] = Entry(SUBJECT, current.value, location=True, specific=specific)
            elif current is None or current.kind != LOCATION:
                _add(table, phrase, Entry(LOCATION, None, location=True, specific=specific))
    normals = vocab.normals()
    for phrase in normals.verdicts:
        current = table.get(phrase)
        table[phrase] = replace(current, verdict=True) if current is not None else Entry(VERDICT, verdict=True)
    for phrase, ruled in normals.subjects.items():
        current = table.get(phrase) or Entry(LOCATION, None, location=True)
        table[phrase] = replace(current, rules_out=ruled)
    return table


def expand_compounds(items: list[Item]) -> list[Item]:
    """A compound form ("fibronodular") becomes one finding item per finding, on the same tokens."""
    if not any(i.kind == FINDING and isinstance(i.entry.value, tuple) for i in items):
        return items
    out: list[Item] = []
    for item in items:
        if item.kind == FINDING and isinstance(item.entry.value, tuple):
            out.extend(Item(item.start, item.end, FINDING, Entry(FINDING, name)) for name in item.entry.value)
        else:
            out.append(item)
    return out


def resolve_overlaps(spans: Iterable[tuple[int, int, Entry]]) -> list[Item]:
    """Keep the longest of overlapping matches (earlier first on ties), in text order. Only spans
    that overlap each other compete, so the work is done per cluster of overlapping spans."""
    ordered = sorted(spans, key=lambda s: (s[0], s[0] - s[1]))
    kept: list[Item] = []
    k, n = 0, len(ordered)
    while k < n:
        end, m = ordered[k][1], k + 1
        while m < n and ordered[m][0] < end:
            end = max(end, ordered[m][1])
            m += 1
        if m == k + 1 or ordered[k][1] == end:  # alone, or the first span covers its whole cluster
            s, e, entry = ordered[k]
            if entry.kind != UNMENTION:
                kept.append(Item(s, e, entry.kind, entry))
        else:
            kept.extend(_longest_first(ordered[k:m]))
        k = m
    return kept


def _longest_first(cluster: Sequence[tuple[int, int, Entry]]) -> list[Item]:
    taken: set[int] = set()
    chosen = []
    for start, end, entry in sorted(cluster, key=lambda s: (s[0] - s[1], s[0])):
        if taken.isdisjoint(range(start, end)):
            taken.update(range(start, end))
            chosen.append((start, end, entry))
    chosen.sort(key=lambda s: s[0])
    return [Item(s, e, entry.kind, entry) for s, e, entry in chosen if entry.kind != UNMENTION]


def _pairable(items: Sequence[Item], lo: int, hi: int, lowers: Sequence[str]) -> bool:
    """Subject and state at items lo < hi may pair: close, same clause (no comma or clause break),
    no other finding or state and no verdict ("normal") between them."""
    a, b = items[lo].end, items[hi].start
    if b - a > MAX_PAIR_GAP:
        return False
    for k in range(lo + 1, hi):
        between = items[k]
        if between.kind in (FINDING, STATE) or (between.kind == TERMINATION and lowers[between.start] in CLAUSE_BREAKS):
            return False
        if between.kind == SEPARATOR and lowers[between.start] == ",":
            return False
    return not any(lowers[t] in _PAIR_BLOCKERS for t in range(a, b))


def _coordinated(items: Sequence[Item], lo: int, hi: int, lowers: Sequence[str]) -> bool:
    """Only subjects joined by "and" stand between: "the heart and mediastinum are enlarged"."""
    return all(
        items[k].kind == SUBJECT or (items[k].kind == SEPARATOR and lowers[items[k].start] == "and")
        for k in range(lo + 1, hi)
    )


def _composed(subject: Item, state: Item, compositions: Sequence[vocab.Composition]) -> Item:
    idx = min(subject.entry.value & state.entry.value)  # type: ignore[operator]
    start, end = min(subject.start, state.start), max(subject.end, state.end)
    finding = Item(
        start, end, FINDING, Entry(FINDING, compositions[idx].finding), anchor=max(subject.start, state.start)
    )
    if state.entry.level:
        finding.level = (state.entry.level, state.start, state.end)
    return finding


def _fits(subject: Item, state: Item) -> bool:
    """A subject and a state of one composition, or a normal subject and a verdict."""
    if state.entry.verdict:
        return bool(subject.entry.rules_out)
    return subject.kind == SUBJECT and state.kind == STATE and bool(subject.entry.value & state.entry.value)  # type: ignore[operator]


def _candidates(
    items: Sequence[Item], sent_of: Sequence[int], lowers: Sequence[str]
) -> list[tuple[int, bool, int, int]]:
    """(gap, state first, subject, state) for every pairable subject and state (or verdict) of one
    sentence, looked up per sentence so that a long document stays linear."""
    states: dict[int, list[int]] = {}
    for j, item in enumerate(items):
        if item.kind == STATE or item.entry.verdict:
            states.setdefault(sent_of[item.start], []).append(j)
    out = []
    for i, subject in enumerate(items):
        if subject.kind != SUBJECT and not subject.entry.rules_out:
            continue
        for j in states.get(sent_of[subject.start], ()):
            lo, hi = min(i, j), max(i, j)
            if _fits(subject, items[j]) and _pairable(items, lo, hi, lowers):
                out.append((items[hi].start - items[lo].end, j < i, i, j))
    return out


def _normal_items(subject: Item, verdict: Item) -> list[Item]:
    """One `normal` finding item per finding a subject's normal verdict rules out."""
    start, end = min(subject.start, verdict.start), max(subject.end, verdict.end)
    anchor = max(subject.start, verdict.start)
    return [
        Item(start, end, FINDING, Entry(FINDING, name, normal=True), anchor=anchor)
        for name in sorted(subject.entry.rules_out)
    ]


def pair_compositions(
    items: list[Item], sent_of: Sequence[int], lowers: Sequence[str], compositions: Sequence[vocab.Composition]
) -> list[Item]:
    """Turn subject + state pairs into finding items ("the heart is enlarged") and subject + normal
    verdict pairs into `normal` items ("heart size is normal", "normal heart size"), closest pairs
    first, so a subject with a state of its own is no normal statement, and one state per subject
    (shared only by subjects joined with "and"). Leftover subjects that are anatomical words
    become locations, leftover standalone states become findings, leftover verdicts that are
    triggers ("within normal limits") stay, other leftovers go."""
    candidates = _candidates(items, sent_of, lowers)
    if not candidates and not any(item.kind in (SUBJECT, STATE) for item in items):
        return items
    pairs: dict[int, int] = {}  # subject -> state
    for _, _, i, j in sorted(candidates):
        if i not in pairs and j not in pairs.values():
            pairs[i] = j
    for _, _, i, j in sorted(candidates):
        if i not in pairs and j in pairs.values() and _coordinated(items, min(i, j), max(i, j), lowers):
            pairs[i] = j
    used = set(pairs.values())
    keep: list[Item] = []
    for i, j in pairs.items():
        if items[j].entry.verdict:
            keep.extend(_normal_items(items[i], items[j]))
        else:
            keep.append(_composed(items[i], items[j], compositions))
    for j, item in enumerate(items):
        if item.kind == SUBJECT:
            if j not in pairs and item.entry.location:
                keep.append(Item(item.start, item.end, LOCATION, item.entry))
        elif item.kind == STATE:
            if j in used:
                continue
            standalone = [k for k in sorted(item.entry.value) if compositions[k].standalone]  # type: ignore[arg-type]
            if standalone:
                keep.append(Item(item.start, item.end, FINDING, Entry(FINDING, compositions[standalone[0]].finding)))
            elif item.entry.level:
                keep.append(Item(item.start, item.end, LEVEL, Entry(LEVEL, item.entry.level)))
        elif item.kind == VERDICT or (j in pairs and item.entry.rules_out):
            continue
        else:
            keep.append(item)
    keep.sort(key=lambda x: (x.start, x.end))
    return keep


def drop_descriptive(items: list[Item], lowers: Sequence[str]) -> list[Item]:
    """Remove descriptive findings ("calcified") that directly describe the next finding: only
    levels, locations, numbers and units may stand between them."""
    out: list[Item] = []
    for k, item in enumerate(items):
        if item.kind == FINDING and item.entry.descriptive and _describes_next(items, k, lowers):
            continue
        out.append(item)
    return out


def _describes_next(items: Sequence[Item], k: int, lowers: Sequence[str]) -> bool:
    pos = items[k].end
    for item in items[k + 1 :]:
        gap = range(pos, item.start)
        if any(not (lowers[t] in _NOUN_PHRASE_FILLER or lowers[t].replace(".", "", 1).isdigit()) for t in gap):
            return False
        if item.kind == FINDING:
            return True
        if item.kind not in (LEVEL, LOCATION):
            return False
        pos = item.end
    return False
