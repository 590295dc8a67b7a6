"""docs/departures.md: one row per difference from the four papers, and every row names code that
exists (the module imports, the function is an attribute of it), so a rename cannot leave the page
pointing at nothing."""

from __future__ import annotations

import importlib
import re

from paths import REPO

PAGE = REPO / "docs" / "departures.md"
CODE = re.compile(r"`(srrg(?:\.\w+)*):(\w+)`")
ROW = re.compile(r"^\| ([SGEV]\d+) \|(.*)\|$", re.MULTILINE)


def rows() -> dict[str, str]:
    found = ROW.findall(PAGE.read_text(encoding="utf-8"))
    ids = [i for i, _ in found]
    assert len(ids) == len(set(ids)), f"row ids twice: {sorted({i for i in ids if ids.count(i) > 1})}"
    return dict(found)


def test_every_row_has_five_cells_and_names_code():
    """Each row: id, the paper, srrg, why, code; the code cell holds at least one module:function."""
    table = rows()
    assert {i[0] for i in table} == {"S", "G", "E", "V"}  # all four papers
    for row_id, body in table.items():
        cells = [c.strip() for c in body.split(" | ")]
        assert len(cells) == 4 and all(cells), f"{row_id}: {cells}"
        assert CODE.findall(cells[-1]), f"{row_id} names no module:function"


def test_every_named_function_exists():
    """Import each module and getattr each name: fails on a row citing a function that was renamed
    or removed."""
    missing = []
    for row_id, body in rows().items():
        for module, name in CODE.findall(body):
            if not hasattr(importlib.import_module(module), name):
                missing.append(f"{row_id}: {module}:{name}")
    assert not missing, missing


def test_the_rows_the_issue_asks_for_are_present():
    """The finding vocabulary, per-study samples, the probability rescaling and two null locations."""
    table = rows()
    for row_id, word in (("S1", "30 finding types"), ("S2", "per study"), ("S3", "rescaled"), ("S4", "two null")):
        assert word in table[row_id], row_id
