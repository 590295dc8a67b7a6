"""Files for meta-evaluation: a ratings dataset, or the first predictions of a run, as the
refs/hyps tables that `srrg score` reads (commands: srrg metaeval-prepare, srrg judge-subset)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet, write_text
from srrg.metaeval.readers.common import PAIR_INFO_SCHEMA
from srrg.metaeval.readers.load import load_dataset
from srrg.metaeval.run import ID
from srrg.metrics.context import CONTEXT_FIELDS, patient_context
from srrg.settings.model import SAMPLE_ID


def context_columns(pairs: pl.DataFrame) -> list[pl.Series]:
    """The patient context of each pair (its `context` JSON, srrg.metrics.context) as columns age,
    sex, indication ("" where a pair has none): those a layout has for some pair, none otherwise."""
    contexts = [patient_context(json.loads(c) if c else {}) for c in pairs["context"]]
    return [
        pl.Series(f, [c.get(f, "") for c in contexts], pl.String)
        for f in CONTEXT_FIELDS
        if any(f in c for c in contexts)
    ]


def run_metaeval_prepare(adapter: str, data: str, options: dict, out_dir: Path) -> str:
    """refs/hyps for `srrg score` (refs with the pairs' patient context columns where the layout
    has one: `srrg score` passes them to metrics that read context), ratings.parquet, pairs.parquet
    (clusters, systems, context, the published split) and info.json (pair, rater and rating counts,
    what the reader skipped)."""
    ds = load_dataset(adapter, data, **options)
    pairs = ds.pairs.with_columns(pl.col("reference").fill_null(""), pl.col("candidate").fill_null(""))
    for column, dtype in PAIR_INFO_SCHEMA.items():
        if column not in pairs.columns:
            default = pl.col("pair_id") if column == "cluster" else pl.lit("")
            pairs = pairs.with_columns(default.cast(dtype).alias(column))
    context = context_columns(pairs)
    for name, text in (("refs", "reference"), ("hyps", "candidate")):
        frame = pairs.select(pl.col("pair_id").alias(ID), pl.col(text).alias("report"))
        write_parquet(frame.with_columns(context) if name == "refs" else frame, out_dir / f"{name}.parquet")
    # the rating set's published split (train/test; "" where it publishes none): VERT's ensembles use it
    split = pl.Series("split", [ds.splits.get(p, "") for p in pairs["pair_id"]], pl.String)
    write_parquet(pairs.select(list(PAIR_INFO_SCHEMA)).with_columns(split), out_dir / "pairs.parquet")
    write_parquet(ds.ratings, out_dir / "ratings.parquet")
    rated = set(ds.ratings["pair_id"])
    info = {
        "dataset": ds.name,
        "n_pairs": pairs.height,
        "n_clusters": pairs["cluster"].n_unique(),
        "n_raters": ds.ratings["rater"].n_unique(),
        "n_rating_rows": ds.ratings.height,
        "n_pairs_without_rating": sum(p not in rated for p in pairs["pair_id"]),
        "context_columns": [s.name for s in context],
        **{k: v for k, v in ds.notes.items() if k != "pairs_without_rating"},
    }
    write_text(out_dir / "info.json", json.dumps(info, indent=2) + "\n")
    return (
        f"{ds.name}: {info['n_pairs']} pairs in {info['n_clusters']} cases, {info['n_raters']} raters, "
        f"{info['n_rating_rows']} rating rows, {info['n_pairs_without_rating']} pairs without rating"
    )


def run_judge_subset(path: str, limit: int, ref_col: str, hyp_col: str, out_dir: Path) -> str:
    """The first `limit` predictions by study id (deterministic), for judges that are too slow for
    the whole test split. Per-image predictions (a sample_id column, infer.samples: image) are
    keyed by their sample_id, written as the files' id."""
    df = read_table(path)
    missing = [c for c in (ID, ref_col, hyp_col) if c not in df.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {missing}; found {df.columns}")
    key = SAMPLE_ID if SAMPLE_ID in df.columns else ID
    subset = df.sort(key).head(limit) if limit > 0 else df.sort(key)
    for col, name in ((ref_col, "refs.parquet"), (hyp_col, "hyps.parquet")):
        text = pl.col(col).cast(pl.String).fill_null("").alias("report")
        write_parquet(subset.select(pl.col(key).cast(pl.String).alias(ID), text), out_dir / name)
    return f"{subset.height} of {df.height} predictions selected"
