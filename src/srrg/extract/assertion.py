"""Assertion of an arbitrary target phrase in a sentence with the extractor's ConText rules.

The extractor asserts the findings of its vocabulary; evaluating the negation detector on clinical
text (docs/extraction.md: the NegEx/ConText test set) needs the same rules for any condition
("cough", "wheezes"). The target becomes a finding item on its tokens and is asserted among the
sentence's trigger items exactly as an extracted finding would be.
"""

from __future__ import annotations

import re

from srrg.extract.context import NEGATIVE, assert_mention
from srrg.extract.mentions import FINDING, Entry, Item

NEGATED, HEDGED, HYPOTHETICAL, AFFIRMED = "negated", "hedged", "hypothetical", "affirmed"


def _target_span(text: str, target: str) -> tuple[int, int] | None:
    """Character span of the target in the text, case- and whitespace-insensitive."""
    words = target.split()
    if not words:
        return None
    match = re.search(r"\s+".join(map(re.escape, words)), text, flags=re.IGNORECASE)
    return match.span() if match else None


def _clip(item: Item, start: int, end: int) -> Item | None:
    """An item outside the target as is; one that overlaps it only if it starts before it (a
    trigger phrase that ran into the target: "no focal" before "focal deficits"), cut at its start."""
    if item.end <= start or item.start >= end:
        return item
    if item.start < start:
        return Item(item.start, start, item.kind, item.entry)
    return None


def assert_target(sentence: str, target: str) -> str | None:
    """negated / hedged / hypothetical / affirmed for `target` inside `sentence` (None when the
    target does not occur in the sentence)."""
    from srrg.extract.pipeline import STATE, get_extractor, prepare_text

    span = _target_span(sentence, target)
    if span is None:
        return None
    doc = get_extractor().nlp(prepare_text(sentence))
    tokens = [t.i for t in doc if t.idx < span[1] and t.idx + len(t) > span[0]]
    if not tokens:
        return None
    start, end = tokens[0], tokens[-1] + 1
    state = doc.user_data[STATE]
    sentence_id = state.sent_of[start]
    group = [_clip(i, start, end) for i in state.items if state.sent_of[i.start] == sentence_id]
    group = [i for i in group if i is not None]
    target_item = Item(start, end, FINDING, Entry(FINDING, target))
    group = sorted([*group, target_item], key=lambda i: (i.start, i.end))
    mention = assert_mention(target_item, group, state.lowers, sentence_id)
    if mention.status == NEGATIVE:
        return NEGATED
    if mention.status != "positive":
        return HYPOTHETICAL
    return HEDGED if mention.probability != 3 else AFFIRMED
