"""Link severity and location words to their own finding inside a sentence.

A modifier between two findings belongs to the earlier one unless a separator or trigger stands
between that finding and the modifier ("mild cardiomegaly and small left effusion": "small left"
follows "and", so it belongs to the effusion); before the first finding it belongs to the first,
after the last to the last. Location words form phrases across joiners ("right upper and middle
lobes"); a phrase of generic words only ("the lungs") is no location. An interpretation with no
location of its own ("left basilar opacity, likely atelectasis") inherits the observation's.
"""

from __future__ import annotations

from typing import AbstractSet, Sequence

from srrg.extract.context import POSITIVE, Mention
from srrg.extract.mentions import CLAUSE_BREAKS, LEVEL, LOCATION, PSEUDO, SEPARATOR, TERMINATION, TRIGGERS, Item

_BOUNDARIES = TRIGGERS | {SEPARATOR, TERMINATION, PSEUDO}
_ALTERNATIVE = frozenset({"or", "/", "versus", "vs", "vs.", "and/or", ",", "either"})
_WEAK_LINKS = frozenset({"with", "of", "to", "be", "for", "in", "is", "are", "which", "that", "this", "or", "and/or"})
_FILLER = frozenset({"a", "an", "the", "this", "these", "which", "that", ",", "-", "(", ")"})


def _breaks(item: Item, lowers: Sequence[str]) -> bool:
    return item.kind == TERMINATION and lowers[item.start] in CLAUSE_BREAKS


def _owner(mod: Item, mentions: Sequence[Mention], group: Sequence[Item], lowers: Sequence[str]) -> Mention | None:
    """The mention a modifier belongs to (see module docstring)."""
    inside = [m for m in mentions if m.item.start <= mod.start and mod.end <= m.item.end]
    if inside:
        return min(inside, key=lambda m: m.item.end - m.item.start)
    before = [m for m in mentions if m.item.end <= mod.start]
    after = [m for m in mentions if m.item.start >= mod.end]
    prev = before[-1] if before else None
    nxt = after[0] if after else None
    # a clause break ("but", ";", "there is") closes the clause: nothing links across it
    if prev is not None and any(_breaks(i, lowers) and prev.item.end <= i.start and i.end <= mod.start for i in group):
        prev = None
    if nxt is not None and any(_breaks(i, lowers) and mod.end <= i.start and i.end <= nxt.item.start for i in group):
        nxt = None
    if prev is None or nxt is None:
        return prev or nxt
    split = any(i.kind in _BOUNDARIES and prev.item.end <= i.start and i.end <= mod.start for i in group)
    return nxt if split else prev


def _distance(mod: Item, mention: Mention) -> int:
    if mod.end <= mention.item.start:
        return mention.item.start - mod.end
    if mod.start >= mention.item.end:
        return mod.start - mention.item.end
    return 0


def location_phrases(locs: Sequence[Item], lowers: Sequence[str], joiners: AbstractSet[str]) -> list[tuple[int, int]]:
    """Group location items joined by joiner words; keep groups with at least one specific word."""
    groups: list[list[Item]] = []
    for item in sorted(locs, key=lambda i: i.start):
        if groups and all(lowers[t] in joiners for t in range(groups[-1][-1].end, item.start)):
            groups[-1].append(item)
        else:
            groups.append([item])
    return [(g[0].start, g[-1].end) for g in groups if any(i.entry.specific for i in g)]


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


def _inherit(mentions: Sequence[Mention], lowers: Sequence[str], links: AbstractSet[str]) -> None:
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


def link_sentence(
    group: Sequence[Item],
    mentions: Sequence[Mention],
    lowers: Sequence[str],
    joiners: AbstractSet[str],
    links: AbstractSet[str],
) -> None:
    """Fill `level` and `locations` of the sentence's mentions in place."""
    if not mentions:
        return
    levels: dict[int, list[Item]] = {}
    locs: dict[int, list[Item]] = {}
    for mod in group:
        if mod.kind not in (LEVEL, LOCATION):
            continue
        owner = _owner(mod, mentions, group, lowers)
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
    _share_alternatives(mentions, lowers)
    _inherit(mentions, lowers, links)
