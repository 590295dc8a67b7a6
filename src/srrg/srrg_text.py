"""srrg's structured report <-> SRRG organ-header text (docs/inputs.md, "SRRG text").

SRRG findings are organ-system headers (`Lungs and Airways:`, `Pleura:`, ...) each followed by `- `
bullet lines. `render_srrg` writes a structured report in that layout (the `srrg` training target),
one bullet per finding in a fixed template, the header chosen by srrg/vocab/srrg_organs.yaml;
`parse_srrg` reads such text back: template bullets exactly, any other bullet (free text, as SRRG's
own reports and other models write) through an extractor when one is given, its header standing for
the location where the bullet states none. Parsing never raises: it returns a report and a status
(srrg.report's valid / repaired / unparseable).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from srrg.report import REPAIRED, UNPARSEABLE, VALID, Finding, StructuredReport, canonicalize, from_obj

OTHER = "Other"
_PROBABILITY_WORD = {2: "Probable", 1: "Possible"}  # 3 (stated) and None render without a word
_WORD_PROBABILITY = {w.lower(): p for p, w in _PROBABILITY_WORD.items()}
_BULLET = re.compile(r"^\s*-\s*(.*?)\s*$")
_HEADER_LEAD = re.compile(r"^[^\w]*")


@dataclass(frozen=True)
class OrganMap:
    """The eight headers in report order, each header's location phrase, and finding -> header."""

    headers: tuple[str, ...]
    header_location: Mapping[str, str | None]
    organ_of: Mapping[str, str]


@lru_cache(maxsize=1)
def organ_map() -> OrganMap:
    """srrg/vocab/srrg_organs.yaml, checked: every listed finding under one known header once."""
    from srrg.vocab import VocabularyError, load_data

    raw = load_data("srrg_organs.yaml")
    headers = tuple(str(h["name"]) for h in raw["headers"])
    organ_of: dict[str, str] = {}
    for header, names in raw["findings"].items():
        if header not in headers:
            raise VocabularyError(f"srrg_organs.yaml: findings under {header!r}, which is not one of the headers")
        for name in names:
            if name in organ_of:
                raise VocabularyError(f"srrg_organs.yaml: {name!r} is listed under two headers")
            organ_of[str(name)] = header
    return OrganMap(headers, {str(h["name"]): h.get("location") for h in raw["headers"]}, organ_of)


@lru_cache(maxsize=1)
def _levels() -> tuple[str, ...]:
    """Severity levels, longest first, so "moderate to severe" wins over "moderate"."""
    from srrg.vocab import severity_map

    return tuple(sorted(set(severity_map().values()), key=len, reverse=True))


@lru_cache(maxsize=1)
def _known_names() -> frozenset[str]:
    from srrg.vocab import findings

    return frozenset(findings())


def organ_of(name: str) -> str:
    """The SRRG header a finding is written under (Other for a name outside the map)."""
    return organ_map().organ_of.get(name, OTHER)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def positive_bullet(f: Finding) -> str:
    """`[Probable |Possible ][level ]name[, location].` (size is not written: S-Score ignores it)."""
    words = [w for w in (_PROBABILITY_WORD.get(f.probability or 3), f.level, f.name) if w]
    text = " ".join(words)
    if f.location:
        text += f", {f.location}"
    return _sentence(text)


def render_srrg(report: StructuredReport) -> str:
    """The report as SRRG findings: headers in SRRG order, under each its positive findings then its
    negative ones in report order; headers without a finding are left out (empty for an empty report)."""
    bullets: dict[str, list[str]] = {}
    for f in report.positive:
        bullets.setdefault(organ_of(f.name), []).append(positive_bullet(f))
    for name in report.negative:
        bullets.setdefault(organ_of(name), []).append(_sentence(f"no {name}"))
    blocks = [f"{h}:\n" + "\n".join(f"- {b}" for b in bullets[h]) for h in organ_map().headers if h in bullets]
    return "\n\n".join(blocks)


def header_of(line: str) -> str | None:
    """The SRRG header a line is (case, leading marks and the colon aside), or None."""
    text = _HEADER_LEAD.sub("", line.strip())
    text = text[:-1].strip() if text.endswith(":") else text
    lowered = text.lower()
    return next((h for h in organ_map().headers if h.lower() == lowered), None)


def template_finding(bullet: str) -> tuple[str, Finding | str] | None:
    """A bullet written by render_srrg -> ("positive", Finding) or ("negative", name); None for a
    bullet outside the template (its finding name is not in srrg's vocabulary)."""
    text = bullet.strip().removesuffix(".").strip()
    if not text:
        return None
    text = text[:1].lower() + text[1:]
    if text.startswith("no "):
        name = text[3:].strip()
        return ("negative", name) if name in _known_names() else None
    probability = 3
    first, _, rest = text.partition(" ")
    if first in _WORD_PROBABILITY and rest:
        probability, text = _WORD_PROBABILITY[first], rest
    body, _, location = text.partition(", ")
    level = next((lv for lv in _levels() if body.startswith(lv + " ") and body[len(lv) + 1 :] in _known_names()), None)
    name = body[len(level) + 1 :] if level else body
    if name not in _known_names():
        return None
    return "positive", Finding(name, probability, level, location.strip() or None)


Extractor = Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True)
class SrrgParse:
    """What parse_srrg read: the report, its status, and how many bullets took each road."""

    report: StructuredReport
    status: str
    template_bullets: int
    free_bullets: int
    unread_lines: int


def _with_header_location(report: StructuredReport, header: str | None) -> StructuredReport:
    where = organ_map().header_location.get(header or "")
    if not where:
        return report
    positive = tuple(
        f if f.location else Finding(f.name, f.probability, f.level, where, f.size) for f in report.positive
    )
    return StructuredReport(positive, report.negative)


def parse_srrg(text: str | None, extractor: Extractor | None = None) -> SrrgParse:
    """SRRG findings text -> srrg's structured report. Template bullets are read exactly; another
    bullet is extracted by `extractor` (free text -> report dict), its header's location filling a
    finding that states none; without an extractor it is counted as unread. Lines that are neither
    a header nor a bullet are unread too. Status: valid (every line read from the template),
    repaired (something took the extractor or was unread), unparseable (no header or bullet)."""
    if not isinstance(text, str) or not text.strip():
        return SrrgParse(StructuredReport(), UNPARSEABLE if text is None else VALID, 0, 0, 0)
    header: str | None = None
    positives: list[Finding] = []
    negatives: list[str] = []
    parts: list[StructuredReport] = []
    n_template = n_free = n_unread = n_structure = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        found = header_of(line)
        if found is not None:
            header, n_structure = found, n_structure + 1
            continue
        bullet = _BULLET.match(line)
        if bullet is None:
            n_unread += 1
            continue
        n_structure += 1
        item = template_finding(bullet.group(1))
        if item is not None:
            n_template += 1
            kind, value = item
            (positives if kind == "positive" else negatives).append(value)  # type: ignore[arg-type]
        elif extractor is not None:
            n_free += 1
            parts.append(_with_header_location(from_obj(dict(extractor(bullet.group(1))))[0], header))
        else:
            n_unread += 1
    if not n_structure:
        return SrrgParse(StructuredReport(), UNPARSEABLE, 0, 0, n_unread)
    merged = canonicalize(
        StructuredReport(
            tuple(positives) + tuple(f for p in parts for f in p.positive),
            tuple(negatives) + tuple(n for p in parts for n in p.negative),
        )
    )
    status = VALID if not (n_free or n_unread) else REPAIRED
    return SrrgParse(merged, status, n_template, n_free, n_unread)


def looks_srrg(text: object) -> bool:
    """True for SRRG findings text: not JSON, and a line that is one of the eight headers."""
    return (
        isinstance(text, str)
        and not text.lstrip().startswith("{")
        and any(header_of(line) is not None for line in text.splitlines())
    )


def extract_bullet(text: str) -> Mapping[str, Any]:
    """srrg's extractor on one free-text bullet (imported on first use: spaCy loads only when an
    SRRG text has a bullet outside the template)."""
    from srrg.extract import extract

    return extract(text)


def structured_texts(texts: list[Any]) -> tuple[list[Any], list[str | None]]:
    """Each SRRG text as srrg's structured-report JSON, with parse_srrg's status (free bullets
    extracted); any other text unchanged, status None. What S-Score reads for the srrg target."""
    out: list[Any] = []
    statuses: list[str | None] = []
    for text in texts:
        if looks_srrg(text):
            read = parse_srrg(text, extract_bullet)
            out.append(read.report.to_json())
            statuses.append(read.status)
        else:
            out.append(text)
            statuses.append(None)
    return out, statuses


def header_at(text: str, offset: int) -> str | None:
    """The SRRG header the character at `offset` of text sits under (None before any header)."""
    header, start = None, 0
    for line in text.splitlines(keepends=True):
        if start > offset:
            break
        header = header_of(line) or header
        start += len(line)
    return header


def with_header_locations(findings: str | None, structured: str, provenance: str) -> str:
    """The extracted report of an SRRG study with the organ header as location evidence: a positive
    finding whose mentions state no location takes the location of the header its first findings
    mention sits under (srrg_organs.yaml; none for a header that is no place of its own)."""
    if not looks_srrg(findings):
        return structured
    report = json.loads(structured)
    first: dict[str, int] = {}
    for mention in json.loads(provenance or "[]"):
        span = (mention.get("spans") or {}).get("name")
        if mention.get("section") == "findings" and mention.get("status") == "positive" and span:
            first.setdefault(mention["name"], span[0])
    changed = False
    for finding in report.get("positive", []):
        if finding.get("location") is None and finding.get("name") in first:
            where = organ_map().header_location.get(header_at(findings or "", first[finding["name"]]) or "")
            if where:
                finding["location"], changed = where, True
    return json.dumps(report, ensure_ascii=False) if changed else structured


def header_locations_table(table: Any) -> Any:
    """with_header_locations on the rows of an extracted table that came from the SRRG source
    (column `source` = srrg); other rows, and a table without those columns, are returned as they are."""
    import polars as pl

    if not {"source", "findings", "structured", "provenance"} <= set(table.columns):
        return table
    rows = table.select("source", "findings", "structured", "provenance").iter_rows()
    values = [with_header_locations(f, s, p) if src == "srrg" and s else s for src, f, s, p in rows]
    return table.with_columns(pl.Series("structured", values, dtype=pl.Utf8))
