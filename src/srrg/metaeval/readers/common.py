"""What every ratings reader (srrg.metaeval.readers) gives and shares: one long ratings table plus
the rated pairs (RatingsDataset), the row and validation helpers, and the human score of a pair.

Long table (RATINGS_SCHEMA), one row per rater judgement:
  pair_id, rater, kind ("rating" | "errors"), category ("" for ratings; a..f for the GREEN/ReXVal
  error categories; dataset-specific names otherwise), significance (the dataset's own level, e.g.
  ReXVal "significant" | "insignificant", RadPref "urgent" ... "benign_expected"; "" for ratings),
  value (float: the rating or the error count).
Pairs table: pair_id, reference, candidate (the texts every metric scores), plus where the layout
has them: cluster (the case / study the pair belongs to; the bootstrap resamples clusters),
system (the generator of the candidate) and context (patient context as JSON).

Where each layout was read is in each reader's module (srrg.metaeval.readers.rexval, ...) and in
docs/metaeval.md; srrg.metaeval.readers.load reads a dataset by adapter name. Every reader
fails with a UserError naming the file when it reads no rating at all (nothing measured is an
error), and counts what it skipped in `notes` (written to info.json by `srrg metaeval-prepare`).
A judgement read twice (a rater file or user_id twice, a repeated error row, case or study id), a
value outside the layout's scale, a blank rater or half of a RadEvalX pair is a UserError naming
the file and row, never a sum or a default (docs/metaeval.md, "Duplicates and out-of-range values").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_csv

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
    table; notes: what the reader counted on the way (skipped cases, unrated pairs, ...); splits:
    pair_id -> "train" or "test" where the layout publishes its own split (empty: none)."""

    name: str
    pairs: pl.DataFrame
    ratings: pl.DataFrame
    notes: Mapping[str, Any] = field(default_factory=dict)
    splits: Mapping[str, str] = field(default_factory=dict)


def table_of(rows: list[dict[str, Any]], schema: Mapping[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=dict(schema), orient="row") if rows else pl.DataFrame(schema=dict(schema))


def require_columns(df: pl.DataFrame, columns: list[str], source: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UserError(f"{source}: missing column(s) {missing}; found {df.columns} (set the adapter's column options)")


def read_rating_csv(path: Path) -> pl.DataFrame:
    """A rating CSV; a file polars cannot parse (ragged rows, bad quoting, not UTF-8) is one line."""
    if not path.is_file():
        raise UserError(f"{path}: no such file (the published layout has it; see docs/metaeval.md)")
    try:
        return read_csv(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"{path}: not a readable CSV table ({reason})") from None


def read_rating_json(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"{path}: no such file (the published layout has it; see docs/metaeval.md)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not valid JSON ({err})") from None


def error_count(value: Any, where: str) -> float:
    """An error count: a finite number >= 0 (a blank cell is not read as zero)."""
    try:
        count = float(value)
    except (TypeError, ValueError):
        count = math.nan
    if not math.isfinite(count) or count < 0:
        raise UserError(f"{where}: an error count must be a number >= 0, got {value!r}")
    return count


def whole_number(value: Any, what: str, where: str) -> int:
    """A whole number >= 0 read from a CSV cell (a blank cell is not rater or study 0)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise UserError(f"{where}: {what} must be a whole number >= 0, got {value!r}")
    return int(number)


def once(seen: dict[Any, str], key: Any, where: str, what: str) -> None:
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


def rows_or_fail(ratings: list[dict[str, Any]], source: Path) -> None:
    if not ratings:
        raise UserError(f"{source}: no rating was read (empty file or no row matches a rated pair); nothing to measure")


def error_row(pair_id: str, rater: str, category: str, significance: str, count: float) -> dict[str, Any]:
    return {
        "pair_id": pair_id, "rater": rater, "kind": ERRORS, "category": category,
        "significance": significance, "value": count,
    }  # fmt: skip


def rating_row(pair_id: str, rater: str, value: float) -> dict[str, Any]:
    return {"pair_id": pair_id, "rater": rater, "kind": RATING, "category": "", "significance": "", "value": value}


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
