"""Rating datasets in their published layouts -> one long ratings table plus the rated pairs.

Long table (RATINGS_SCHEMA), one row per rater judgement:
  pair_id, rater, kind ("rating" | "errors"), category ("" for ratings; a..f for the GREEN/ReXVal
  error categories; dataset-specific names otherwise), significance ("significant" |
  "insignificant" | ""), value (float: the rating or the error count).
Pairs table: pair_id, reference, candidate (the texts every metric scores).

Layouts (the datasets are credentialed or not redistributable; tests use invented fixtures):
- ReXVal (PhysioNet): `50_samples_gt_and_candidates.csv` (study_number, gt_report and one column
  per candidate type) and `6_valid_raters_per_rater_error_categories.csv` (study_number,
  candidate_type, error_category 1-6, rater_index, clinically_significant, num_errors).
  Assumption: the reference column is `gt_report` and every other text column is a candidate.
- RadPref (CRIMSON): `preference_data.json` (per case ground_truth_report, C1_report, C2_report;
  a list, or an object keyed by case id) and `radiologist_annotations/user_{1,2,3}.json` (per case
  id, per candidate C1/C2: `rating` 1-5, `finding_errors` (items with `clinical_significance`),
  `missing_findings`). Assumption: annotation files are objects keyed by the same case ids, or
  lists in the order of preference_data.json; an item without `clinical_significance` is significant.
- RaTE-Eval (paragraph task) and RadEvalX: CSV with one row per rated pair. Column names were not
  verifiable offline, so they are options (defaults: RaTE-Eval gt_report / pred_report / score;
  RadEvalX reference / candidate / score with optional rater); check them against your copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import polars as pl

from srrg.errors import UserError
from srrg.metrics.judge_common import CATEGORIES

RATINGS_SCHEMA = {
    "pair_id": pl.String,
    "rater": pl.String,
    "kind": pl.String,
    "category": pl.String,
    "significance": pl.String,
    "value": pl.Float64,
}
PAIRS_SCHEMA = {"pair_id": pl.String, "reference": pl.String, "candidate": pl.String}
RATING, ERRORS = "rating", "errors"
SIG, INSIG = "significant", "insignificant"
# human target -> (filter on kind/significance, lower_is_better)
TARGETS = {
    "rating": (RATING, None, False),
    "errors_total": (ERRORS, None, True),
    "errors_significant": (ERRORS, SIG, True),
    "errors_insignificant": (ERRORS, INSIG, True),
}


@dataclass(frozen=True)
class RatingsDataset:
    name: str
    pairs: pl.DataFrame
    ratings: pl.DataFrame


def _frame(rows: list[dict[str, Any]], schema: Mapping[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=dict(schema), orient="row") if rows else pl.DataFrame(schema=dict(schema))


def _require(df: pl.DataFrame, columns: list[str], source: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UserError(f"{source}: missing column(s) {missing}; found {df.columns} (set the adapter's column options)")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in {"true", "1", "yes", "y", "t", "significant"}


def read_rexval(root: str | Path, id_col: str = "study_number", reference_col: str = "gt_report") -> RatingsDataset:
    """ReXVal: 50 studies x candidate types, per-rater error counts by category and significance."""
    root = Path(root)
    reports_path = root / "50_samples_gt_and_candidates.csv"
    errors_path = root / "6_valid_raters_per_rater_error_categories.csv"
    reports = pl.read_csv(reports_path, infer_schema_length=None)
    _require(reports, [id_col, reference_col], reports_path)
    candidates = [c for c in reports.columns if c not in {id_col, reference_col} and reports[c].dtype == pl.String]
    pairs = [
        {"pair_id": f"{row[id_col]}:{cand}", "reference": row[reference_col], "candidate": row[cand]}
        for row in reports.iter_rows(named=True)
        for cand in candidates
    ]
    errors = pl.read_csv(errors_path, infer_schema_length=None)
    cols = ["study_number", "candidate_type", "error_category", "rater_index", "clinically_significant", "num_errors"]
    _require(errors, cols, errors_path)
    ratings = []
    for row in errors.iter_rows(named=True):
        index = int(row["error_category"]) - 1
        if not 0 <= index < len(CATEGORIES):
            raise UserError(f"{errors_path}: error_category must be 1-6, got {row['error_category']!r}")
        ratings.append(
            {
                "pair_id": f"{row['study_number']}:{row['candidate_type']}",
                "rater": str(row["rater_index"]),
                "kind": ERRORS,
                "category": CATEGORIES[index],
                "significance": SIG if _truthy(row["clinically_significant"]) else INSIG,
                "value": float(row["num_errors"]),
            }
        )
    return RatingsDataset("rexval", _frame(pairs, PAIRS_SCHEMA), _frame(ratings, RATINGS_SCHEMA))


def _cases(obj: Any) -> list[tuple[str, Any]]:
    """(case id, case) from a list (ids from an id field or the position) or an id-keyed object."""
    if isinstance(obj, Mapping):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, list):
        return [(str(c.get("id", c.get("case_id", i))) if isinstance(c, Mapping) else str(i), c) for i, c in enumerate(obj)]
    raise UserError(f"expected a JSON list or object of cases, got {type(obj).__name__}")


def _significance(item: Any) -> str:
    if isinstance(item, Mapping) and "clinical_significance" in item:
        text = str(item["clinical_significance"]).strip().lower()
        return INSIG if text.startswith(("insig", "not", "non", "minor", "false", "no")) else SIG
    return SIG


def read_radpref(root: str | Path, raters: tuple[str, ...] = ("user_1", "user_2", "user_3")) -> RatingsDataset:
    """RadPref: per case two candidates, each rated 1-5 by three radiologists, with their errors."""
    root = Path(root)
    cases = _cases(json.loads((root / "preference_data.json").read_text(encoding="utf-8")))
    pairs, ratings = [], []
    for case_id, case in cases:
        for cand in ("C1", "C2"):
            pairs.append({"pair_id": f"{case_id}:{cand}", "reference": case.get("ground_truth_report"), "candidate": case.get(f"{cand}_report")})
    order = [case_id for case_id, _ in cases]
    for rater in raters:
        path = root / "radiologist_annotations" / f"{rater}.json"
        annotations = json.loads(path.read_text(encoding="utf-8"))
        by_id = dict(_cases(annotations)) if isinstance(annotations, Mapping) else dict(zip(order, annotations))
        for case_id, ann in by_id.items():
            for cand in ("C1", "C2"):
                entry = ann.get(cand) if isinstance(ann, Mapping) else None
                if not isinstance(entry, Mapping):
                    continue
                pid = f"{case_id}:{cand}"
                if entry.get("rating") is not None:
                    ratings.append({"pair_id": pid, "rater": rater, "kind": RATING, "category": "", "significance": "", "value": float(entry["rating"])})
                for category, key in (("finding_errors", "finding_errors"), ("missing_findings", "missing_findings")):
                    items = entry.get(key) or []
                    for significance in (SIG, INSIG):
                        n = sum(1 for item in items if _significance(item) == significance)
                        ratings.append({"pair_id": pid, "rater": rater, "kind": ERRORS, "category": category, "significance": significance, "value": float(n)})
    return RatingsDataset("radpref", _frame(pairs, PAIRS_SCHEMA), _frame(ratings, RATINGS_SCHEMA))


def read_scored_csv(
    path: str | Path,
    name: str,
    reference_col: str,
    candidate_col: str,
    score_col: str,
    id_col: str | None = None,
    rater_col: str | None = None,
) -> RatingsDataset:
    """One row per rated pair (and rater); pairs without an id column are numbered by first row."""
    path = Path(path)
    df = pl.read_csv(path, infer_schema_length=None)
    _require(df, [c for c in (reference_col, candidate_col, score_col, id_col, rater_col) if c], path)
    pair_ids: dict[tuple[str, str], str] = {}
    pairs: dict[str, dict[str, Any]] = {}
    ratings = []
    for row in df.iter_rows(named=True):
        key = (row[reference_col] or "", row[candidate_col] or "")
        pid = str(row[id_col]) if id_col else pair_ids.setdefault(key, str(len(pair_ids)))
        pairs.setdefault(pid, {"pair_id": pid, "reference": key[0], "candidate": key[1]})
        if row[score_col] is not None:
            rater = str(row[rater_col]) if rater_col else "0"
            ratings.append({"pair_id": pid, "rater": rater, "kind": RATING, "category": "", "significance": "", "value": float(row[score_col])})
    return RatingsDataset(name, _frame(list(pairs.values()), PAIRS_SCHEMA), _frame(ratings, RATINGS_SCHEMA))


def read_rate_eval(path: str | Path, reference_col: str = "gt_report", candidate_col: str = "pred_report", score_col: str = "score", id_col: str | None = None) -> RatingsDataset:
    return read_scored_csv(path, "rate_eval", reference_col, candidate_col, score_col, id_col)


def read_radevalx(
    path: str | Path, reference_col: str = "reference", candidate_col: str = "candidate", score_col: str = "score", id_col: str | None = None, rater_col: str | None = None
) -> RatingsDataset:
    return read_scored_csv(path, "radevalx", reference_col, candidate_col, score_col, id_col, rater_col)


ADAPTERS: dict[str, Callable[..., RatingsDataset]] = {
    "rexval": read_rexval,
    "radpref": read_radpref,
    "rate_eval": read_rate_eval,
    "radevalx": read_radevalx,
}


def load_dataset(adapter: str, path: str | Path, **options: Any) -> RatingsDataset:
    """Read a ratings dataset with the named adapter (options are that adapter's column names)."""
    if adapter not in ADAPTERS:
        raise UserError(f"unknown ratings adapter {adapter!r}; available: {sorted(ADAPTERS)}")
    return ADAPTERS[adapter](path, **options)


def human_scores(ratings: pl.DataFrame, target: str) -> tuple[pl.DataFrame, bool]:
    """(pair_id, human) averaged over raters, and whether lower is better. Error targets sum a
    rater's counts over categories first, so each rater gives one total per pair."""
    if target not in TARGETS:
        raise UserError(f"unknown human target {target!r}; use one of {sorted(TARGETS)}")
    kind, significance, lower = TARGETS[target]
    rows = ratings.filter(pl.col("kind") == kind)
    if significance:
        rows = rows.filter(pl.col("significance") == significance)
    per_rater = rows.group_by("pair_id", "rater").agg(pl.col("value").sum())
    return per_rater.group_by("pair_id").agg(pl.col("value").mean().alias("human")).sort("pair_id"), lower


def human_category_counts(ratings: pl.DataFrame, significance: str = SIG) -> pl.DataFrame:
    """pair_id and one column per error category: the count averaged over raters."""
    rows = ratings.filter((pl.col("kind") == ERRORS) & (pl.col("significance") == significance))
    if rows.is_empty():
        return pl.DataFrame(schema={"pair_id": pl.String})
    per_rater = rows.group_by("pair_id", "rater", "category").agg(pl.col("value").sum())
    wide = per_rater.group_by("pair_id", "category").agg(pl.col("value").mean()).pivot(on="category", index="pair_id", values="value")
    return wide.fill_null(0.0).sort("pair_id")
