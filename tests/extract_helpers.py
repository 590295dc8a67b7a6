"""Shared helper of the extraction rule tests."""

from __future__ import annotations

from srrg.extract import extract


def assertion(text: str, name: str) -> str | int | None:
    """The probability of a positive finding, "negative", or None when the name is not reported."""
    r = extract(text)
    found = {f["name"]: f["probability"] for f in r["positive"]}
    if name in found:
        return found[name]
    return "negative" if name in r["negative"] else None
