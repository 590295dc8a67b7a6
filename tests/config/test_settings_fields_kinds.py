"""srrg.settings.fields, the kinds issue 53 found missing: every schema keyword checked on its own
(and with values that are not of its kind), the hook metadata, a refusal named under the class that
built it. Each test's docstring names the bug it catches."""

from __future__ import annotations

from typing import Literal

import pytest

from srrg.settings.fields import SettingsError, _choices, _problem, doc, hook


@pytest.mark.parametrize(
    ("value", "schema", "problem"),
    [
        (0, {"minimum": 1}, "must be >= 1, got 0"),
        (1, {"minimum": 1}, None),
        (3, {"maximum": 2}, "must be <= 2, got 3"),
        (0, {"exclusiveMinimum": 0}, "must be > 0, got 0"),
        (1.0, {"exclusiveMaximum": 1}, "must be < 1, got 1.0"),
        (0.5, {"exclusiveMinimum": 0, "exclusiveMaximum": 1}, None),
        (True, {"minimum": 5}, None),  # a boolean is no number: its range is not checked
        ("ab", {"minLength": 3}, "must have at least 3 character(s), got 'ab'"),
        ("abc", {"minLength": 3}, None),
        ("x-1", {"pattern": "^[a-z]+$"}, "must match ^[a-z]+$, got 'x-1'"),
        ("abc", {"pattern": "b"}, None),  # re.search: a pattern without anchors matches inside
        ("c", {"enum": ["a", "b"]}, "must be one of a, b, got 'c'"),
        (None, {"enum": ["a"], "minimum": 3}, None),  # null: checked by the type, not the keywords
        ([], {"minItems": 1}, "must list at least 1 item(s), got 0"),
        ([{"a": 1}, {"a": 1}], {"uniqueItems": True}, "must not repeat an item, got [{'a': 1}, {'a': 1}]"),
        ([{"a": 1}, {"a": 2}], {"uniqueItems": True}, None),
        ([1, 1], {}, None),  # repeats allowed unless uniqueItems
        (["a", "z"], {"items": {"enum": ["a", "b"]}}, "item 'z' must be one of a, b"),
        ([0, 5], {"items": {"minimum": 1}}, "item 0 must be >= 1"),
        ({"ok": 1, "Bad": 2}, {"propertyNames": {"pattern": "^[a-z]+$"}}, "key 'Bad' must match ^[a-z]+$"),
        ({"ok": 1}, {"propertyNames": {"pattern": "^[a-z]+$"}}, None),
        ("abc", {"minItems": 5}, None),  # a string is not a list
    ],
)
def test_each_keyword_alone(value, schema, problem):
    """Bugs: a keyword's test dropped (every value fails, or none), one keyword read under
    another's name (pattern as propertyNames), uniqueItems over unhashable items raising."""
    assert _problem(value, schema) == problem


def test_choices_of_literal_hints():
    """Bugs: an optional Literal without None among its choices, a tuple of Literals read as one
    value, a plain type taken for a choice."""
    assert _choices(Literal["a", "b"]) == (("a", "b"), False)
    assert _choices(Literal["a"] | None) == (("a", None), False)
    assert _choices(tuple[Literal["x", "y"], ...]) == (("x", "y"), True)
    assert _choices(tuple[Literal["x"], ...] | None) == (("x",), True)  # a null list is not a choice
    assert _choices(int) == (None, False) and _choices(str | None) == (None, False)


def test_doc_and_hook_metadata():
    """Bugs: the hook's text written under another key (the description lost from the schema), a
    schema keyword srrg does not check accepted silently."""
    assert hook("metric_names", "Metrics.") == {"schema_hook": "metric_names", "doc": "Metrics."}
    assert hook("runs") == {"schema_hook": "runs"}
    assert doc("Text.", minimum=1) == {"doc": "Text.", "schema": {"minimum": 1}}
    with pytest.raises(TypeError, match=r"\['format'\] are not checked"):
        doc("Text.", format="uri")


def test_a_refusal_is_named_under_the_outer_key():
    """Bugs: under() joining the keys the wrong way round (inner.outer), losing the unknown keys, or
    the joiner; an empty key or place left without a dangling dot."""
    err = SettingsError("n_boot", "must be >= 0, got -1")
    outer = err.under("metaeval.correlate")
    assert outer.key == "metaeval.correlate.n_boot" and outer.located
    assert str(outer) == "metaeval.correlate.n_boot must be >= 0, got -1"
    assert SettingsError("", "x").under("a").key == "a" and SettingsError("k", "x").under("").key == "k"
    unknown = SettingsError("judge", "allowed: a, b", True, unknown=("zz",)).under("top")
    assert str(unknown) == "unknown key(s) top.judge.zz (allowed: a, b)"
    cross = SettingsError("llm", "needs a model", True, ": ").under("judge")
    assert str(cross) == "judge.llm: needs a model"
