"""Files for meta-evaluation: a ratings dataset, or the first predictions of a run, as the
refs/hyps tables that `srrg score` reads (commands: srrg metaeval-prepare, srrg judge-subset)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet
from srrg.metaeval.adapters import load_dataset
from srrg.metaeval.run import ID


def prepare_from_dataset(adapter: str, data: str, options: dict, out_dir: Path) -> str:
    ds = load_dataset(adapter, data, **options)
    pairs = ds.pairs.with_columns(pl.col("reference").fill_null(""), pl.col("candidate").fill_null(""))
    write_parquet(pairs.select(pl.col("pair_id").alias(ID), pl.col("reference").alias("report")), out_dir / "refs.parquet")
    write_parquet(pairs.select(pl.col("pair_id").alias(ID), pl.col("candidate").alias("report")), out_dir / "hyps.parquet")
    write_parquet(ds.ratings, out_dir / "ratings.parquet")
    return f"{ds.name}: {pairs.height} pairs, {ds.ratings.height} rating rows"


def prepare_from_predictions(path: str, limit: int, ref_col: str, hyp_col: str, out_dir: Path) -> str:
    """The first `limit` predictions by study id (deterministic), for judges that are too slow for
    the whole test split."""
    df = read_table(path)
    missing = [c for c in (ID, ref_col, hyp_col) if c not in df.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {missing}; found {df.columns}")
    subset = df.sort(ID).head(limit) if limit > 0 else df.sort(ID)
    write_parquet(subset.select(pl.col(ID).cast(pl.String), pl.col(ref_col).cast(pl.String).fill_null("").alias("report")), out_dir / "refs.parquet")
    write_parquet(subset.select(pl.col(ID).cast(pl.String), pl.col(hyp_col).cast(pl.String).fill_null("").alias("report")), out_dir / "hyps.parquet")
    return f"{subset.height} of {df.height} predictions selected"
