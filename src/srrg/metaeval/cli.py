"""`srrg correlate`: meta-evaluation of metrics against human (or LLM-proxy) ratings.

  srrg correlate prepare --adapter rexval --data DIR --out-dir D       # dataset -> refs/hyps/ratings
  srrg correlate prepare --predictions preds.parquet --limit 8 --out-dir D   # a subset of predictions
  srrg score --refs D/refs.parquet --hyps D/hyps.parquet --metrics ... --out S  # (lead's command)
  srrg correlate run --scores S/per_report.parquet --ratings D/ratings.parquet --out R --config JSON
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

from srrg.io import load_config_arg, read_table, write_parquet
from srrg.metaeval.adapters import ADAPTERS, load_dataset
from srrg.metaeval.run import ID, MetaevalConfig, run_metaeval, write_result


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
        raise ValueError(f"{path}: missing column(s) {missing}; found {df.columns}")
    subset = df.sort(ID).head(limit) if limit > 0 else df.sort(ID)
    write_parquet(subset.select(pl.col(ID).cast(pl.String), pl.col(ref_col).cast(pl.String).fill_null("").alias("report")), out_dir / "refs.parquet")
    write_parquet(subset.select(pl.col(ID).cast(pl.String), pl.col(hyp_col).cast(pl.String).fill_null("").alias("report")), out_dir / "hyps.parquet")
    return f"{subset.height} of {df.height} predictions selected"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srrg correlate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    prep = sub.add_parser("prepare", help="write refs.parquet / hyps.parquet (/ ratings.parquet) for `srrg score`")
    prep.add_argument("--adapter", choices=sorted(ADAPTERS))
    prep.add_argument("--data", help="dataset folder (rexval, radpref) or CSV file (rate_eval, radevalx)")
    prep.add_argument("--options", help="JSON of adapter column options")
    prep.add_argument("--predictions", help="predictions table instead of a ratings dataset")
    prep.add_argument("--limit", type=int, default=0, help="keep the first N predictions by study id (0: all)")
    prep.add_argument("--ref-col", default="reference")
    prep.add_argument("--hyp-col", default="raw")
    prep.add_argument("--out-dir", required=True)
    run = sub.add_parser("run", help="correlate per-report scores with the human ratings")
    run.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    run.add_argument("--ratings", help="ratings.parquet from `prepare` (omit with metaeval.human_column)")
    run.add_argument("--out", required=True, help="output folder for the tables")
    run.add_argument("--config", help="metaeval config slice (JSON inline or a .json/.yaml path)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        if args.action == "prepare":
            out_dir = Path(args.out_dir)
            if bool(args.adapter) == bool(args.predictions):
                parser.error("prepare needs exactly one of --adapter (with --data) or --predictions")
            if args.adapter:
                if not args.data:
                    parser.error("--adapter needs --data")
                line = prepare_from_dataset(args.adapter, args.data, load_config_arg(args.options), out_dir)
            else:
                line = prepare_from_predictions(args.predictions, args.limit, args.ref_col, args.hyp_col, out_dir)
        else:
            cfg = MetaevalConfig.from_dict(load_config_arg(args.config))
            ratings = pl.read_parquet(args.ratings) if args.ratings else None
            result = run_metaeval(read_table(args.scores), ratings, cfg)
            write_result(result, args.out)
            line = f"{len(result.info['metrics'])} metrics x {result.info['n_with_human']} rated pairs -> {args.out}"
            if cfg.caveat:
                print(f"srrg correlate: note: {cfg.caveat}", file=sys.stderr)
    except (ValueError, KeyError, FileNotFoundError) as err:
        print(f"srrg correlate: error: {err}", file=sys.stderr)
        return 1
    print(f"srrg correlate {args.action}: {line} ({time.perf_counter() - start:.1f}s)")
    return 0
