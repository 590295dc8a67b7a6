"""Rating datasets in their published layouts -> one long ratings table plus the rated pairs.

Long table (RATINGS_SCHEMA), one row per rater judgement:
  pair_id, rater, kind ("rating" | "errors"), category ("" for ratings; a..f for the GREEN/ReXVal
  error categories; dataset-specific names otherwise), significance (the dataset's own level, e.g.
  ReXVal "significant" | "insignificant", RadPref "urgent" ... "benign_expected"; "" for ratings),
  value (float: the rating or the error count).
Pairs table: pair_id, reference, candidate (the texts every metric scores), plus where the layout
has them: cluster (the case / study the pair belongs to; the bootstrap resamples clusters),
system (the generator of the candidate) and context (patient context as JSON).

Where each layout was read is in each reader's docstring and in docs/metaeval.md. Every reader
fails with a UserError naming the file when it reads no rating at all (nothing measured is an
error), and counts what it skipped in `notes` (written to info.json by `srrg metaeval-prepare`).
A judgement read twice (a rater file or user_id twice, a repeated error row, case or study id), a
value outside the layout's scale, a blank rater or half of a RadEvalX pair is a UserError naming
the file and row, never a sum or a default (docs/metaeval.md, "Duplicates and out-of-range values").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import list_files, read_csv
from srrg.metrics.judges.common import CATEGORIES

RATINGS_SCHEMA = {
    "pair_id": pl.String,
    "rater": pl.String,
    "kind": pl.String,
    "category": pl.String,
    "significance": pl.String,
    "value": pl.Float64,
}
PAIRS_SCHEMA = {"pair_id": pl.String, "reference": pl.String, "candidate": pl.String}
PAIR_INFO_SCHEMA = {**PAIRS_SCHEMA, "cluster": pl.String, "system": pl.String, "context": pl.String}
RATING, ERRORS = "rating", "errors"
SIG, INSIG = "significant", "insignificant"
# RadPref's clinical significance levels (docs/metaeval.md) and its attribute-error levels
RADPREF_LEVELS = ("urgent", "actionable_not_urgent", "not_actionable_not_urgent", "benign_expected")
ATTRIBUTE_LEVELS = ("significant", "negligible")
# which levels count as clinically significant: the two that call for action (docs/metaeval.md)
SIGNIFICANT = (SIG, "urgent", "actionable_not_urgent")
INSIGNIFICANT = (INSIG, "not_actionable_not_urgent", "benign_expected", "negligible")
# human target -> (kind, significance levels counted or None for all, lower_is_better)
TARGETS: dict[str, tuple[str, tuple[str, ...] | None, bool]] = {
    "rating": (RATING, None, False),
    "errors_total": (ERRORS, None, True),
    "errors_significant": (ERRORS, SIGNIFICANT, True),
    "errors_insignificant": (ERRORS, INSIGNIFICANT, True),
}


@dataclass(frozen=True)
class RatingsDataset:
    """pairs: PAIRS_SCHEMA columns (PAIR_INFO_SCHEMA where the layout has them); ratings: long
    table; notes: what the reader counted on the way (skipped cases, unrated pairs, ...)."""

    name: str
    pairs: pl.DataFrame
    ratings: pl.DataFrame
    notes: Mapping[str, Any] = field(default_factory=dict)


def _frame(rows: list[dict[str, Any]], schema: Mapping[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=dict(schema), orient="row") if rows else pl.DataFrame(schema=dict(schema))


def _require(df: pl.DataFrame, columns: list[str], source: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UserError(f"{source}: missing column(s) {missing}; found {df.columns} (set the adapter's column options)")


def _read_csv(path: Path) -> pl.DataFrame:
    """A rating CSV; a file polars cannot parse (ragged rows, bad quoting, not UTF-8) is one line."""
    if not path.is_file():
        raise UserError(f"{path}: no such file (the published layout has it; see docs/metaeval.md)")
    try:
        return read_csv(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"{path}: not a readable CSV table ({reason})") from None


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"{path}: no such file (the published layout has it; see docs/metaeval.md)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not valid JSON ({err})") from None


def _bool(value: Any, where: str) -> bool:
    text = str(value).strip().lower()
    if text in {"true", "1"}:
        return True
    if text in {"false", "0"}:
        return False
    raise UserError(f"{where}: clinically_significant must be True or False, got {value!r}")


def _count(value: Any, where: str) -> float:
    """An error count: a finite number >= 0 (a blank cell is not read as zero)."""
    try:
        count = float(value)
    except (TypeError, ValueError):
        count = math.nan
    if not math.isfinite(count) or count < 0:
        raise UserError(f"{where}: an error count must be a number >= 0, got {value!r}")
    return count


def _index(value: Any, what: str, where: str) -> int:
    """A whole number >= 0 read from a CSV cell (a blank cell is not rater or study 0)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise UserError(f"{where}: {what} must be a whole number >= 0, got {value!r}")
    return int(number)


def _once(seen: dict[Any, str], key: Any, where: str, what: str) -> None:
    """Refuse a second row (or file) for one key: summing or averaging it in would count a
    judgement twice (docs/metaeval.md, "Duplicates and out-of-range values")."""
    if key in seen:
        raise UserError(f"{where}: {what} repeats {seen[key]}; each may appear once")
    seen[key] = where


def refuse_repeats(frame: pl.DataFrame, columns: list[str], source: Any, what: str) -> None:
    """A table a user brings (scores, ratings, pairs) whose key is on two rows is one line naming
    the key: the repeated row would weigh twice (docs/metaeval.md, "Duplicates and out-of-range
    values")."""
    repeated = frame.filter(pl.struct(columns).is_duplicated()).select(columns).unique(maintain_order=True)
    if repeated.height:
        shown = [row if len(columns) > 1 else row[0] for row in repeated.head(5).rows()]
        raise UserError(f"{source}: {what} {shown} repeat ({repeated.height} in all); each may appear once")


def _rows_or_fail(ratings: list[dict[str, Any]], source: Path) -> None:
    if not ratings:
        raise UserError(f"{source}: no rating was read (empty file or no row matches a rated pair); nothing to measure")


def error_row(pair_id: str, rater: str, category: str, significance: str, count: float) -> dict[str, Any]:
    return {
        "pair_id": pair_id, "rater": rater, "kind": ERRORS, "category": category,
        "significance": significance, "value": count,
    }  # fmt: skip


def rating_row(pair_id: str, rater: str, value: float) -> dict[str, Any]:
    return {"pair_id": pair_id, "rater": rater, "kind": RATING, "category": "", "significance": "", "value": value}


def read_rexval(root: str | Path, candidates: list[str] | None = None) -> RatingsDataset:
    """ReXVal (PhysioNet rexval-dataset 1.0.0): 50 studies x 4 candidate types, six radiologists'
    error counts per category (1-6 = GREEN a..f) and clinical significance.

    Layout read in Stanford-AIMI/GREEN (inference/utils.py flatten_df_test_set and
    inference/run_compare_to_rexval.py; inference/total_mean_error_radiologist_categories.csv shows
    the per-rater grid): `50_samples_gt_and_candidates.csv` has study_id (a MIMIC id), gt_report
    and one column per candidate type (radgraph, bertscore, s_emb, bleu);
    `6_valid_raters_per_rater_error_categories.csv` has study_number (the 0-based row of the study
    in the first file), candidate_type, error_category (1-6), rater_index (0-5),
    clinically_significant (True/False), num_errors, with a row for every zero count too.
    candidates: candidate columns (default: every column but study_id and gt_report)."""
    root = Path(root)
    reports_path = root / "50_samples_gt_and_candidates.csv"
    errors_path = root / "6_valid_raters_per_rater_error_categories.csv"
    reports = _read_csv(reports_path)
    _require(reports, ["gt_report"], reports_path)
    names = candidates or [c for c in reports.columns if c not in {"study_id", "gt_report"}]
    _require(reports, names, reports_path)
    if "study_id" in reports.columns:
        studies: dict[Any, str] = {}
        for i, study in enumerate(reports["study_id"]):
            _once(studies, str(study), f"{reports_path} row {i + 2}", f"study_id {study}")
    pairs = [
        {"pair_id": f"{n}:{cand}", "reference": row["gt_report"], "candidate": row[cand], "cluster": str(n),
         "system": cand, "context": json.dumps({"study_id": str(row.get("study_id", ""))})}
        for n, row in enumerate(reports.iter_rows(named=True))
        for cand in names
    ]  # fmt: skip
    known = {p["pair_id"] for p in pairs}
    errors = _read_csv(errors_path)
    cols = ["study_number", "candidate_type", "error_category", "rater_index", "clinically_significant", "num_errors"]
    _require(errors, cols, errors_path)
    ratings, unmatched, seen = [], 0, {}
    for i, row in enumerate(errors.iter_rows(named=True)):
        where = f"{errors_path} row {i + 2}"
        study = _index(row["study_number"], "study_number", where)
        pid = f"{study}:{row['candidate_type']}"
        rater = _index(row["rater_index"], "rater_index", where)
        category = _index(row["error_category"], "error_category", where)
        if not 1 <= category <= len(CATEGORIES):
            raise UserError(f"{where}: error_category must be 1-6, got {row['error_category']!r}")
        significance = SIG if _bool(row["clinically_significant"], where) else INSIG
        count = _count(row["num_errors"], f"{where} num_errors")
        what = f"study {study} {row['candidate_type']} rater {rater} category {category} {significance}"
        _once(seen, (pid, rater, category, significance), where, what)
        if pid not in known:
            unmatched += 1
            continue
        ratings.append(error_row(pid, str(rater), CATEGORIES[category - 1], significance, count))
    _rows_or_fail(ratings, errors_path)
    notes = {"rows_without_pair": unmatched}
    return RatingsDataset("rexval", _frame(pairs, PAIR_INFO_SCHEMA), _frame(ratings, RATINGS_SCHEMA), notes)


RADPREF_CONTEXT = ("PatientAge", "PatientSex", "Indication", "Comparison", "StudyDescription")
RADPREF_CANDIDATES = ("C1", "C2")


def _radpref_level(item: Any, levels: tuple[str, ...], where: str) -> str:
    value = item.get("clinical_significance") if isinstance(item, Mapping) else None
    if value not in levels:
        raise UserError(f"{where}: clinical_significance must be one of {list(levels)}, got {value!r}")
    return str(value)


def _indexed(obj: Any, where: str) -> list[Any]:
    """The items of a finding_errors / missing_findings object keyed by the finding's index."""
    if obj is None:
        return []
    if not isinstance(obj, Mapping):
        raise UserError(f"{where}: expected an object keyed by finding index, got {type(obj).__name__}")
    for key in obj:
        if not str(key).isdigit():
            raise UserError(f"{where}: key {key!r} is not a finding index")
    return list(obj.values())


def radpref_errors(entry: Mapping[str, Any], pid: str, rater: str, where: str) -> list[dict[str, Any]]:
    """One rater's errors on one candidate: false and missing findings counted per significance
    level (zero counts included, so every rated candidate has a total), attribute errors counted
    per attribute and its significant/negligible level."""
    kinds = ("false_finding", "missing_finding")
    counts: dict[tuple[str, str], float] = {(c, lvl): 0.0 for c in kinds for lvl in RADPREF_LEVELS}
    for item in _indexed(entry.get("finding_errors"), f"{where} finding_errors"):
        kind = item.get("error_type") if isinstance(item, Mapping) else None
        if kind == "false":
            key = ("false_finding", _radpref_level(item, RADPREF_LEVELS, f"{where} finding_errors"))
            counts[key] += 1
        elif kind == "attribute":
            attributes = item.get("attributes")
            if not isinstance(attributes, Mapping) or not attributes:
                raise UserError(f"{where}: an attribute error needs an attributes object, got {attributes!r}")
            for attribute, level in attributes.items():
                if level not in ATTRIBUTE_LEVELS:
                    allowed = list(ATTRIBUTE_LEVELS)
                    raise UserError(f"{where}: attribute {attribute!r} level must be one of {allowed}, got {level!r}")
                key = (f"attribute_{attribute}", str(level))
                counts[key] = counts.get(key, 0.0) + 1
        else:
            raise UserError(f"{where}: finding error_type must be 'false' or 'attribute', got {kind!r}")
    for item in _indexed(entry.get("missing_findings"), f"{where} missing_findings"):
        counts[("missing_finding", _radpref_level(item, RADPREF_LEVELS, f"{where} missing_findings"))] += 1
    return [error_row(pid, rater, c, lvl, n) for (c, lvl), n in counts.items()]


def read_radpref(root: str | Path, raters: list[str] | None = None) -> RatingsDataset:
    """RadPref (CRIMSON repository, MIT): per case two candidates (C1, C2) rated 1-5 by three
    radiologists, with per-finding errors and their clinical significance.

    Layout: rajpurkarlab/CRIMSON README.md names `RadPref/preference_data.json` and
    `RadPref/radiologist_annotations/`; the nesting (below) is the one of the published files as
    reproduced field by field in the project's synthetic layout sample (docs/metaeval.md).
    - preference_data.json: a list of cases with id, ground_truth_report, C1_report, C2_report,
      C1_source/C2_source (the generator, kept as `system`), patient context PatientAge, PatientSex,
      Indication, Comparison, StudyDescription (kept as `context`), and findings lists.
    - radiologist_annotations/<rater>.json: {"user_id": ..., "annotations": {case id: {C1: ..., C2:
      ...}}}; per candidate `rating` (1-5), `finding_errors` and `missing_findings` as objects keyed
      by finding index; a finding error is error_type "false" (with clinical_significance) or
      "attribute" (attributes: name -> significant | negligible). A rater may skip a case.
    raters: annotation file stems to read (default: every .json in radiologist_annotations/)."""
    root = Path(root)
    data_path = root / "preference_data.json"
    cases = _read_json(data_path)
    if not isinstance(cases, list) or not all(isinstance(c, Mapping) and "id" in c for c in cases):
        raise UserError(f"{data_path}: expected a JSON list of cases with an 'id' each")
    pairs, case_ids = [], {}
    for n, case in enumerate(cases):
        where = f"{data_path} case {n} (id {case['id']!r})"
        _once(case_ids, str(case["id"]), where, f"case id {case['id']!r}")
        texts = ("ground_truth_report", *(f"{c}_report" for c in RADPREF_CANDIDATES))
        bad = [k for k in texts if not isinstance(case.get(k, ""), str)]
        if bad:
            raise UserError(f"{where}: {bad[0]} must be a text, got {type(case[bad[0]]).__name__}")
        context = json.dumps({k: case[k] for k in RADPREF_CONTEXT if k in case})
        for cand in RADPREF_CANDIDATES:
            pairs.append({"pair_id": f"{case['id']}:{cand}", "reference": case.get("ground_truth_report"),
                          "candidate": case.get(f"{cand}_report"), "cluster": str(case["id"]),
                          "system": str(case.get(f"{cand}_source", "")), "context": context})  # fmt: skip
    ids = [str(c["id"]) for c in cases]
    folder = root / "radiologist_annotations"
    paths = [folder / f"{r}.json" for r in raters] if raters else list_files(folder, suffix=".json")
    if not paths:
        raise UserError(f"{folder}: no rater file (<rater>.json); the published layout has user_1.json ... user_3.json")
    ratings: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    twice = sorted({r for r in raters or [] if raters.count(r) > 1})
    if twice:
        raise UserError(f"option raters names {twice} twice; each rater file is read once")
    users: dict[Any, str] = {}
    for path in paths:
        doc = _read_json(path)
        if not isinstance(doc, Mapping) or not isinstance(doc.get("annotations"), Mapping) or "user_id" not in doc:
            raise UserError(f'{path}: expected {{"user_id": ..., "annotations": {{case id: ...}}}}')
        rater, annotations = str(doc["user_id"]), doc["annotations"]
        _once(users, rater, str(path), f"user_id {rater!r} (one radiologist read twice)")
        unknown = [k for k in annotations if str(k) not in ids]
        if unknown:
            raise UserError(f"{path}: case id(s) {unknown[:5]} are not in {data_path.name}")
        if not annotations:
            raise UserError(f"{path}: rater {rater!r} annotated no case of {data_path.name}; nothing to measure")
        skipped[rater] = len(ids) - len(annotations)
        for case_id, ann in annotations.items():
            for cand in RADPREF_CANDIDATES:
                entry = ann.get(cand) if isinstance(ann, Mapping) else None
                if not isinstance(entry, Mapping):
                    raise UserError(f"{path}: case {case_id!r} has no {cand} annotation object")
                pid, where = f"{case_id}:{cand}", f"{path} case {case_id} {cand}"
                rating = entry.get("rating")
                if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not 1 <= rating <= 5:
                    raise UserError(f"{where}: rating must be a number 1-5, got {rating!r}")
                ratings.append(rating_row(pid, rater, float(rating)))
                ratings.extend(radpref_errors(entry, pid, rater, where))
    rated = {r["pair_id"] for r in ratings}
    notes = {"skipped_cases_per_rater": skipped, "pairs_without_rating": sum(p["pair_id"] not in rated for p in pairs)}
    return RatingsDataset("radpref", _frame(pairs, PAIR_INFO_SCHEMA), _frame(ratings, RATINGS_SCHEMA), notes)


def read_scored_csv(
    path: Path,
    name: str,
    reference_col: str,
    candidate_col: str,
    score_col: str,
    rater_col: str | None = None,
    prefix: str = "",
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(pairs, ratings, rows without a score) of a CSV with one rated pair per row; pair ids are
    `<prefix><row>`, clusters the reference text (candidates judged against one report)."""
    df = _read_csv(path)
    _require(df, [c for c in (reference_col, candidate_col, score_col, rater_col) if c], path)
    pairs, ratings, unscored = [], [], 0
    for i, row in enumerate(df.iter_rows(named=True)):
        pid = f"{prefix}{i}"
        ref = row[reference_col] or ""
        candidate = row[candidate_col] or ""
        pair = {"pair_id": pid, "reference": ref, "candidate": candidate, "cluster": ref, "system": "", "context": "{}"}
        pairs.append(pair)
        if row[score_col] is None:
            unscored += 1
            continue
        try:
            value = float(row[score_col])
        except (TypeError, ValueError):
            raise UserError(f"{path} row {i + 2}: {score_col} is not a number: {row[score_col]!r}") from None
        ratings.append(rating_row(pid, str(row[rater_col]) if rater_col else name, value))
    return pairs, ratings, unscored


RATE_EVAL_FILES = ("rate_train.csv", "rate_test.csv")
RATE_EVAL_SCALE = (0.0, 4.5)


def read_rate_eval(
    path: str | Path, reference_col: str = "gt_report", candidate_col: str = "similar_report", score_col: str = "Score"
) -> RatingsDataset:
    """RaTE-Eval paragraph-level human rating (Hugging Face Angelakeke/RaTE-Eval, CC-BY-4.0):
    `Task2_paragraph_rate/rate_train.csv` and `rate_test.csv`, one row per (gt_report,
    similar_report) pair with the radiologists' `Score` (0-4.5 in 0.25 steps; the released value is
    already aggregated, so there is one rater).

    Layout: the dataset's file tree on Hugging Face (Task2_paragraph_rate/rate_{train,test}.csv)
    and a public correlation script that reads rate_test.csv's gt_report / similar_report / Score
    columns (found by content search; its repository is not named in the index, docs/metaeval.md).
    path: one of the CSVs, or the Task2_paragraph_rate folder (its rate_train.csv and rate_test.csv
    by those published names, so a stray copy beside them is never read; pair ids
    `<file stem>:<row>`). A score outside 0-4.5 (or not finite) is an error naming its row."""
    path = Path(path)
    files = [path / n for n in RATE_EVAL_FILES if (path / n).is_file()] if path.is_dir() else [path]
    if not files:
        raise UserError(f"{path}: neither {' nor '.join(RATE_EVAL_FILES)} (the published Task2_paragraph_rate files)")
    pairs, ratings, unscored = [], [], 0
    low, high = RATE_EVAL_SCALE
    for f in files:
        prefix = f"{f.stem}:" if path.is_dir() else ""
        p, r, u = read_scored_csv(f, "rate_eval", reference_col, candidate_col, score_col, prefix=prefix)
        for rating in r:
            if not (math.isfinite(rating["value"]) and low <= rating["value"] <= high):
                row = int(rating["pair_id"].removeprefix(prefix)) + 2
                raise UserError(f"{f} row {row}: {score_col} must lie in {low:g}-{high:g}, got {rating['value']!r}")
        pairs, ratings, unscored = pairs + p, ratings + r, unscored + u
    _rows_or_fail(ratings, path)
    notes = {"pairs_without_rating": unscored}
    return RatingsDataset("rate_eval", _frame(pairs, PAIR_INFO_SCHEMA), _frame(ratings, RATINGS_SCHEMA), notes)


RADEVALX_COUNTS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
RADEVALX_CATEGORIES = (*CATEGORIES, "g", "h")  # one..six are the GREEN/ReXVal a..f


def read_radevalx(path: str | Path, reports: str | None = None) -> RatingsDataset:
    """RadEvalX: radiologists' error counts per report in eight categories, significant and
    insignificant. The layout was read in a public correlation script that reads the real files
    (compute_llm_metrics_raters.py, found by content search; the index does not name its
    repository, docs/metaeval.md): the annotation CSV has `report_id`, `error_type` (significant |
    insignificant) and counts `one` .. `eight` (one..six = GREEN a..f, seven and eight kept as g,
    h); the reports CSV (read by the same project as `radevalx_report.csv`) has `study_id`,
    `ground_truth`, `candidate_report`, joined on report_id = study_id. The published file names
    are not in that code, so both paths are given: path = the annotation CSV, reports = the
    reports CSV. A report with two rows of one error_type is an error (no rater column is known)."""
    if not reports:
        raise UserError("radevalx: pass option reports (the CSV with study_id, ground_truth, candidate_report)")
    path, reports_path = Path(path), Path(reports)
    frame = _read_csv(reports_path)
    _require(frame, ["study_id", "ground_truth", "candidate_report"], reports_path)
    pairs = [
        {"pair_id": str(r["study_id"]), "reference": r["ground_truth"] or "", "candidate": r["candidate_report"] or "",
         "cluster": str(r["study_id"]), "system": "", "context": "{}"}
        for r in frame.iter_rows(named=True)
    ]  # fmt: skip
    known = {p["pair_id"] for p in pairs}
    if len(known) < len(pairs):
        raise UserError(f"{reports_path}: study_id values repeat; each row must be one rated report")
    notes_rows = _read_csv(path)
    _require(notes_rows, ["report_id", "error_type", *RADEVALX_COUNTS], path)
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
            ratings.append(error_row(pid, "0", category, significance, _count(row[column], f"{where} {column}")))
    types: dict[str, set[str]] = {}
    for pid, significance in seen:
        types.setdefault(pid, set()).add(significance)
    half = sorted(pid for pid, kinds in types.items() if pid in known and len(kinds) < 2)
    if half:
        raise UserError(
            f"{path}: report(s) {half[:5]} have one error_type row only; each rated report needs a significant and an "
            "insignificant row (a missing row is not zero errors)"
        )
    _rows_or_fail(ratings, path)
    rated = {r["pair_id"] for r in ratings}
    notes = {"rows_without_pair": unmatched, "pairs_without_rating": sum(p not in rated for p in known)}
    return RatingsDataset("radevalx", _frame(pairs, PAIR_INFO_SCHEMA), _frame(ratings, RATINGS_SCHEMA), notes)


RADEVAL_FILE = "reader_study_final_with_annotationsv3.csv"
RADEVAL_SLOTS = tuple(f"{k}{i}" for k in ("prediction", "annotation") for i in (1, 2, 3))
RADEVAL_COLUMNS = ("annotator", "type", "ground_truth", "images_path", *RADEVAL_SLOTS)
RADEVAL_CATEGORIES = (*CATEGORIES, "g")  # 1-6 as GREEN a..f; 7: inarticulate report (grammar, readability)
_SEVERITY_LINE = re.compile(r"[^A-Za-z0-9]*(significant|insignificant)[^A-Za-z0-9]*", re.I)
_COUNT_LINE = re.compile(r"\s*([1-7])[.)]\s+[^:]*:\s*([0-9]+)\s*[.;]?\s*")


def radeval_counts(cell: str | None) -> dict[tuple[str, str], float] | None:
    """(category, significance) -> count of one annotation cell: a `Significant` and an
    `Insignificant` header, each followed by seven numbered lines `k. <category>: <count>`. None
    when the cell is blank or any line, header or count is missing or unreadable (never zeros)."""
    if not cell or not cell.strip():
        return None
    counts: dict[tuple[str, str], float] = {}
    current = None
    for line in filter(str.strip, cell.splitlines()):
        header, item = _SEVERITY_LINE.fullmatch(line), _COUNT_LINE.fullmatch(line)
        if header:
            current = header.group(1).lower()
            if any(sig == current for _, sig in counts):
                return None
        elif item and current is not None:
            key = (RADEVAL_CATEGORIES[int(item.group(1)) - 1], current)
            if key in counts:
                return None
            counts[key] = float(item.group(2))
        else:
            return None
    return counts if len(counts) == 2 * len(RADEVAL_CATEGORIES) else None


def read_radeval_expert(path: str | Path) -> RatingsDataset:
    """RadEval expert dataset (Hugging Face IAMJB/RadEvalExpertDataset, MIT; linked from
    jbdel/RadEval README.md): `reader_study_final_with_annotationsv3.csv`, 208 rows of annotator,
    type (report section), ground_truth, images_path and three candidates prediction1..3 with one
    radiologist's annotation1..3 each.

    Layout: the column names as public download and evaluation scripts read them (found by content
    search, docs/metaeval.md); the annotation cell as a public adapter parses it: a Significant and
    an Insignificant header, each with seven numbered `k. <category>: <count>` lines (1-6 the GREEN
    categories a..f, 7 an inarticulate report). A blank or unreadable cell is not a zero: its pair
    has no rating and is counted in notes. Pair ids `<row>:<slot>`, clusters images_path (one
    image's candidates), rater the annotator, system the candidate slot."""
    path = Path(path)
    path = path / RADEVAL_FILE if path.is_dir() else path
    frame = _read_csv(path)
    _require(frame, list(RADEVAL_COLUMNS), path)
    pairs, ratings, unreadable = [], [], 0
    for i, row in enumerate(frame.iter_rows(named=True)):
        context = json.dumps({"type": row["type"], "images_path": row["images_path"]})
        for slot in (1, 2, 3):
            pid = f"{i}:{slot}"
            pairs.append({
                "pair_id": pid, "reference": row["ground_truth"] or "", "candidate": row[f"prediction{slot}"] or "",
                "cluster": str(row["images_path"]), "system": f"prediction{slot}", "context": context,
            })  # fmt: skip
            counts = radeval_counts(row[f"annotation{slot}"])
            if counts is None:
                unreadable += 1
                continue
            ratings.extend(error_row(pid, str(row["annotator"]), c, sig, n) for (c, sig), n in counts.items())
    _rows_or_fail(ratings, path)
    notes = {"unreadable_annotation_cells": unreadable, "pairs_without_rating": unreadable}
    return RatingsDataset("radeval_expert", _frame(pairs, PAIR_INFO_SCHEMA), _frame(ratings, RATINGS_SCHEMA), notes)


ADAPTERS: dict[str, Callable[..., RatingsDataset]] = {
    "rexval": read_rexval,
    "radpref": read_radpref,
    "rate_eval": read_rate_eval,
    "radevalx": read_radevalx,
    "radeval_expert": read_radeval_expert,
}


def load_dataset(adapter: str, path: str | Path, **options: Any) -> RatingsDataset:
    """Read a ratings dataset with the named adapter (options are that adapter's keyword options)."""
    if adapter not in ADAPTERS:
        raise UserError(f"unknown ratings adapter {adapter!r}; available: {sorted(ADAPTERS)}")
    try:
        return ADAPTERS[adapter](path, **options)
    except TypeError as err:
        raise UserError(f"{adapter} options: {err}") from None


def human_scores(ratings: pl.DataFrame, target: str) -> tuple[pl.DataFrame, bool]:
    """(pair_id, human) averaged over raters, and whether lower is better. Error targets sum a
    rater's counts of the counted significance levels over categories first (the other levels
    count 0), so every rater who judged a pair gives one total, zero included."""
    if target not in TARGETS:
        raise UserError(f"unknown human target {target!r}; use one of {sorted(TARGETS)}")
    kind, levels, lower = TARGETS[target]
    rows = ratings.filter(pl.col("kind") == kind)
    if levels is not None:
        counted = pl.col("significance").is_in(list(levels))
        rows = rows.with_columns(pl.when(counted).then(pl.col("value")).otherwise(0.0))
    per_rater = rows.group_by("pair_id", "rater").agg(pl.col("value").sum())
    return per_rater.group_by("pair_id").agg(pl.col("value").mean().alias("human")).sort("pair_id"), lower


def human_category_counts(ratings: pl.DataFrame, levels: tuple[str, ...] = SIGNIFICANT) -> pl.DataFrame:
    """pair_id and one column per error category: the count at the given levels averaged over the
    raters who judged the pair (any error row); a rater without a row for a category counts 0 there,
    as in human_scores (RadPref writes attribute rows only where an attribute error was found)."""
    errors = ratings.filter(pl.col("kind") == ERRORS)
    rows = errors.filter(pl.col("significance").is_in(list(levels)))
    if rows.is_empty():
        return pl.DataFrame(schema={"pair_id": pl.String})
    per_rater = rows.group_by("pair_id", "rater", "category").agg(pl.col("value").sum())
    grid = (
        errors.select("pair_id", "rater")
        .unique()
        .join(per_rater.select("category").unique(), how="cross")
        .join(per_rater, on=["pair_id", "rater", "category"], how="left")
        .with_columns(pl.col("value").fill_null(0.0))
    )
    wide = (
        grid.group_by("pair_id", "category")
        .agg(pl.col("value").mean())
        .pivot(on="category", index="pair_id", values="value", sort_columns=True)
    )
    return wide.sort("pair_id")


def pair_clusters(pairs: pl.DataFrame) -> dict[str, str]:
    """pair_id -> cluster id (the pair itself when the layout has no cluster)."""
    clusters = pairs["cluster"] if "cluster" in pairs.columns else pairs["pair_id"]
    return {p: (c if c is not None else p) for p, c in zip(pairs["pair_id"], clusters)}
