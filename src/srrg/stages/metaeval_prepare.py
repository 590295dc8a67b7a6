"""The pairs go to `srrg score` (refs.parquet, hyps.parquet) and the ratings to
`srrg metaeval-correlate` (ratings.parquet, long format)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "a ratings dataset (ReXVal, RadPref, RaTE-Eval, RadEvalX, RadEval expert) -> pairs to score + ratings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.dataset_arguments(parser)
    parser.add_argument("--out-dir", required=True, help="folder for refs.parquet, hyps.parquet and ratings.parquet")


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.metaeval.prepare import run_metaeval_prepare

    _args.check_outputs({"--data": args.data}, folders={"--out-dir": args.out_dir})

    line = run_metaeval_prepare(args.adapter, args.data, _args.mapping(args.options), Path(args.out_dir))
    print(f"srrg metaeval-prepare: {line}")
