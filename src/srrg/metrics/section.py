"""`score.section`: score one report section only (docs/metrics.md, "Which section is scored").

ReXrank and most MIMIC-CXR tables score the FINDINGS section alone. The same cut applies to the
references and the hypotheses: a free-text report is split at its section headers (the splitter of
srrg.text.sections) and only the chosen section is kept. A text without any known header (a
model's output, a structured JSON report) is taken whole, as it is all findings; a text with headers
but without the chosen section scores as the empty text and is counted as `missing`.
"""

from __future__ import annotations

from collections.abc import Sequence

from srrg.settings.score import WHOLE_REPORT

WHOLE, CUT, MISSING = "whole", "cut", "missing"


def select_section(text: str, section: str) -> tuple[str, str]:
    """The chosen section of one report and how it was found (whole / cut / missing)."""
    from srrg.report import looks_structured
    from srrg.text.sections import PREAMBLE, split_sections

    if section == WHOLE_REPORT or not isinstance(text, str) or looks_structured(text):
        return text, WHOLE
    parts = split_sections(text)
    named = [p for p in parts if p.name != PREAMBLE]
    if not named:
        return text, WHOLE
    chosen = [p.text.strip() for p in named if p.name == section and p.text.strip()]
    return (" ".join(chosen), CUT) if chosen else ("", MISSING)


def select_all(texts: Sequence[str], section: str) -> tuple[list[str], list[str]]:
    """select_section over a list: the texts and their statuses."""
    pairs = [select_section(t, section) for t in texts]
    return [t for t, _ in pairs], [s for _, s in pairs]
