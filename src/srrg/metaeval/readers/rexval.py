"""The ReXVal reader (docs/metaeval.md): PhysioNet rexval-dataset 1.0.0 as a ratings table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srrg.errors import UserError
from srrg.metaeval.readers.common import (
    INSIG,
    PAIR_INFO_SCHEMA,
    RATINGS_SCHEMA,
    SIG,
    RatingsDataset,
    error_count,
    error_row,
    once,
    read_rating_csv,
    require_columns,
    rows_or_fail,
    table_of,
    whole_number,
)
from srrg.metrics.judges.common import CATEGORIES
from srrg.settings.metaeval import RexvalOptions


def _bool(value: Any, where: str) -> bool:
    text = str(value).strip().lower()
    if text in {"true", "1"}:
        return True
    if text in {"false", "0"}:
        return False
    raise UserError(f"{where}: clinically_significant must be True or False, got {value!r}")


def read_rexval(root: str | Path, options: RexvalOptions = RexvalOptions()) -> RatingsDataset:
    """ReXVal (PhysioNet rexval-dataset 1.0.0): 50 studies x 4 candidate types, six radiologists'
    error counts per category (1-6 = GREEN a..f) and clinical significance.

    Layout read in Stanford-AIMI/GREEN (inference/utils.py flatten_df_test_set and
    inference/run_compare_to_rexval.py; inference/total_mean_error_radiologist_categories.csv shows
    the per-rater grid): `50_samples_gt_and_candidates.csv` has study_id (a MIMIC id), gt_report
    and one column per candidate type (radgraph, bertscore, s_emb, bleu);
    `6_valid_raters_per_rater_error_categories.csv` has study_number (the 0-based row of the study
    in the first file), candidate_type, error_category (1-6), rater_index (0-5),
    clinically_significant (True/False), num_errors, with a row for every zero count too.
    options.candidates: candidate columns (default: every column but study_id and gt_report)."""
    root = Path(root)
    reports_path = root / "50_samples_gt_and_candidates.csv"
    errors_path = root / "6_valid_raters_per_rater_error_categories.csv"
    reports = read_rating_csv(reports_path)
    require_columns(reports, ["gt_report"], reports_path)
    names = options.candidates or [c for c in reports.columns if c not in {"study_id", "gt_report"}]
    require_columns(reports, names, reports_path)
    if "study_id" in reports.columns:
        studies: dict[Any, str] = {}
        for i, study in enumerate(reports["study_id"]):
            once(studies, str(study), f"{reports_path} row {i + 2}", f"study_id {study}")
    pairs = [
        {"pair_id": f"{n}:{cand}", "reference": row["gt_report"], "candidate": row[cand], "cluster": str(n),
         "system": cand, "context": json.dumps({"study_id": str(row.get("study_id", ""))})}
        for n, row in enumerate(reports.iter_rows(named=True))
        for cand in names
    ]  # fmt: skip
    known = {p["pair_id"] for p in pairs}
    errors = read_rating_csv(errors_path)
    cols = ["study_number", "candidate_type", "error_category", "rater_index", "clinically_significant", "num_errors"]
    require_columns(errors, cols, errors_path)
    ratings, unmatched, seen = [], 0, {}
    for i, row in enumerate(errors.iter_rows(named=True)):
        where = f"{errors_path} row {i + 2}"
        study = whole_number(row["study_number"], "study_number", where)
        pid = f"{study}:{row['candidate_type']}"
        rater = whole_number(row["rater_index"], "rater_index", where)
        category = whole_number(row["error_category"], "error_category", where)
        if not 1 <= category <= len(CATEGORIES):
            raise UserError(f"{where}: error_category must be 1-6, got {row['error_category']!r}")
        significance = SIG if _bool(row["clinically_significant"], where) else INSIG
        count = error_count(row["num_errors"], f"{where} num_errors")
        what = f"study {study} {row['candidate_type']} rater {rater} category {category} {significance}"
        once(seen, (pid, rater, category, significance), where, what)
        if pid not in known:
            unmatched += 1
            continue
        ratings.append(error_row(pid, str(rater), CATEGORIES[category - 1], significance, count))
    rows_or_fail(ratings, errors_path)
    notes = {"rows_without_pair": unmatched}
    return RatingsDataset("rexval", table_of(pairs, PAIR_INFO_SCHEMA), table_of(ratings, RATINGS_SCHEMA), notes)
