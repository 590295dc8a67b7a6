"""Free-text radiology report -> MIMIC-STRUC structured report (docs/report.md, docs/extraction.md).

`extract(text)` and `extract_many(texts)` return plain dicts {"positive": [...], "negative": [...]};
they never raise on input text (None, empty or garbage text gives the empty report). The pieces:
sections (header parsing), mentions (vocabulary matching), context (negation / hedging),
linking (severity / location), pipeline (the spaCy pipeline), cli, evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from srrg.extract.pipeline import Extraction, Extractor, run_reports, text_sections
from srrg.settings.extract import ExtractConfig

__all__ = ["Extraction", "Extractor", "extract", "extract_detailed", "extract_many"]


def extract_detailed(
    texts: Iterable[Any], config: ExtractConfig | None = None, n_process: int | None = None
) -> list[Extraction]:
    """Reports, provenance and status for free-text reports, in input order; n_process None = the
    config's (ExtractConfig.n_process)."""
    resolved = config or ExtractConfig()
    n_process = resolved.n_process if n_process is None else n_process
    return run_reports([text_sections(t, resolved.sections) for t in texts], config, n_process=n_process)


def extract(text: Any, config: ExtractConfig | None = None) -> dict[str, Any]:
    """The structured report of one free-text report as a plain dict."""
    return extract_detailed([text], config)[0].to_dict()


def extract_many(
    texts: Iterable[Any], n_process: int | None = None, config: ExtractConfig | None = None
) -> list[dict[str, Any]]:
    """Structured reports of many texts, same order, one per input; n_process > 1 splits the
    texts into contiguous chunks handled by worker processes (None = the config's n_process)."""
    return [e.to_dict() for e in extract_detailed(texts, config, n_process)]
