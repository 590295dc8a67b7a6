"""GEMA-Score Tables 1-2: the metrics of a rating set correlated with its clinically significant
and its clinically insignificant human error counts, side by side (docs/metaeval.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "GEMA Tables 1-2: correlation with significant and insignificant human error counts, side by side"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    parser.add_argument("--ratings", required=True, help="ratings.parquet of `srrg metaeval-prepare`")
    parser.add_argument("--pairs", help="pairs.parquet of `srrg metaeval-prepare` (case ids for the bootstrap)")
    parser.add_argument("--out", required=True, help="folder for table_gema12.{md,csv,tex} and one folder per target")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.gema_tables import run_metaeval_gema
    from srrg.metaeval.run import MetaevalConfig

    _args.check_outputs(
        {"--scores": args.scores, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out}
    )
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    results = run_metaeval_gema(args.scores, args.ratings, args.pairs, cfg, args.out)
    print(f"{len(next(iter(results.values())).info['metrics'])} metrics x {len(results)} error targets -> {args.out}")
