"""Report sections: cut free text at its headers ("FINDINGS:", "IMPRESSION:") and name them.

MIMIC-CXR reports are free text with upper-case headers; Open-i reports come already split
(AbstractText labels), so both end up as {canonical section: text}. Header spellings and their
canonical names are vocabulary data (srrg/vocab/sections.yaml). Offsets are kept so provenance
spans can point into the original text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from srrg import vocab
from srrg.text.spelling import plain_spelling

# a header: at the start of a line (or text), words then a colon; MIMIC writes them upper case.
# It is only tried at line starts (a report has few lines), not searched for at every character.
_HEADER = re.compile(r"[ \t]*([A-Za-z][A-Za-z /&()-]{0,60}?)[ \t]*:")
_NEWLINE = re.compile(r"\n")
PREAMBLE = "preamble"


@dataclass(frozen=True)
class Section:
    """One section: canonical name, the header as written, and its body with its offset in the text."""

    name: str
    header: str
    text: str
    offset: int


def split_sections(text: str, headers: Mapping[str, str] | None = None) -> list[Section]:
    """Sections in text order, cut at known headers only (an unknown "PA AND LATERAL CHEST:" line
    stays inside its section); text before the first header is the preamble."""
    table = vocab.section_headers() if headers is None else headers
    cuts: list[tuple[int, int, str, str]] = []  # (header start, body start, name, header)
    for line in (0, *(n.end() for n in _NEWLINE.finditer(text))):
        m = _HEADER.match(text, line)
        if m is None:
            continue
        header = m.group(1)
        key = plain_spelling(header)
        if key in table:
            cuts.append((m.start(1), m.end(), table[key], header))
    sections: list[Section] = []
    first = cuts[0][0] if cuts else len(text)
    if text[:first].strip():
        sections.append(Section(PREAMBLE, "", text[:first], 0))
    for k, (_, body_start, name, header) in enumerate(cuts):
        body_end = cuts[k + 1][0] if k + 1 < len(cuts) else len(text)
        sections.append(Section(name, header, text[body_start:body_end], body_start))
    return sections


def select_sections(sections: Iterable[Section], wanted: Iterable[str]) -> list[Section]:
    """The wanted sections in text order; a text without any known header counts as one findings
    section so that header-less reports (and single-section inputs) are still extracted."""
    sections = list(sections)
    wanted = tuple(wanted)
    if all(s.name == PREAMBLE for s in sections):
        return [Section("findings", "", s.text, s.offset) for s in sections] if "findings" in wanted else []
    return [s for s in sections if s.name in wanted and s.text.strip()]
