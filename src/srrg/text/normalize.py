"""The one spelling rule for vocabulary lookups: lower case, whitespace collapsed (docs/cli.md)."""

from __future__ import annotations

import re
from functools import lru_cache

_WS = re.compile(r"\s+")


@lru_cache(maxsize=1 << 16)
def normalize_text(value: str) -> str:
    """Lower-case and collapse whitespace: the one spelling rule shared by names, levels, locations.
    Cached: the same few thousand phrases recur across a corpus."""
    return _WS.sub(" ", value).strip().lower()
