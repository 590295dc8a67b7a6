"""ConText-style assertion of finding mentions: negated, hedged (probability 1/2), ignored, or stated.

A pre-trigger ("no", "possible") reaches forward, a post-trigger ("is not seen", "cannot be
excluded") backward, each until the sentence ends or a termination ("but", "there is"), a
pre-trigger also not past a closing word after a finding ("no effusion seen, calcified nodes"); a
post-trigger's reach also stops at a comma or "with", so "Atelectasis, pneumonia unlikely" keeps the
atelectasis. An "and" whose conjunct on the mention's side is a clause of its own (a finding with
its own predicate: "effusion resolved and atelectasis persists", "the heart is enlarged and effusion
has resolved") ends a reach across it, while a list under one trigger ("no effusion or
pneumothorax", "no effusion and pneumothorax are seen") stays one scope. When several triggers
reach a mention the nearest wins (ties: the pre-trigger), with one exception: a hypothetical
context ("to evaluate for", "if there is") that reaches the mention in the same comma-free clause
wins over any nearer trigger, because nothing inside a recommendation or a condition is a finding
of this study ("follow-up to evaluate for resolution of the pneumonia"). A hedge that a negation
cancels ("no opacity to suggest pneumonia") is cancelled only by a negation of its own clause.
Double negations and pseudo-negations need no rule here: the longer phrase already won in
matching. docs/extraction.md has the full rule set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from srrg import vocab
from srrg.extract.mentions import (
    CLAUSE_BREAKS,
    CLOSING,
    FINDING,
    HEDGE,
    IGNORE,
    NEGATION,
    SEPARATOR,
    TERMINATION,
    TRIGGERS,
    Item,
)

_POST_STOPS = frozenset({",", "with"})  # separators a post-trigger does not reach back across

# Predicates that make a conjunct after or before "and" a clause of its own (docs/extraction.md,
# "Clauses joined by and"): a copula anywhere in it ("the heart is enlarged", "there is atelectasis"),
# or after its finding a verb or change word of its own ("atelectasis persists", "effusion unchanged"),
# after an "and" a change word before its finding ("and stable cardiomegaly"), or a visibility word
# ("pneumothorax is seen"), which a list under one negation may share unless the conjunct names its
# own subject with a determiner ("and the nodule is again seen").
_DETERMINERS = frozenset({"the", "a", "an", "this", "these", "that", "those", "its", "their"})
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "has", "have", "had"})
_STATE_WORDS = frozenset(
    {
        "remains",
        "remain",
        "remained",
        "persists",
        "persist",
        "persisted",
        "appears",
        "appear",
        "appeared",
        "seems",
        "seem",
        "measures",
        "measure",
        "measured",
        "continues",
        "continue",
        "continued",
        "unchanged",
        "stable",
        "improved",
        "improving",
        "increased",
        "increasing",
        "decreased",
        "decreasing",
        "worsened",
        "worsening",
        "progressed",
        "developed",
        "smaller",
        "larger",
    }
)
_CLAUSE_ENDS = frozenset({",", ";", ":"}) | (CLAUSE_BREAKS - {"there"})  # "there is" opens a clause, ends none
STATED_PREDICATE, VISIBLE_PREDICATE = "stated", "visible"
# a predicate sits within a few words of its finding ("and the previously described 1 cm nodule in
# the right upper lobe is again seen": 14 tokens); the cap keeps a run-on text without any
# punctuation linear
_MAX_CONJUNCT = 32

POSITIVE, NEGATIVE, IGNORED = "positive", "negative", "ignored"
STATED = 3


@dataclass(slots=True)
class Mention:
    """One finding mention with its assertion and (after linking) its attributes, in token spans."""

    item: Item
    name: str
    sentence: int
    status: str = POSITIVE
    probability: int | None = STATED
    trigger: Item | None = None
    level: tuple[str, int, int] | None = None  # (level, token start, token end)
    size: tuple[str, int, int] | None = None  # (measurement, token start, token end)
    locations: list[tuple[int, int]] = field(default_factory=list)


def _ends_clause(word: str) -> bool:
    """A comma, a clause break ("but", ";") or a sentence end ("." or a blank line)."""
    return word in _CLAUSE_ENDS or not word.strip() or set(word) <= {".", "!", "?"}


def _clause_span(lowers: Sequence[str], conjunction: Item, forward: bool) -> tuple[int, int]:
    """Token span of the conjunct after (forward) or before a conjunction, up to a clause end or
    _MAX_CONJUNCT tokens."""
    if forward:
        end, stop = conjunction.end, min(len(lowers), conjunction.end + _MAX_CONJUNCT)
        while end < stop and not _ends_clause(lowers[end]):
            end += 1
        return conjunction.end, end
    start, stop = conjunction.start, max(0, conjunction.start - _MAX_CONJUNCT)
    while start > stop and not _ends_clause(lowers[start - 1]):
        start -= 1
    return start, conjunction.start


@lru_cache(maxsize=1)
def _visibility_words() -> frozenset[str]:
    return frozenset(vocab.context_triggers().closing)


def _predicate(group: Sequence[Item], span: tuple[int, int], lowers: Sequence[str], after_and: bool) -> str | None:
    """What makes the conjunct on `span` a clause of its own: VISIBLE_PREDICATE when the first
    predicate word after its finding says it is seen ("pneumothorax is seen"), STATED_PREDICATE for
    such a finding with its own determiner ("the nodule is again seen") and for any other
    predicate ("atelectasis persists", "the heart is enlarged", "heart size is normal"), None for a
    bare noun phrase ("and pneumothorax") or no finding. A change word before the finding makes a
    clause only after the "and" ("no effusion and stable cardiomegaly"); before it, a predicate
    after the list may still be shared."""
    start, end = span
    finding = next((i for i in group if i.kind == FINDING and start <= i.start < end), None)
    if finding is None:
        return None
    if finding.entry.normal or (after_and and any(lowers[t] in _STATE_WORDS for t in range(start, finding.start))):
        return STATED_PREDICATE
    for t in range(finding.start, end):
        if lowers[t] in _visibility_words():
            own_subject = any(lowers[d] in _DETERMINERS for d in range(start, finding.start))
            return STATED_PREDICATE if own_subject else VISIBLE_PREDICATE
        if lowers[t] in _STATE_WORDS:
            return STATED_PREDICATE
    return STATED_PREDICATE if any(lowers[t] in _COPULAS for t in range(start, end)) else None


Clauses = dict[int, tuple[str | None, str | None]]  # "and" token -> predicates of (after, before)


def _and_clauses(group: Sequence[Item], lowers: Sequence[str]) -> Clauses:
    """The predicates of the conjuncts after and before every "and" of a sentence, computed once
    per sentence. An "and" that joins the subjects of one shared predicate, a finding composed
    across it ("no evidence that the heart and mediastinum are enlarged"), joins no clauses."""
    clauses: Clauses = {}
    for item in group:
        if item.kind != SEPARATOR or item.end - item.start != 1 or lowers[item.start] != "and":
            continue
        if any(i.kind == FINDING and i.start < item.start and i.end > item.end for i in group):
            continue
        after = _predicate(group, _clause_span(lowers, item, forward=True), lowers, after_and=True)
        before = _predicate(group, _clause_span(lowers, item, forward=False), lowers, after_and=False)
        clauses[item.start] = (after, before)
    return clauses


def _pre_trigger(
    group: Sequence[Item], anchor: int, lowers: Sequence[str], clauses: Clauses, skip_negatable: bool = False
) -> Item | None:
    """Nearest pre-trigger that ends before `anchor` with no termination in between, and no closing
    word right after a finding ("no effusion seen, calcified nodes"; not "no effusion or visualized
    pneumothorax"). An "and" that opens a clause of its own ("and the heart is enlarged") ends the
    reach like a termination; one whose clause is only seen ("and pneumothorax is seen") may end a
    list under one negation, so it stops like a comma. A trigger that also reaches backwards
    ("resolved", "versus") reaches forwards only up to a comma or such an "and", so in "Effusion
    resolved, atelectasis persists" it leaves the atelectasis alone. With skip_negatable it looks
    through hedges that a negation cancels, within the comma-free clause."""
    comma = closed = False
    closing = -1  # start of the nearest closing word seen so far
    for item in reversed([i for i in group if i.end <= anchor]):
        if item.kind == TERMINATION:
            return None
        if item.kind == SEPARATOR and lowers[item.start] == ",":
            if skip_negatable:
                return None
            comma = True
        predicate = clauses[item.start][0] if item.kind == SEPARATOR and item.start in clauses else None
        if predicate == STATED_PREDICATE or (predicate and skip_negatable):
            return None
        comma = comma or predicate == VISIBLE_PREDICATE
        if item.kind == CLOSING:
            closing = item.start
        closed = closed or (item.kind == FINDING and item.end == closing)
        if item.kind in TRIGGERS and item.entry.pre and not (skip_negatable and item.entry.negatable):
            if closed:
                return None
            if comma and item.entry.post:
                continue
            return item
    return None


def _hypothetical(group: Sequence[Item], anchor: int, lowers: Sequence[str]) -> Item | None:
    """An ignore pre-trigger ("to evaluate for", "if") of the mention's comma-free clause."""
    for item in reversed([i for i in group if i.end <= anchor]):
        if item.kind in (TERMINATION, CLOSING) or (item.kind == SEPARATOR and lowers[item.start] == ","):
            return None
        if item.kind == IGNORE and item.entry.pre:
            return item
    return None


def _post_trigger(group: Sequence[Item], end: int, lowers: Sequence[str], clauses: Clauses) -> Item | None:
    """Nearest post-trigger after `end` with no termination, comma or "with" in between, nor an
    "and" after a clause of its own ("the heart is enlarged and effusion has resolved")."""
    for item in (i for i in group if i.start >= end):
        if item.kind == TERMINATION or (item.kind == SEPARATOR and lowers[item.start] in _POST_STOPS):
            return None
        if item.kind == SEPARATOR and item.start in clauses and clauses[item.start][1]:
            return None
        if item.kind in TRIGGERS and item.entry.post:
            return item
    return None


def _past_alternative(
    group: Sequence[Item], versus: Item, pre: Item | None, post: Item | None, lowers: Sequence[str], clauses: Clauses
) -> Item:
    """A finding named in a "versus" differential keeps the certainty its sentence gives it: a
    trigger on the other side, or a pre-trigger before the differential ("may represent atelectasis
    versus edema", "question effusion versus thickening"), wins over the "versus" itself."""
    other = post if versus is pre else pre
    outer = _pre_trigger(group, versus.start, lowers, clauses) if versus is pre else None
    return next((t for t in (other, outer) if t is not None and not t.entry.alternative), versus)


def assert_mention(
    item: Item,
    group: Sequence[Item],
    lowers: Sequence[str],
    sentence: int,
    hypothetical: bool = True,
    clauses: Clauses | None = None,
) -> Mention:
    """The assertion of one finding item from the items of its sentence (hypothetical=False: the
    sentence has no hypothetical trigger, a shortcut)."""
    if clauses is None:
        clauses = _and_clauses(group, lowers)
    pre = _pre_trigger(group, item.anchor, lowers, clauses)
    post = _post_trigger(group, item.end, lowers, clauses)
    trigger = pre
    if post is not None and (pre is None or post.start - item.end < item.anchor - pre.end):
        trigger = post
    if trigger is not None and trigger.entry.alternative:
        trigger = _past_alternative(group, trigger, pre, post, lowers, clauses)
    if trigger is not None and trigger is pre and trigger.kind == HEDGE and trigger.entry.negatable:
        outer = _pre_trigger(group, trigger.start, lowers, clauses, skip_negatable=True)
        if outer is not None and outer.kind == NEGATION:
            trigger = outer
    if hypothetical and (trigger is None or trigger.kind != IGNORE):
        trigger = _hypothetical(group, item.anchor, lowers) or trigger
    return _asserted(item, sentence, trigger)


def _asserted(item: Item, sentence: int, trigger: Item | None) -> Mention:
    """The mention of a finding item whose trigger (None: none reaches it) is known."""
    mention = Mention(item, str(item.entry.value), sentence, trigger=trigger)
    if item.entry.normal:
        return _normal(mention)
    if trigger is None:
        return mention
    if trigger.kind == NEGATION:
        mention.status, mention.probability = NEGATIVE, None
    elif trigger.kind == IGNORE:
        mention.status, mention.probability = IGNORED, None
    elif trigger.kind == HEDGE:
        mention.probability = int(trigger.entry.value)  # type: ignore[arg-type]
    return mention


def _normal(mention: Mention) -> Mention:
    """A normal statement rules its finding out when stated or probable ("heart size is probably
    normal"); negated, uncertain or hypothetical ("heart size is not normal") it says nothing."""
    trigger = mention.trigger
    stated = trigger is None or (trigger.kind == HEDGE and int(trigger.entry.value) >= 2)  # type: ignore[arg-type]
    mention.status = NEGATIVE if stated else IGNORED
    mention.probability = None
    return mention


def assert_sentence(group: Sequence[Item], lowers: Sequence[str], sentence: int) -> list[Mention]:
    """Mentions of every finding item of one sentence, in text order."""
    if not any(i.kind in TRIGGERS for i in group):  # no trigger: every finding is stated as it stands
        return [_asserted(i, sentence, None) for i in group if i.kind == FINDING]
    hypothetical = any(i.kind == IGNORE for i in group)
    clauses = _and_clauses(group, lowers)
    return [assert_mention(i, group, lowers, sentence, hypothetical, clauses) for i in group if i.kind == FINDING]
