"""The first write of a cases page (docs/cases.md, "Size and speed"): phantoms drawn on row and column
axes give the pixels of the full-grid drawing, the page's bytes do not depend on how its thumbnails
were obtained (drawn in one or two processes, without a cache, into a cold one, out of a warm one),
and the stage passes its options to run_cases as one value."""

from __future__ import annotations

import numpy as np
import pytest
from cases_fixtures import cases_command, write_fixture

from srrg import phantom
from srrg.cases.build import RunTables
from srrg.cases.page import CasesOptions, run_cases
from srrg.cli import main
from srrg.report import Finding, StructuredReport

LOCATIONS = (None, "right lower lobe", "left upper lobe", "bilateral", "perihilar", "left base")


def _reports() -> list[StructuredReport]:
    """One report per drawn finding (probability, level and location varied), one with a dozen
    findings together and one with none drawn."""
    names = sorted(phantom.VISIBLE)
    levels = ("mild", "large", None, "trace", "massive")
    out = [StructuredReport((Finding(n, i % 3 + 1, levels[i % 5], LOCATIONS[i % 6]),), ()) for i, n in enumerate(names)]
    together = tuple(Finding(n, 3, "moderate", LOCATIONS[k % 6]) for k, n in enumerate(names[::3]))
    out.append(StructuredReport(together, ()))
    out.append(StructuredReport((Finding("fracture", 3, None, "left"),), ("pneumothorax",)))
    return out


def _full_grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid the drawing used before: both coordinates as full (size, size) arrays."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    return (x + 0.5) / size, (y + 0.5) / size


@pytest.mark.parametrize("size", [16, 64, 128])
def test_phantoms_on_row_and_column_axes_are_the_full_grid_pictures(size, monkeypatch):
    """The broadcasting axes must not move a single pixel (bit for bit), for every drawn finding."""
    reports = _reports()
    fast = [phantom.render(r, f"s{i}", size) for i, r in enumerate(reports)]
    monkeypatch.setattr(phantom, "_axes", _full_grid)
    full = [phantom.render(r, f"s{i}", size) for i, r in enumerate(reports)]
    assert [a.shape for a in fast] == [(size, size)] * len(reports)
    assert all(a.dtype == np.float32 and a.tobytes() == b.tobytes() for a, b in zip(fast, full))
    assert len({a.tobytes() for a in fast}) == len(reports)  # every report is its own picture


def test_the_axes_are_shared_and_cannot_be_written():
    x, y = phantom._axes(8)
    assert x.shape == (1, 8) and y.shape == (8, 1) and phantom._axes(8)[0] is x
    with pytest.raises(ValueError):
        x[0, 0] = 1.0


def test_the_page_is_the_same_bytes_however_its_thumbnails_were_obtained(tmp_path):
    files = write_fixture(tmp_path)
    cache = tmp_path / "cache"
    pages = []
    for i, extra in enumerate(
        [
            [],  # no cache, one process
            ["--processes", "2"],  # no cache, two worker processes
            ["--cache-dir", str(cache)],  # cold cache: drawn and stored
            ["--cache-dir", str(cache), "--processes", "2"],  # warm cache: nothing drawn
        ]
    ):
        out = tmp_path / f"page{i}.html"
        assert main(cases_command(files, out) + extra) == 0
        pages.append(out.read_bytes())
    assert (cache / "thumbnails.sqlite").is_file()
    assert len(set(pages)) == 1 and b"data:image/jpeg;base64," in pages[0]


def test_run_cases_reads_one_options_value(tmp_path):
    files = write_fixture(tmp_path)
    options = CasesOptions(
        run=RunTables("base", files["predictions"], files["scores"]),
        dataset=files["dataset"],
        out=tmp_path / "page.html",
        title="Cases of base",
        thumbnail_size=32,
        compare=(RunTables("other", files["other_predictions"], files["other_scores"]),),
    )
    data, size = run_cases(options)
    assert size == len((tmp_path / "page.html").read_bytes())
    assert [c["run"] for c in data["compare"]] == ["other"] and len(data["studies"]) == 5
    with pytest.raises(AttributeError):  # a value: the stage builds it once
        options.processes = 2  # type: ignore[misc]
