"""Kendall tau-b and Spearman with case-clustered bootstrap CIs, paired tests, count-level P/R/F1,
ensembles, within-case preference agreement and system-ranking agreement, in the GEMA-Score
Table 1 and S-RRG Table 3 layouts; the human ceiling (leave-one-rater-out), per-rater and
per-category tables, tests between metrics and tie-calibrated pairwise accuracy (docs/metaeval.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "correlate per-report metric scores with human ratings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    parser.add_argument(
        "--ratings", help="ratings.parquet of `srrg metaeval-prepare` (omit when the scores hold the rating column)"
    )
    parser.add_argument(
        "--pairs",
        help="pairs.parquet of `srrg metaeval-prepare`: case ids for the clustered bootstrap, systems (optional)",
    )
    parser.add_argument("--out", required=True, help="folder for the tables")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.config import stage_config
    from srrg.metaeval.run import MetaevalConfig, printed_summary, run_metaeval_correlate

    _args.check_outputs(
        {"--scores": args.scores, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out}
    )
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    result = run_metaeval_correlate(args.scores, args.ratings, args.pairs, cfg, args.out)
    if cfg.caveat:
        print(f"note: {cfg.caveat}", file=sys.stderr)
    info = result.info
    print(
        f"{len(info['metrics'])} metrics x {info['n_with_human']} rated pairs "
        f"({info['n_without_human']} without rating), "
        f"resampling {info['resampling']} -> {args.out}"
    )
    print(printed_summary(result))
