"""Link severity and location words to their own finding inside a sentence.

A modifier between two findings belongs to the earlier one unless a separator or trigger stands
between that finding and the modifier ("mild cardiomegaly and small left effusion": "small left"
follows "and", so it belongs to the effusion); before the first finding it belongs to the first,
after the last to the last. Location words form phrases across joiners ("right upper and middle
lobes"); a phrase of generic words only ("the lungs") is no location. An interpretation with no
location of its own ("left basilar opacity, likely atelectasis") inherits the observation's.
A measurement ("2 cm", "1.2 x 0.8 cm") is the size of the finding it directly precedes (only
levels and locations between) or follows through words like "measuring". A stated finding with a
hedged level ("borderline heart size") becomes uncertain.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set

from srrg import vocab
from srrg.extract.context import POSITIVE, STATED, Mention
from srrg.extract.mentions import CLAUSE_BREAKS, LEVEL, LOCATION, PSEUDO, SEPARATOR, TERMINATION, TRIGGERS, Item

_BOUNDARIES = TRIGGERS | {SEPARATOR, TERMINATION, PSEUDO}
_ALTERNATIVE = frozenset({"or", "/", "versus", "vs", "vs.", "and/or", ",", "either"})
_WEAK_LINKS = frozenset({"with", "of", "to", "be", "for", "in", "is", "are", "which", "that", "this", "or", "and/or"})
_FILLER = frozenset({"a", "an", "the", "this", "these", "which", "that", ",", "-", "(", ")"})


def _breaks(item: Item, lowers: Sequence[str]) -> bool:
    return item.kind == TERMINATION and lowers[item.start] in CLAUSE_BREAKS


def _owner(
    mod: Item, mentions: Sequence[Mention], breaks: Sequence[Item], boundaries: Sequence[Item]
) -> Mention | None:
    """The mention a modifier belongs to (see module docstring), given the sentence's clause
    breaks and boundary items."""
    inside = [m for m in mentions if m.item.start <= mod.start and mod.end <= m.item.end]
    if inside:
        return min(inside, key=lambda m: m.item.end - m.item.start)
    before = [m for m in mentions if m.item.end <= mod.start]
    after = [m for m in mentions if m.item.start >= mod.end]
    prev = before[-1] if before else None
    nxt = after[0] if after else None
    # a clause break ("but", ";", "there is") closes the clause: nothing links across it
    if prev is not None and any(prev.item.end <= i.start and i.end <= mod.start for i in breaks):
        prev = None
    if nxt is not None and any(mod.end <= i.start and i.end <= nxt.item.start for i in breaks):
        nxt = None
    if prev is None or nxt is None:
        return prev or nxt
    split = any(prev.item.end <= i.start and i.end <= mod.start for i in boundaries)
    return nxt if split else prev


def _distance(mod: Item, mention: Mention) -> int:
    if mod.end <= mention.item.start:
        return mention.item.start - mod.end
    if mod.start >= mention.item.end:
        return mod.start - mention.item.end
    return 0


def location_phrases(locs: Sequence[Item], lowers: Sequence[str], joiners: Set[str]) -> list[tuple[int, int]]:
    """Group location items joined by joiner words; keep groups with at least one specific word."""
    groups: list[list[Item]] = []
    for item in sorted(locs, key=lambda i: i.start):
        if groups and all(lowers[t] in joiners for t in range(groups[-1][-1].end, item.start)):
            groups[-1].append(item)
        else:
            groups.append([item])
    return [(g[0].start, g[-1].end) for g in groups if any(i.entry.specific for i in g)]


def _share_span(mentions: Sequence[Mention]) -> None:
    """Findings of one compound word ("fibronodular") share the attributes either of them got."""
    first: dict[tuple[int, int], Mention] = {}
    for m in mentions:
        other = first.setdefault((m.item.start, m.item.end), m)
        if other is not m:
            other.level = other.level or m.level
            other.locations = other.locations or m.locations
    for m in mentions:
        other = first[(m.item.start, m.item.end)]
        m.level, m.locations = other.level, list(other.locations)


def _share_alternatives(mentions: Sequence[Mention], lowers: Sequence[str]) -> None:
    """Findings offered as alternatives for one observation ("atelectasis or scarring in the left
    base", "atelectasis/airspace disease") share a location that only one of them carries."""
    positives = [m for m in mentions if m.status == POSITIVE]
    chains: list[list[Mention]] = []
    for prev, cur in zip(positives, positives[1:]):
        words = [lowers[t] for t in range(prev.item.end, cur.item.start)]
        if words and all(w in _ALTERNATIVE for w in words) and any(w != "," for w in words):
            if chains and chains[-1][-1] is prev:
                chains[-1].append(cur)
            else:
                chains.append([prev, cur])
    for chain in chains:
        located = [m.locations for m in chain if m.locations]
        if len(located) == 1:
            for m in chain:
                m.locations = m.locations or list(located[0])


def _inherit(mentions: Sequence[Mention], lowers: Sequence[str], links: Set[str]) -> None:
    """Copy the observation's location onto an interpretation joined to it only by link words
    ("opacity, likely reflecting atelectasis"), not by bare prepositions ("effusion with atelectasis")."""
    positives = [m for m in mentions if m.status == POSITIVE]
    for prev, cur in zip(positives, positives[1:]):
        if cur.locations or not prev.locations or cur.item.start < prev.item.end:
            continue
        own = set(range(cur.level[1], cur.level[2])) if cur.level else set()
        words = [lowers[t] for t in range(prev.item.end, cur.item.start) if t not in own and lowers[t] not in _FILLER]
        if words and all(w in links for w in words) and not set(words) <= _WEAK_LINKS:
            cur.locations = list(prev.locations)


_NUMBER = re.compile(r"^\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)*$")
_SIZE_SPAN = 12  # at most this many tokens between a finding and its measurement


def _number_back(lowers: Sequence[str], end: int, by: Set[str]) -> int:
    """Start of the number chain ("1.2", "2 x 3") that ends just before token `end` (-1: none)."""
    k = end - 1
    if k < 0 or not _NUMBER.match(lowers[k]):
        return -1
    while k >= 2 and lowers[k - 1] in by and _NUMBER.match(lowers[k - 2]):
        k -= 2
    return k


def _size_before(
    m: Mention, attached: Set[int], lowers: Sequence[str], units: Set[str], by: Set[str]
) -> tuple[int, int] | None:
    """A measurement right before the finding: "2 cm right apical pneumothorax"."""
    k = m.item.start - 1
    while k >= 0 and m.item.start - k <= _SIZE_SPAN and (k in attached or lowers[k] in ("a", "an", "-")):
        k -= 1
    if k < 0 or lowers[k] not in units:
        return None
    unit_end = k + 1
    if k >= 1 and lowers[k - 1] == "-":
        k -= 1
    start = _number_back(lowers, k, by)
    return (start, unit_end) if start >= 0 else None


def _size_after(
    m: Mention,
    end_limit: int,
    lowers: Sequence[str],
    units: Set[str],
    by: Set[str],
    between: Set[str],
) -> tuple[int, int] | None:
    """A measurement after the finding through "measuring", "(": "nodule measuring 1.2 cm"."""
    k = m.item.end
    if k >= end_limit or lowers[k] not in between:
        return None
    while k < end_limit and k - m.item.end < _SIZE_SPAN and lowers[k] in between:
        k += 1
    start = k
    while k < end_limit and (_NUMBER.match(lowers[k]) or lowers[k] in by):
        k += 1
    if k == start or k >= end_limit or lowers[k] not in units:
        return None
    return start, k + 1


def link_sizes(
    group: Sequence[Item], mentions: Sequence[Mention], lowers: Sequence[str], words: vocab.SizeWords
) -> None:
    """Fill `size` of the sentence's positive mentions (see module docstring)."""
    attached = {t for item in group if item.kind in (LEVEL, LOCATION) for t in range(item.start, item.end)}
    between = frozenset(w for phrase in words.between for w in phrase.split())
    end_limit = len(lowers)  # the loops stop at the first word that is no part of a measurement
    for m in mentions:
        if m.status != POSITIVE:
            continue
        found = _size_before(m, attached, lowers, words.units, words.by) or _size_after(
            m, end_limit, lowers, words.units, words.by, between
        )
        if found:
            start, end = found
            m.size = (" ".join(lowers[t] for t in range(start, end) if lowers[t] != "-"), start, end)


def link_sentence(
    group: Sequence[Item],
    mentions: Sequence[Mention],
    lowers: Sequence[str],
    joiners: Set[str],
    links: Set[str],
    hedged_levels: Mapping[str, int] | None = None,
) -> None:
    """Fill `level` and `locations` of the sentence's mentions in place; a stated finding with a
    hedged level gets that level's probability."""
    if not mentions:
        return
    levels: dict[int, list[Item]] = {}
    locs: dict[int, list[Item]] = {}
    mods = [i for i in group if i.kind in (LEVEL, LOCATION)]
    breaks = [i for i in group if _breaks(i, lowers)] if mods else []
    boundaries = [i for i in group if i.kind in _BOUNDARIES] if mods else []
    for mod in mods:
        owner = _owner(mod, mentions, breaks, boundaries)
        if owner is not None:
            (levels if mod.kind == LEVEL else locs).setdefault(id(owner), []).append(mod)
    for m in mentions:
        own_levels = levels.get(id(m))
        if own_levels:
            best = min(own_levels, key=lambda i: _distance(i, m))
            m.level = (str(best.entry.value), best.start, best.end)
        elif m.item.level:
            m.level = m.item.level
        m.locations = location_phrases(locs.get(id(m), []), lowers, joiners)
        if hedged_levels and m.level and m.status == POSITIVE and m.probability == STATED:
            m.probability = hedged_levels.get(m.level[0], STATED)
    if len(mentions) > 1:  # what mentions share or inherit from each other
        _share_span(mentions)
        _share_alternatives(mentions, lowers)
        _inherit(mentions, lowers, links)
