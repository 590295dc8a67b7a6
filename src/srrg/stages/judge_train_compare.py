"""Only the held-out pairs are compared, so the tuned judge is never scored on its training data."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "correlation tables of the fine-tuned judge next to the zero-shot metrics (held-out pairs)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--finetuned", required=True, help="per_report.parquet of the tuned judge (`srrg judge-train-score`)"
    )
    parser.add_argument("--zero-shot", help="per_report.parquet of the zero-shot metrics (any superset of the pairs)")
    parser.add_argument("--ratings", required=True, help="heldout/ratings.parquet of `srrg judge-train-prepare`")
    parser.add_argument("--suffix", default="_ft", help="suffix of the tuned judge's columns (default: _ft)")
    parser.add_argument("--out", required=True, help="folder for the tables")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.judge_train.compare import run_judge_train_compare

    _args.check_outputs(
        {"--finetuned": args.finetuned, "--zero-shot": args.zero_shot, "--ratings": args.ratings},
        folders={"--out": args.out},
    )
    options = stage_config(args.config, dict, "metaeval.correlate")  # compare() names the metrics
    result = run_judge_train_compare(args.finetuned, args.zero_shot, args.ratings, options, args.suffix, args.out)
    print(f"{len(result.info['metrics'])} metrics x {result.info['n_with_human']} held-out pairs -> {args.out}")
