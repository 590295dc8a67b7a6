"""Extraction accuracy against NIH 14-label expert gold of Open-i reports (`srrg eval-extraction
--gold openi14`, docs/extraction.md).

The gold is a CSV with one row per Open-i report: `filename` (the report's uId in the IU X-ray
archive, "CXR1") and a 0/1 column per ChestX-ray14 label ("1" = the report states the finding).
The extractor's positive findings become labels through srrg/vocab/nih14_map.yaml. Two readings
of a positive are scored: `definite` (probability 3 only: what the report states) and `any`
(every positive probability: hedged findings count too). Printed: per-label and micro/macro
precision/recall/F1 for both, and error examples with the sentence that caused them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from srrg import vocab
from srrg.errors import UserError
from srrg.extract.evaluation import (
    Counts,
    ErrorExample,
    _mention_sentence,
    extract_records,
    format_result,
    half_records,
    in_half,
    run_iu,
)
from srrg.text.decode import read_utf8

ID_COLUMN = "filename"
MAP_FILE = "nih14_map.yaml"
DEFINITE, ANY = "definite", "any"
MODES = {DEFINITE: 3, ANY: 1}  # reading -> lowest probability that counts as positive
SHARED_GOLD = Path(__file__).resolve().parents[4] / "shared" / "data" / "openi_nih14_dev" / "openi_nih14_dev.csv"


@dataclass(frozen=True)
class LabelMap:
    """The 14 labels in file order and finding -> the labels it counts as."""

    labels: tuple[str, ...]
    findings: Mapping[str, frozenset[str]]
    unannotated_if_absent: frozenset[str] = frozenset()


@lru_cache(maxsize=1)
def label_map() -> LabelMap:
    """The packaged NIH map; every finding must be a vocabulary finding, every key a label."""
    raw = vocab.load_data(MAP_FILE)
    labels = tuple(raw["labels"])
    known = vocab.findings()
    findings: dict[str, set[str]] = {}
    for label, names in raw["map"].items():
        if label not in labels:
            raise vocab.VocabularyError(f"{MAP_FILE}: {label!r} is not one of the labels")
        for name in names:
            if name not in known:
                raise vocab.VocabularyError(f"{MAP_FILE}: {name!r} is not a vocabulary finding")
            findings.setdefault(name, set()).add(label)
    optional = frozenset(raw.get("unannotated_if_absent", ()))
    if not optional <= set(labels):
        unknown = sorted(optional - set(labels))
        raise vocab.VocabularyError(f"{MAP_FILE}: unannotated_if_absent must name labels: {unknown}")
    return LabelMap(labels, {k: frozenset(v) for k, v in findings.items()}, optional)


def unannotated(gold: Mapping[str, frozenset[str]], mapping: LabelMap) -> frozenset[str]:
    """Labels the gold file did not annotate: listed as possibly unannotated and never positive."""
    seen = frozenset().union(*gold.values()) if gold else frozenset()
    return mapping.unannotated_if_absent - seen


def read_gold(path: str | Path, mapping: LabelMap | None = None) -> dict[str, frozenset[str]]:
    """Report id -> its positive labels. A missing label column, a value other than 0/1, a repeated
    id or no row at all is a UserError naming the file."""
    mapping = mapping or label_map()
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: gold file not found (NIH 14-label CSV with a {ID_COLUMN} column)")
    with io.StringIO(read_utf8(path), newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in (ID_COLUMN, *mapping.labels) if c not in (reader.fieldnames or ())]
        if missing:
            expected = f"expected {ID_COLUMN} and the 14 NIH labels"
            raise UserError(f"{path}: missing column(s) {', '.join(missing)}; {expected}")
        gold: dict[str, frozenset[str]] = {}
        for line, row in enumerate(reader, start=2):
            rid = (row[ID_COLUMN] or "").strip()
            bad = [c for c in mapping.labels if (row[c] or "").strip() not in ("0", "1")]
            if not rid or bad or rid in gold:
                why = "an empty id" if not rid else f"a repeated id {rid}" if rid in gold else ""
                why = why or f"non-0/1 in {', '.join(bad)}"
                raise UserError(f"{path}:{line}: {why}")
            gold[rid] = frozenset(c for c in mapping.labels if row[c].strip() == "1")
    if not gold:
        raise UserError(f"{path}: no gold row")
    return gold


def default_gold() -> Path:
    """The development gold in ../shared/data when present; otherwise the user passes --gold-file."""
    if not SHARED_GOLD.is_file():
        raise UserError(f"{SHARED_GOLD} not found: pass --gold-file (NIH 14-label CSV of Open-i reports)")
    return SHARED_GOLD


def report_labels(prediction: Mapping[str, Any], min_probability: int, mapping: LabelMap) -> frozenset[str]:
    """The labels of one extracted report whose findings have at least `min_probability`."""
    return frozenset(
        label
        for f in prediction.get("positive", [])
        if (f.get("probability") or 0) >= min_probability
        for label in mapping.findings.get(f.get("name"), ())
    )


@dataclass
class LabelResult:
    half: str = "all"
    reports: int = 0
    not_in_archive: int = 0
    labels: tuple[str, ...] = ()
    unannotated: frozenset[str] = frozenset()  # shown, not in micro/macro (LabelMap.unannotated_if_absent)
    counts: dict[str, dict[str, Counts]] = field(default_factory=dict)  # reading -> label -> counts
    examples: list[ErrorExample] = field(default_factory=list)

    def micro(self, mode: str = DEFINITE, every_label: bool = False) -> tuple[float, float, float]:
        """Pooled over the annotated labels (every_label: over all of them, unannotated ones too)."""
        rows = [c for lab, c in self.counts[mode].items() if every_label or lab not in self.unannotated]
        return Counts(*(sum(getattr(c, k) for c in rows) for k in ("tp", "fp", "fn"))).prf()

    def macro(self, mode: str = DEFINITE) -> tuple[float, float, float]:
        """Mean over labels with at least one gold positive (a label the gold never marks has no recall)."""
        rows = [c.prf() for lab, c in self.counts[mode].items() if c.tp + c.fn and lab not in self.unannotated]
        if not rows:
            return 0.0, 0.0, 0.0
        return tuple(sum(r[i] for r in rows) / len(rows) for i in range(3))  # type: ignore[return-value]

    def to_dict(self) -> dict[str, Any]:
        def prf(values: tuple[float, float, float]) -> dict[str, float]:
            return dict(zip(("precision", "recall", "f1"), values))

        return {
            "gold": "openi14",
            "half": self.half,
            "reports": self.reports,
            "not_in_archive": self.not_in_archive,
            "unannotated": sorted(self.unannotated),
            **{
                mode: {
                    "micro": prf(self.micro(mode)),
                    "micro_every_label": prf(self.micro(mode, every_label=True)),
                    "macro": prf(self.macro(mode)),
                    "per_label": {
                        label: {"tp": c.tp, "fp": c.fp, "fn": c.fn, **prf(c.prf())}
                        for label, c in self.counts[mode].items()
                    },
                }
                for mode in MODES
            },
            "examples": [vars(e) for e in self.examples],
        }


def evaluate_labels(
    gold: Sequence[frozenset[str]],
    predictions: Sequence[Mapping[str, Any]],
    mapping: LabelMap | None = None,
    not_annotated: frozenset[str] = frozenset(),
) -> LabelResult:
    """Per-label counts of both readings for reports in the same order as their gold labels;
    `not_annotated` labels are counted but left out of micro/macro."""
    mapping = mapping or label_map()
    counts = {m: {lab: Counts() for lab in mapping.labels} for m in MODES}
    result = LabelResult(labels=mapping.labels, unannotated=not_annotated, counts=counts)
    for expected, pred in zip(gold, predictions, strict=True):
        result.reports += 1
        for mode, threshold in MODES.items():
            found = report_labels(pred, threshold, mapping)
            for label in expected | found:
                counts = result.counts[mode][label]
                if label not in found:
                    counts.fn += 1
                elif label not in expected:
                    counts.fp += 1
                else:
                    counts.tp += 1
    return result


def label_examples(
    study_ids: Sequence[str],
    sections: Sequence[Mapping[str, str | None]],
    provenance: Sequence[Sequence[Mapping[str, Any]]],
    gold: Sequence[frozenset[str]],
    predictions: Sequence[Mapping[str, Any]],
    per_label: int = 2,
    mapping: LabelMap | None = None,
) -> list[ErrorExample]:
    """Up to `per_label` false positives and negatives (definite reading) per label, labels with the
    most errors first, each with the sentence that produced or missed it."""
    mapping = mapping or label_map()
    members = {lab: sorted(n for n, labs in mapping.findings.items() if lab in labs) for lab in mapping.labels}
    found: dict[str, dict[str, list[ErrorExample]]] = {lab: {"fp": [], "fn": []} for lab in mapping.labels}
    errors: dict[str, int] = dict.fromkeys(mapping.labels, 0)
    for sid, secs, prov, expected, pred in zip(study_ids, sections, provenance, gold, predictions, strict=True):
        labels = report_labels(pred, MODES[DEFINITE], mapping)
        hedged = report_labels(pred, MODES[ANY], mapping) - labels
        for label in sorted(expected ^ labels):
            kind = "fp" if label in labels else "fn"
            errors[label] += 1
            bucket = found[label][kind]
            if len(bucket) >= per_label:
                continue
            status = "positive" if kind == "fp" or label in hedged else "negative"
            sentence = next((s for n in members[label] if (s := _mention_sentence(secs, prov, n, status))), None)
            note = "stated" if kind == "fp" else "hedged" if label in hedged else "negated" if sentence else "not found"
            text = sentence or " ".join(" ".join(t for t in secs.values() if t).split())[:200]
            bucket.append(ErrorExample(label, kind, sid, text, note))
    order = sorted(mapping.labels, key=lambda lab: -errors[lab])
    return [e for lab in order for kind in ("fp", "fn") for e in found[lab][kind]]


def format_labels(result: LabelResult) -> str:
    """The per-label table of both readings, the micro/macro lines and the examples."""
    columns = (f"{m[:3]} {k}" for m in MODES for k in ("found", "P", "R", "F1"))
    head = f"{'label':<20} {'gold':>5}" + "".join(f" {c:>9}" for c in columns)
    lines = [head]
    for label in result.labels:
        c = result.counts[DEFINITE][label]
        row = f"{label:<20} {c.tp + c.fn:>5}"
        for mode in MODES:
            c = result.counts[mode][label]
            p, r, f = c.prf()
            row += f" {c.tp + c.fp:>9} {p:>9.3f} {r:>9.3f} {f:>9.3f}"
        lines.append(row)
    lines.append(
        f"gold: openi14; half: {result.half}; reports evaluated: {result.reports} "
        f"(gold rows without a report in the archive: {result.not_in_archive})"
    )
    for mode in MODES:
        mp, mr, mf = result.micro(mode)
        ap, ar, af = result.macro(mode)
        ep, er, ef = result.micro(mode, every_label=True)
        lines.append(
            f"{mode:<8} micro P={mp:.3f} R={mr:.3f} F1={mf:.3f}; macro P={ap:.3f} R={ar:.3f} F1={af:.3f}; "
            f"micro with unannotated labels P={ep:.3f} R={er:.3f} F1={ef:.3f}"
        )
    if result.unannotated:
        names = ", ".join(sorted(result.unannotated))
        lines.append(f"not annotated in this gold (no positive row; shown, not in micro/macro): {names}")
    if result.examples:
        lines.append("error examples (definite reading; fp: extracted, not in the gold; fn: in the gold, not stated):")
        lines += [f"  {e.kind} {e.finding:<20} {e.study_id:<8} {e.note:<9} {e.sentence}" for e in result.examples]
    return "\n".join(lines)


_MEASURES = ("found", "precision", "recall", "f1")
TABLE_COLUMNS = ("label", "gold", "scored", *(f"{m}_{k}" for m in MODES for k in _MEASURES))


def label_table(result: LabelResult) -> list[dict[str, Any]]:
    """One row per label, then `micro` and `macro` rows: the per-label table a user reads to see
    how far to trust each finding (`scored` is false for a label the gold did not annotate)."""
    rows: list[dict[str, Any]] = []
    for label in result.labels:
        definite = result.counts[DEFINITE][label]
        row: dict[str, Any] = {"label": label, "gold": definite.tp + definite.fn}
        row["scored"] = label not in result.unannotated
        for mode in MODES:
            c = result.counts[mode][label]
            row[f"{mode}_found"] = c.tp + c.fp
            row.update(zip((f"{mode}_{k}" for k in ("precision", "recall", "f1")), (round(v, 4) for v in c.prf())))
        rows.append(row)
    scored = [r for r in rows if r["scored"]]
    for name, fn in (("micro", result.micro), ("macro", result.macro)):
        row = {"label": name, "gold": sum(r["gold"] for r in scored), "scored": True}
        for mode in MODES:
            row[f"{mode}_found"] = sum(r[f"{mode}_found"] for r in scored)
            row.update(zip((f"{mode}_{k}" for k in ("precision", "recall", "f1")), (round(v, 4) for v in fn(mode))))
        rows.append(row)
    return rows


def write_label_table(result: LabelResult, path: str | Path) -> None:
    """label_table as CSV (atomic write)."""
    import io

    from srrg.io import write_text

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(label_table(result))
    write_text(path, buf.getvalue())


def run_openi14(
    archive: str | Path | None = None,
    gold_path: str | Path | None = None,
    config: Any = None,
    half: str = "all",
    examples: int = 0,
    keep_predictions: bool = False,
) -> tuple[Any, ...]:
    """Extract the Open-i reports of the gold rows in one half of the fixed IU split (the same
    `dev`/`heldout` halves as the MeSH comparison) and score them against the gold. Returns
    (result, extraction seconds, number of reports), and the report dicts with keep_predictions.
    Gold rows whose report is not in the archive are counted, not scored; none left is a UserError."""
    path = gold_path or default_gold()
    gold = read_gold(path)
    records = [r for r in half_records(archive, "all") if r.study_id in gold]
    missing = len(gold) - len(records)
    records = [r for r in records if in_half(r.study_id, half)]
    if not records:
        raise UserError(f"{path}: no gold row in half {half!r} has a report in the archive (ids are Open-i uIds, CXR1)")
    extractions, rows, seconds = extract_records(records, config)
    predictions = [e.to_dict() for e in extractions]
    labels = [gold[r.study_id] for r in records]
    mapping = label_map()
    result = evaluate_labels(labels, predictions, mapping, unannotated(gold, mapping))
    result.half, result.not_in_archive = half, missing
    if examples > 0:
        prov = [e.provenance for e in extractions]
        result.examples = label_examples([r.study_id for r in records], rows, prov, labels, predictions, examples)
    out = (result, seconds, len(records))
    return (*out, predictions) if keep_predictions else out


def run_eval_extraction(
    gold: str,
    archive: str | None,
    gold_file: str | None,
    config: Any,
    half: str,
    examples: int,
    min_support: int,
    table: str | None,
    out: str | None,
) -> str:
    """The eval-extraction stage: extraction on the IU archive scored against gold `iu` (its MeSH
    codes, run_iu) or `openi14` (the OpenI labels, run_openi14, label table written to table);
    the result (with seconds and n) written as JSON to out. Returns the text it prints. Here, not in
    srrg.extract.evaluation, because this module reads both golds and imports that one."""
    from srrg.io import write_text

    if gold == "openi14":
        result, seconds, n = run_openi14(archive, gold_file, config, half=half, examples=examples)
        text = format_labels(result)
        if table:
            write_label_table(result, table)
    else:
        result, seconds, n = run_iu(archive, config, half=half, examples=examples)
        text = format_result(result, min_support)
    if out:
        write_text(out, json.dumps({**result.to_dict(), "seconds": seconds, "n": n}, indent=2))
    return f"{text}\nextraction: {n} reports in {seconds:.2f} s ({n / seconds:.0f} reports/s, one process)"
