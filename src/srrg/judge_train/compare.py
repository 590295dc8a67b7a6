"""The tuned judge next to the zero-shot judges on the held-out split: one scores table (the tuned
judge's columns carry a suffix) and the meta-evaluation tables of srrg.metaeval over it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.io import read_parquet, read_table, write_parquet
from srrg.metaeval.run import HEADLINE, ID, MetaevalResult, run_metaeval, write_result
from srrg.settings.metaeval import MetaevalConfig


def side_by_side(
    finetuned: pl.DataFrame, zero_shot: pl.DataFrame | None, suffix: str
) -> tuple[pl.DataFrame, list[str]]:
    """Held-out pairs (the tuned judge's rows) with the zero-shot scores joined on, and the headline
    columns to correlate: zero-shot ones as named, tuned ones with the suffix."""
    if ID not in finetuned.columns:
        raise UserError(f"fine-tuned scores need a {ID!r} column; found {finetuned.columns}")
    tuned = finetuned.rename({c: f"{c}{suffix}" for c in finetuned.columns if c != ID})
    metrics = [f"{c}{suffix}" for c in HEADLINE if c in finetuned.columns]
    if zero_shot is None:
        return tuned, metrics
    if ID not in zero_shot.columns:
        raise UserError(f"zero-shot scores need a {ID!r} column; found {zero_shot.columns}")
    clash = sorted(set(zero_shot.columns) & set(tuned.columns) - {ID})
    if clash:
        raise UserError(f"column(s) {clash} exist in both tables; choose another --suffix")
    joined = tuned.join(zero_shot, on=ID, how="left")
    return joined, [c for c in HEADLINE if c in zero_shot.columns] + metrics


def compare(
    finetuned: pl.DataFrame,
    zero_shot: pl.DataFrame | None,
    ratings: pl.DataFrame,
    options: Mapping[str, Any],
    suffix: str,
) -> tuple[pl.DataFrame, MetaevalResult]:
    """Joined scores and the correlation of every headline column with the human ratings (options:
    srrg.settings.metaeval.MetaevalConfig fields; `metrics` is filled in here)."""
    joined, metrics = side_by_side(finetuned, zero_shot, suffix)
    if not metrics:
        raise UserError(f"no headline score column (e.g. vert, green) in the fine-tuned scores: {finetuned.columns}")
    cfg = from_dict(MetaevalConfig, {**options, "metrics": metrics}, "metaeval.correlate")
    return joined, run_metaeval(joined, ratings, cfg)


def run_judge_train_compare(
    finetuned: str, zero_shot: str | None, ratings: str, options: Mapping[str, Any], suffix: str, out_dir: str | Path
) -> MetaevalResult:
    """The judge-train-compare stage: the score tables joined and correlated (compare), written to
    out_dir as per_report.parquet and the meta-evaluation tables."""
    zero = read_table(zero_shot) if zero_shot else None
    joined, result = compare(read_table(finetuned), zero, read_parquet(ratings), options, suffix)
    write_parquet(joined, Path(out_dir) / "per_report.parquet")
    write_result(result, out_dir)
    return result
