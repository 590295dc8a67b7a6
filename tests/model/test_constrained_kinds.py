"""Constrained decoding (srrg.model.constrained), the kinds issue 53 found missing: the closer's
explicit step limit (only its default was run) and every field of the narrowed report schema. Each
test's docstring names the bug it catches."""

from __future__ import annotations

import re

import pytest
import torch
import xgrammar as xgr
from model_fixtures import tiny_generator

from srrg import vocab
from srrg.model.constrained import TEXT_PATTERN, closing_string, finding_levels, report_schema

torch.set_num_threads(1)
EMPTY = '{"positive": [], "negative": []}'


@pytest.fixture(scope="module")
def grammar() -> xgr.CompiledGrammar:
    net = tiny_generator("llm", baseline={"min_word_count": 1}, max_target_tokens=160)
    return net.report_grammar().compiled


def test_closing_string_honours_an_explicit_limit(grammar):
    """Bug: the limit argument ignored (a closer that can loop forever at a grammar that never
    completes), or off by one: a completion of k steps needs limit > k."""
    state = xgr.GrammarMatcher(grammar)
    assert closing_string(state, False) == EMPTY
    steps = next(n for n in range(1, 50) if closing_string(state, False, limit=n) is not None)
    assert closing_string(state, False, limit=steps) == EMPTY and steps > 1
    assert closing_string(state, False, limit=steps - 1) is None
    done = xgr.GrammarMatcher(grammar)
    assert done.accept_string(EMPTY)
    assert closing_string(done, False, limit=1) == ""  # already complete: no step needed
    assert not state.is_completed()  # the state itself is never advanced


def test_report_schema_every_narrowed_field():
    """Bugs: the narrowed enums or bounds written onto the wrong list (positive/negative), the level
    enum without null, the location pattern lost, size sharing location's dict (one edit changes
    both), negatives left free strings."""
    schema = report_schema()
    positive, negative = schema["properties"]["positive"], schema["properties"]["negative"]
    names = list(vocab.findings())
    props = positive["items"]["properties"]
    assert list(props) == ["name", "probability", "level", "location", "size"]
    assert props["level"] == {"enum": [*finding_levels(), None]} and None not in finding_levels()
    assert finding_levels() == sorted(set(vocab.severity_map().values()))
    assert props["location"] == props["size"] == {"type": ["string", "null"], "pattern": TEXT_PATTERN}
    assert props["location"] is not props["size"]
    assert positive["maxItems"] == negative["maxItems"] == len(names)
    assert negative["items"] == {"enum": names}


@pytest.mark.parametrize(
    ("text", "ok"),
    [("in the left lower lobe", True), ("left, 2 cm", True), ("left  lung", False), (" left", False),
     ("Left", False), ('left "x"', False), ("a\\b", False), ("left ", False)],
)  # fmt: skip
def test_text_pattern_is_plain_spelling_without_escapes(text, ok):
    """Bug: the text pattern accepting upper case, double or edge spaces, quotes or backslashes (a
    JSON string that needs an escape, or text plain_spelling never writes)."""
    assert bool(re.fullmatch(TEXT_PATTERN, text)) is ok
