"""The one spelling rule for vocabulary lookups: lower case, whitespace collapsed (docs/cli.md)."""

from __future__ import annotations

import re
from functools import lru_cache

_WS = re.compile(r"\s+")
CACHE_SIZE = 1 << 16
CACHE_MAX_CHARS = 256  # phrases recur; whole reports and LLM answers are longer and rarely repeat (docs/inputs.md)


def plain_spelling(value: str) -> str:
    """Lower-case and collapse whitespace: the one spelling rule shared by names, levels, locations.
    Phrase-sized values are cached (the same few thousand phrases recur across a corpus); longer
    ones are computed afresh, so distinct long texts cannot grow memory."""
    return _cached(value) if len(value) <= CACHE_MAX_CHARS else _plain(value)


def _plain(value: str) -> str:
    return _WS.sub(" ", value).strip().lower()


_cached = lru_cache(maxsize=CACHE_SIZE)(_plain)
