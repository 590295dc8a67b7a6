"""What the rows of every source share (docs/workflow.md): the ingest statuses that say why a study
has no usable report or no images, the natural order of study ids, and data files that installed
packages ship (the IU X-ray default reads torchxrayvision's copies)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

OK, NO_REPORT, NO_SECTIONS, NO_IMAGES, MISSING_IMAGES = "ok", "no_report", "no_sections", "no_images", "missing_images"


def natural_key(value: str) -> tuple[Any, ...]:
    """Sort "CXR2" before "CXR10" and "9" before "10"."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", value))


def report_status(findings: str | None, impression: str | None, has_text: bool) -> str | None:
    """The report part of the status, or None when the report is usable."""
    if not has_text:
        return NO_REPORT
    if not findings and not impression:
        return NO_SECTIONS
    return None


# the context sections of a report (ingest keeps each with a `<name>_status` column)
CONTEXT_SECTIONS = ("indication", "technique", "comparison")
ABSENT, NOT_IN_SOURCE = "absent", "not_in_source"


def context_columns(texts: Mapping[str, str | None], has_text: bool) -> dict[str, str | None]:
    """The context section columns of one study and their statuses: `ok` (the section's text),
    `absent` (the report has no such section), `no_report` (no readable report), `not_in_source`
    (the source never records that section)."""
    row: dict[str, str | None] = {}
    for name in CONTEXT_SECTIONS:
        text = texts.get(name)
        row[name] = text or None
        if name not in texts:
            row[f"{name}_status"] = NOT_IN_SOURCE
        elif not has_text:
            row[f"{name}_status"] = NO_REPORT
        else:
            row[f"{name}_status"] = OK if text else ABSENT
    return row


def image_status(n_images: int, n_missing: int) -> str | None:
    if n_images == 0:
        return NO_IMAGES
    if n_missing:
        return MISSING_IMAGES
    return None


def packaged_file(package: str, relative: str) -> Path:
    """A data file shipped inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed; set the path in the config instead")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the installed {package!r} package")
    return path
