"""Extraction accuracy against the IU X-ray expert MeSH codes (`srrg eval-extraction`, docs/extraction.md).

The expert codes list positive findings only, with qualifiers ("Opacity/lung/base/left/mild").
Codes are mapped to the vocabulary by srrg/vocab/iu_mesh.yaml; the comparison is restricted to
the findings that mapping can produce, so an extracted finding the experts could not have coded
is neither right nor wrong. Printed: per-finding and micro/macro precision/recall/F1 of positive
findings, and, for findings found by both, agreement of severity and of location side / zone
where the code carries such qualifiers, and error examples (false positives and negatives with
their sentence).

Development split (docs/extraction.md): every report id falls in one of two fixed halves, `dev`
(the rules are tuned there) and `heldout` (only measured), by a seeded hash of the id, so the
figures on `heldout` show how the rules do on reports they were not tuned on.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from srrg import vocab
from srrg.config import stage_config
from srrg.errors import UserError
from srrg.settings.stats import HALVES
from srrg.text.spelling import plain_spelling

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?")
SPLIT_SEED = "srrg-iu-dev-split-1"
SHARED_ARCHIVE = Path(__file__).resolve().parents[4] / "shared" / "data" / "iu_xray_reports" / "NLMCXR_reports.tgz"


@dataclass(frozen=True)
class MeshRule:
    heading: str
    finding: str
    all: frozenset[str] = frozenset()
    any: frozenset[str] = frozenset()

    def matches(self, heading: str, qualifiers: frozenset[str]) -> bool:
        return heading == self.heading and self.all <= qualifiers and (not self.any or bool(self.any & qualifiers))


@dataclass(frozen=True)
class MeshMapping:
    rules: tuple[MeshRule, ...]
    exclude_reports: frozenset[str]
    unmapped: Mapping[str, str]
    severity: Mapping[str, frozenset[str]]
    sides: frozenset[str]
    zones: Mapping[str, str]
    location_words: Mapping[str, frozenset[str]]

    @property
    def findings(self) -> frozenset[str]:
        return frozenset(r.finding for r in self.rules)


def split_half(study_id: str) -> str:
    """`dev` or `heldout` for one report id: the parity of the first byte of
    sha256("<SPLIT_SEED>:<id>"), fixed across machines and runs (docs/extraction.md)."""
    digest = hashlib.sha256(f"{SPLIT_SEED}:{study_id}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "heldout"


def in_half(study_id: str, half: str) -> bool:
    """Whether a report belongs to the requested half (`all` takes every report)."""
    if half not in HALVES:
        raise UserError(f"half {half!r} is not one of {', '.join(HALVES)}")
    return half == "all" or split_half(study_id) == half


def _key(text: str) -> str:
    return plain_spelling(text)


@lru_cache(maxsize=1)
def mesh_mapping() -> MeshMapping:
    """The packaged MeSH -> vocabulary mapping; every target must be a vocabulary finding."""
    raw = vocab.load_data("iu_mesh.yaml")
    known = vocab.findings()
    rules = []
    for r in raw["rules"]:
        finding = _key(r["finding"])
        if finding not in known:
            raise vocab.VocabularyError(f"iu_mesh.yaml: {finding!r} is not a vocabulary finding")
        rules.append(
            MeshRule(
                _key(r["heading"]),
                finding,
                frozenset(map(_key, r.get("all", []))),
                frozenset(map(_key, r.get("any", []))),
            )
        )
    return MeshMapping(
        rules=tuple(rules),
        exclude_reports=frozenset(map(_key, raw.get("exclude_reports", []))),
        unmapped=dict(raw.get("unmapped", {})),
        severity={_key(k): frozenset(map(_key, v)) for k, v in raw["severity"].items()},
        sides=frozenset(map(_key, raw["sides"])),
        zones={_key(k): _key(v) for k, v in raw["zones"].items()},
        location_words={_key(k): frozenset(map(_key, v)) for k, v in raw["location_words"].items()},
    )


def parse_code(code: str) -> tuple[str, frozenset[str]]:
    """'Opacity/lung/base/left/mild' -> ('opacity', {'lung', 'base', 'left', 'mild'})."""
    parts = [_key(p) for p in code.split("/")]
    return parts[0], frozenset(p for p in parts[1:] if p)


def map_code(code: str, mapping: MeshMapping) -> str | None:
    heading, qualifiers = parse_code(code)
    for rule in mapping.rules:
        if rule.matches(heading, qualifiers):
            return rule.finding
    return None


def expected_findings(codes: Sequence[str], mapping: MeshMapping) -> dict[str, frozenset[str]]:
    """Mapped finding -> union of the qualifiers of its codes (a report may code one finding twice)."""
    out: dict[str, frozenset[str]] = {}
    for code in codes:
        finding = map_code(code, mapping)
        if finding is not None:
            out[finding] = out.get(finding, frozenset()) | parse_code(code)[1]
    return out


def side_of(location: str | None, words: Mapping[str, frozenset[str]]) -> str | None:
    """left / right / bilateral stated by an extracted location phrase (None if no side)."""
    tokens = set(_WORD.findall(location or ""))
    left, right = bool(tokens & words["left"]), bool(tokens & words["right"])
    if tokens & words["bilateral"] or (left and right):
        return "bilateral"
    return "left" if left else "right" if right else None


def zones_of(location: str | None, words: Mapping[str, frozenset[str]]) -> frozenset[str]:
    tokens = set(_WORD.findall(location or ""))
    return frozenset(z for z in ("lower", "upper", "middle", "hilar", "retrocardiac") if tokens & words[z])


def mesh_side(qualifiers: frozenset[str], mapping: MeshMapping) -> str | None:
    sides = qualifiers & mapping.sides
    if "bilateral" in sides or {"left", "right"} <= sides:
        return "bilateral"
    return next(iter(sides), None)


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def prf(self) -> tuple[float, float, float]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return p, r, f


@dataclass
class Agreement:
    agree: int = 0
    total: int = 0

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else float("nan")


@dataclass(frozen=True)
class ErrorExample:
    """One disagreement with the experts: a false positive (`fp`) or negative (`fn`) of a finding,
    with the sentence that caused it (or the report text when no sentence mentions it)."""

    finding: str
    kind: str
    study_id: str
    sentence: str
    note: str = ""


@dataclass
class EvalResult:
    half: str = "all"
    reports: int = 0
    excluded: int = 0
    per_finding: dict[str, Counts] = field(default_factory=dict)
    severity: Agreement = field(default_factory=Agreement)
    side: Agreement = field(default_factory=Agreement)
    zone: Agreement = field(default_factory=Agreement)
    unmapped_codes: Counter = field(default_factory=Counter)
    mapped_codes: int = 0
    examples: list[ErrorExample] = field(default_factory=list)

    def micro(self) -> tuple[float, float, float]:
        total = Counts(*(sum(getattr(c, k) for c in self.per_finding.values()) for k in ("tp", "fp", "fn")))
        return total.prf()

    def macro(self) -> tuple[float, float, float]:
        """Mean over findings with at least one expert code."""
        rows = [c.prf() for c in self.per_finding.values() if c.tp + c.fn]
        if not rows:
            return 0.0, 0.0, 0.0
        return tuple(sum(r[i] for r in rows) / len(rows) for i in range(3))  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        return {
            "half": self.half,
            "reports": self.reports,
            "excluded": self.excluded,
            "micro": dict(zip(("precision", "recall", "f1"), self.micro())),
            "macro": dict(zip(("precision", "recall", "f1"), self.macro())),
            "per_finding": {k: {"tp": c.tp, "fp": c.fp, "fn": c.fn} for k, c in sorted(self.per_finding.items())},
            "severity_agreement": {"agree": self.severity.agree, "total": self.severity.total},
            "side_agreement": {"agree": self.side.agree, "total": self.side.total},
            "zone_agreement": {"agree": self.zone.agree, "total": self.zone.total},
            "mapped_codes": self.mapped_codes,
            "unmapped_codes": dict(self.unmapped_codes.most_common()),
            "examples": [vars(e) for e in self.examples],
        }


def evaluate(
    codes: Iterable[Sequence[str]], predictions: Iterable[Mapping[str, Any]], mapping: MeshMapping | None = None
) -> EvalResult:
    """Compare extracted reports (MIMIC-STRUC dicts) with each report's MeSH major codes."""
    mapping = mapping or mesh_mapping()
    scope = mapping.findings
    result = EvalResult(per_finding={f: Counts() for f in sorted(scope)})
    for report_codes, pred in zip(codes, predictions, strict=True):
        if any(_key(c) in mapping.exclude_reports for c in report_codes):
            result.excluded += 1
            continue
        result.reports += 1
        for c in report_codes:
            if map_code(c, mapping) is None:
                result.unmapped_codes[parse_code(c)[0]] += 1
            else:
                result.mapped_codes += 1
        expected = expected_findings(report_codes, mapping)
        predicted = {p["name"]: p for p in pred.get("positive", []) if p.get("name") in scope}
        for name in expected.keys() | predicted.keys():
            counts = result.per_finding[name]
            if name not in predicted:
                counts.fn += 1
                continue
            if name not in expected:
                counts.fp += 1
                continue
            counts.tp += 1
            _agreements(result, expected[name], predicted[name], mapping)
    return result


def _agreements(result: EvalResult, qualifiers: frozenset[str], pred: Mapping[str, Any], mapping: MeshMapping) -> None:
    levels = qualifiers & set(mapping.severity)
    if levels:
        level = _key(pred.get("level") or "")
        result.severity.total += 1
        result.severity.agree += any(level in mapping.severity[q] for q in levels)
    side = mesh_side(qualifiers, mapping)
    location = pred.get("location")
    if side:
        result.side.total += 1
        result.side.agree += side_of(location, mapping.location_words) == side
    zones = {mapping.zones[q] for q in qualifiers if q in mapping.zones}
    if zones:
        result.zone.total += 1
        result.zone.agree += bool(zones & zones_of(location, mapping.location_words))


def format_result(result: EvalResult, min_support: int = 1) -> str:
    """The per-finding table and the summary lines."""
    lines = [f"{'finding':<38} {'expert':>6} {'found':>6} {'P':>6} {'R':>6} {'F1':>6}"]
    rows = sorted(result.per_finding.items(), key=lambda kv: -(kv[1].tp + kv[1].fn))
    for name, c in rows:
        if c.tp + c.fn < min_support and c.fp == 0:
            continue
        p, r, f = c.prf()
        lines.append(f"{name:<38} {c.tp + c.fn:>6} {c.tp + c.fp:>6} {p:>6.3f} {r:>6.3f} {f:>6.3f}")
    mp, mr, mf = result.micro()
    ap, ar, af = result.macro()
    lines += [
        f"half: {result.half}; reports evaluated: {result.reports} (excluded, not indexed: {result.excluded}); "
        f"mapped codes: {result.mapped_codes}; unmapped codes: {sum(result.unmapped_codes.values())}",
        f"micro  P={mp:.3f} R={mr:.3f} F1={mf:.3f}",
        f"macro  P={ap:.3f} R={ar:.3f} F1={af:.3f} (over findings with expert codes)",
        f"severity agreement {result.severity.rate:.3f} (n={result.severity.total}); "
        f"location side agreement {result.side.rate:.3f} (n={result.side.total}); "
        f"zone agreement {result.zone.rate:.3f} (n={result.zone.total})",
        "unmapped headings: " + ", ".join(f"{h} {n}" for h, n in result.unmapped_codes.most_common(15)),
    ]
    if result.examples:
        lines.append("error examples (fp: extracted, not coded; fn: coded, not extracted as positive):")
        lines += [f"  {e.kind} {e.finding:<28} {e.study_id:<8} {e.note:<10} {e.sentence}" for e in result.examples]
    return "\n".join(lines)


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n\s*\n")


def sentence_at(text: str, start: int, end: int, width: int = 200) -> str:
    """The sentence of `text` holding characters [start, end), shortened to `width` characters."""
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right = next((m.end() for m in _SENTENCE_END.finditer(text, end)), len(text))
    sentence = " ".join(text[left:right].split())
    return sentence if len(sentence) <= width else sentence[: width - 3] + "..."


def _mention_sentence(
    sections: Mapping[str, str | None], provenance: Sequence[Mapping[str, Any]], name: str, status: str
) -> str | None:
    for rec in provenance:
        text = sections.get(rec["section"])
        if rec["name"] == name and rec["status"] == status and text:
            start, end = rec["spans"]["name"]
            return sentence_at(text, start, end)
    return None


def error_examples(
    study_ids: Sequence[str],
    sections: Sequence[Mapping[str, str | None]],
    provenance: Sequence[Sequence[Mapping[str, Any]]],
    codes: Sequence[Sequence[str]],
    predictions: Sequence[Mapping[str, Any]],
    per_finding: int = 2,
    mapping: MeshMapping | None = None,
) -> list[ErrorExample]:
    """Up to `per_finding` false positives and negatives per finding, findings with the most errors
    first, each with the sentence that produced (or missed) it, so the next rule fix has a target."""
    mapping = mapping or mesh_mapping()
    scope = mapping.findings
    found: dict[str, dict[str, list[ErrorExample]]] = {}
    errors: Counter = Counter()
    for sid, secs, prov, report_codes, pred in zip(study_ids, sections, provenance, codes, predictions, strict=True):
        if any(_key(c) in mapping.exclude_reports for c in report_codes):
            continue
        expected = set(expected_findings(report_codes, mapping))
        predicted = {p["name"]: p for p in pred.get("positive", []) if p.get("name") in scope}
        for name in sorted(expected ^ predicted.keys()):
            kind = "fp" if name in predicted else "fn"
            errors[name] += 1
            bucket = found.setdefault(name, {"fp": [], "fn": []})[kind]
            if len(bucket) >= per_finding:
                continue
            if kind == "fp":
                note = f"prob {predicted[name].get('probability')}"
                sentence = _mention_sentence(secs, prov, name, "positive")
            else:
                sentence = _mention_sentence(secs, prov, name, "negative")
                note = "negated" if sentence else "not found"
            text = sentence or " ".join(" ".join(t for t in secs.values() if t).split())[:200]
            bucket.append(ErrorExample(name, kind, sid, text, note))
    return [e for name, _ in errors.most_common() for kind in ("fp", "fn") for e in found[name][kind]]


def default_archive() -> Path:
    """../shared/data copy when present, else the copy inside the torchxrayvision wheel."""
    if SHARED_ARCHIVE.is_file():
        return SHARED_ARCHIVE
    from srrg.sources.iu_xray import torchxrayvision_archive

    return torchxrayvision_archive()


def half_records(archive: str | Path | None, half: str) -> list[Any]:
    """The IU reports of one half (`dev`, `heldout` or `all`); none is a UserError."""
    from srrg.sources.iu_xray import read_reports

    in_half("", half)  # an unknown half fails before the archive is read
    path = archive or default_archive()
    records = [r for r in read_reports(path) if in_half(r.study_id, half)]
    if not records:
        raise UserError(
            f"{path}: no IU X-ray report (ecgen-radiology/*.xml) in half {half!r}; expected NLMCXR_reports.tgz"
        )
    return records


def extract_records(records: Sequence[Any], config: Any = None) -> tuple[list[Any], list[dict[str, str | None]], float]:
    """Extract the configured sections of IU reports: (extractions, section rows, seconds)."""
    from srrg.extract.pipeline import column_sections, get_extractor
    from srrg.settings.extract import ExtractConfig

    cfg = config if isinstance(config, ExtractConfig) else stage_config(config, ExtractConfig, "extract")
    extractor = get_extractor(cfg)
    rows = [{"findings": r.findings, "impression": r.impression} for r in records]
    start = time.perf_counter()
    extractions = extractor.run(column_sections(row, cfg.sections) for row in rows)
    return extractions, rows, time.perf_counter() - start


def run_iu(
    archive: str | Path | None = None,
    config: Any = None,
    keep_predictions: bool = False,
    half: str = "all",
    examples: int = 0,
) -> tuple[Any, ...]:
    """Extract the IU reports of one half (`dev`, `heldout` or `all`; configured sections) and
    compare with their codes; up to `examples` error examples per finding and kind go into the
    result. Returns (result, extraction seconds, number of reports) and, with keep_predictions, the
    report dicts as well. No report to evaluate is a UserError: an F1 of nothing is no number."""
    records = half_records(archive, half)
    extractions, rows, seconds = extract_records(records, config)
    predictions = [e.to_dict() for e in extractions]
    path = archive or default_archive()
    codes = [r.mesh_major for r in records]
    result = evaluate(codes, predictions)
    if not result.reports:
        raise UserError(f"{path}: every report in half {half!r} is excluded (not indexed); nothing to evaluate")
    result.half = half
    if examples > 0:
        prov = [e.provenance for e in extractions]
        result.examples = error_examples([r.study_id for r in records], rows, prov, codes, predictions, examples)
    return (result, seconds, len(records), predictions) if keep_predictions else (result, seconds, len(records))
