"""The RaTE-Eval reader (docs/metaeval.md): the paragraph-level human ratings as a ratings table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from srrg.errors import UserError
from srrg.metaeval.readers.common import (
    PAIR_INFO_SCHEMA,
    RATINGS_SCHEMA,
    RatingsDataset,
    rating_row,
    read_rating_csv,
    require_columns,
    rows_or_fail,
    table_of,
)
from srrg.settings.metaeval import RateEvalOptions


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
    df = read_rating_csv(path)
    require_columns(df, [c for c in (reference_col, candidate_col, score_col, rater_col) if c], path)
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
PUBLISHED_SPLIT = {"rate_train": "train", "rate_test": "test"}  # file stem -> its split
RATE_EVAL_SCALE = (0.0, 4.5)


def read_rate_eval(path: str | Path, options: RateEvalOptions = RateEvalOptions()) -> RatingsDataset:
    """RaTE-Eval paragraph-level human rating (Hugging Face Angelakeke/RaTE-Eval, CC-BY-4.0):
    `Task2_paragraph_rate/rate_train.csv` and `rate_test.csv`, one row per (gt_report,
    similar_report) pair with the radiologists' `Score` (0-4.5 in 0.25 steps; the released value is
    already aggregated, so there is one rater).

    Layout: the dataset's file tree on Hugging Face (Task2_paragraph_rate/rate_{train,test}.csv)
    and a public correlation script that reads rate_test.csv's gt_report / similar_report / Score
    columns (found by content search; its repository is not named in the index, docs/metaeval.md).
    path: one of the CSVs, or the Task2_paragraph_rate folder (its rate_train.csv and rate_test.csv
    by those published names, so a stray copy beside them is never read; pair ids
    `<file stem>:<row>`). A score outside 0-4.5 (or not finite) is an error naming its row.
    The folder's two files are the published split (RatingsDataset.splits: each pair's file, train
    or test), which judge fine-tuning uses (judge_train.split_by); one CSV carries none.
    options: the column names (RateEvalOptions; the published ones by default)."""
    path, score_col = Path(path), options.score_col
    files = [path / n for n in RATE_EVAL_FILES if (path / n).is_file()] if path.is_dir() else [path]
    if not files:
        raise UserError(f"{path}: neither {' nor '.join(RATE_EVAL_FILES)} (the published Task2_paragraph_rate files)")
    pairs, ratings, unscored, splits = [], [], 0, {}
    low, high = RATE_EVAL_SCALE
    for f in files:
        prefix = f"{f.stem}:" if path.is_dir() else ""
        columns = (options.reference_col, options.candidate_col, score_col)
        p, r, u = read_scored_csv(f, "rate_eval", *columns, prefix=prefix)
        for rating in r:
            if not (math.isfinite(rating["value"]) and low <= rating["value"] <= high):
                row = int(rating["pair_id"].removeprefix(prefix)) + 2
                raise UserError(f"{f} row {row}: {score_col} must lie in {low:g}-{high:g}, got {rating['value']!r}")
        pairs, ratings, unscored = pairs + p, ratings + r, unscored + u
        if path.is_dir():
            splits.update((pair["pair_id"], PUBLISHED_SPLIT[f.stem]) for pair in p)
    rows_or_fail(ratings, path)
    notes = {"pairs_without_rating": unscored}
    pair_table, rating_table = table_of(pairs, PAIR_INFO_SCHEMA), table_of(ratings, RATINGS_SCHEMA)
    return RatingsDataset("rate_eval", pair_table, rating_table, notes, splits)
