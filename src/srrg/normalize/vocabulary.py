"""The rules normalizer's vocabulary, read once from locations.yaml (data, not code: extend the
file to teach the normalizer a word)."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import yaml


def _load() -> dict[str, Any]:
    return yaml.safe_load(resources.files(__package__).joinpath("locations.yaml").read_text(encoding="utf-8"))


_DATA = _load()
LEFT, RIGHT, BOTH = _DATA["sides"]["left"], _DATA["sides"]["right"], _DATA["sides"]["both"]
SIDE_WORDS: dict[str, str] = _DATA["side_words"]
LEVELS: dict[str, str] = _DATA["levels"]
LOBE_ABBREV: dict[str, tuple[str, str]] = {k: tuple(v) for k, v in _DATA["lobe_abbreviations"].items()}
# word -> site; a site is rendered by SITE_FORMS
SITES: dict[str, str] = _DATA["sites"]
PLURAL = frozenset(_DATA["plural"])
MODIFIERS: tuple[str, ...] = tuple(_DATA["modifiers"])
DISTRIBUTION: dict[str, str] = _DATA["distribution"]
ADVERBS: dict[str, str] = _DATA["adverbs"]
FILLER = frozenset(_DATA["filler"])
# site -> (preposition, one-side form, both-sides form, no-side form); {s} is the side word
SITE_FORMS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _DATA["site_forms"].items()}
SITE_ORDER = tuple(SITE_FORMS)
# sites inside a lung: "right lung base" says "at the right lung base", not also "in the right lung"
LUNG_PARTS = frozenset(_DATA["lung_parts"])
# words an LLM answer may use: everything the rules vocabulary knows plus phrase glue
ANATOMY = frozenset(
    (
        set(SITES)
        | set(LEVELS)
        | set(LOBE_ABBREV)
        | set(SIDE_WORDS)
        | set(_DATA["answer_anatomy"])
        | {w for forms in SITE_FORMS.values() for form in forms[1:] for w in re.findall(r"[a-z]+", form)}
    )
    - {"s", "the", "of", "on", "both", "side", "sides"}
)
GLUE = frozenset(_DATA["answer_glue"]) | frozenset(MODIFIERS)
