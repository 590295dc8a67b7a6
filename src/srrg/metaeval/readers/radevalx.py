"""The RadEvalX reader (docs/metaeval.md): radiologists' error counts per report as a ratings table."""

from __future__ import annotations

from pathlib import Path

from srrg.errors import UserError
from srrg.metaeval.readers.common import (
    INSIG,
    PAIR_INFO_SCHEMA,
    RATINGS_SCHEMA,
    SIG,
    RatingsDataset,
    error_count,
    error_row,
    read_rating_csv,
    require_columns,
    rows_or_fail,
    table_of,
)
from srrg.metrics.judges.common import CATEGORIES
from srrg.settings.metaeval import RadevalxOptions

RADEVALX_COUNTS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
RADEVALX_CATEGORIES = (*CATEGORIES, "g", "h")  # one..six are the GREEN/ReXVal a..f


def read_radevalx(path: str | Path, options: RadevalxOptions = RadevalxOptions()) -> RatingsDataset:
    """RadEvalX: radiologists' error counts per report in eight categories, significant and
    insignificant. The layout was read in a public correlation script that reads the real files
    (compute_llm_metrics_raters.py, found by content search; the index does not name its
    repository, docs/metaeval.md): the annotation CSV has `report_id`, `error_type` (significant |
    insignificant) and counts `one` .. `eight` (one..six = GREEN a..f, seven and eight kept as g,
    h); the reports CSV (read by the same project as `radevalx_report.csv`) has `study_id`,
    `ground_truth`, `candidate_report`, joined on report_id = study_id. The published file names
    are not in that code, so both paths are given: path = the annotation CSV, reports = the
    reports CSV. A report with two rows of one error_type is an error (no rater column is known)."""
    reports = options.reports
    if not reports:
        raise UserError("radevalx: pass option reports (the CSV with study_id, ground_truth, candidate_report)")
    path, reports_path = Path(path), Path(reports)
    frame = read_rating_csv(reports_path)
    require_columns(frame, ["study_id", "ground_truth", "candidate_report"], reports_path)
    pairs = [
        {"pair_id": str(r["study_id"]), "reference": r["ground_truth"] or "", "candidate": r["candidate_report"] or "",
         "cluster": str(r["study_id"]), "system": "", "context": "{}"}
        for r in frame.iter_rows(named=True)
    ]  # fmt: skip
    known = {p["pair_id"] for p in pairs}
    if len(known) < len(pairs):
        raise UserError(f"{reports_path}: study_id values repeat; each row must be one rated report")
    notes_rows = read_rating_csv(path)
    require_columns(notes_rows, ["report_id", "error_type", *RADEVALX_COUNTS], path)
    ratings, seen, unmatched = [], set(), 0
    for i, row in enumerate(notes_rows.iter_rows(named=True)):
        where, pid = f"{path} row {i + 2}", str(row["report_id"])
        significance = str(row["error_type"]).strip().lower()
        if significance not in (SIG, INSIG):
            raise UserError(f"{where}: error_type must be significant or insignificant, got {row['error_type']!r}")
        if (pid, significance) in seen:
            raise UserError(f"{where}: report {pid} has a second {significance} row")
        seen.add((pid, significance))
        if pid not in known:
            unmatched += 1
            continue
        for column, category in zip(RADEVALX_COUNTS, RADEVALX_CATEGORIES):
            ratings.append(error_row(pid, "0", category, significance, error_count(row[column], f"{where} {column}")))
    types: dict[str, set[str]] = {}
    for pid, significance in seen:
        types.setdefault(pid, set()).add(significance)
    half = sorted(pid for pid, kinds in types.items() if pid in known and len(kinds) < 2)
    if half:
        raise UserError(
            f"{path}: report(s) {half[:5]} have one error_type row only; each rated report needs a significant and an "
            "insignificant row (a missing row is not zero errors)"
        )
    rows_or_fail(ratings, path)
    rated = {r["pair_id"] for r in ratings}
    notes = {"rows_without_pair": unmatched, "pairs_without_rating": sum(p not in rated for p in known)}
    return RatingsDataset("radevalx", table_of(pairs, PAIR_INFO_SCHEMA), table_of(ratings, RATINGS_SCHEMA), notes)
