"""LLM judges are too slow for a whole test split: they score the first N predictions by study id
(deterministic, so a rerun judges the same studies)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "the first N predictions of a run (by study id) as refs/hyps files for the judges"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--predictions", required=True, help="pairs or predictions table of `srrg infer` (Parquet, JSONL or CSV)"
    )
    parser.add_argument("--limit", type=int, default=0, help="keep the first N predictions by study id (0: all)")
    parser.add_argument("--ref-col", default="reference", help="column of the reference reports (default: reference)")
    parser.add_argument("--hyp-col", default="raw", help="column of the generated reports (default: raw)")
    parser.add_argument("--out-dir", required=True, help="folder for refs.parquet and hyps.parquet")


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.errors import UserError
    from srrg.metaeval.prepare import run_judge_subset

    _args.check_outputs({"--predictions": args.predictions}, folders={"--out-dir": args.out_dir})
    if args.limit < 0:
        raise UserError(f"--limit {args.limit}: must be 0 (all) or a positive number of predictions")
    line = run_judge_subset(args.predictions, args.limit, args.ref_col, args.hyp_col, Path(args.out_dir))
    print(f"srrg judge-subset: {line}")
