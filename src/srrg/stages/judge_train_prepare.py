"""Pairs are split by case, so no case is in two splits; heldout/ holds the files the tuned judge
and the zero-shot metrics are scored on (docs/judge_train.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "ratings dataset -> judge training examples (split by case) and the held-out pairs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.dataset_arguments(parser)
    parser.add_argument("--analyses", help="table with pair_id, analysis (GREEN-style explanation targets)")
    parser.add_argument("--out-dir", required=True, help="folder for examples.parquet, prepare.json and heldout/")
    _args.config(parser, "judge_train.train")


def run(args: argparse.Namespace) -> None:
    import polars as pl

    from srrg.config import stage_config
    from srrg.io import read_table
    from srrg.judge_train.config import JudgeTrainConfig
    from srrg.judge_train.dataset import build_examples, write_prepared
    from srrg.metaeval.adapters import load_dataset

    _args.check_outputs({"--data": args.data, "--analyses": args.analyses}, folders={"--out-dir": args.out_dir})
    cfg = stage_config(args.config, JudgeTrainConfig, "judge_train.train")
    ds = load_dataset(args.adapter, args.data, **_args.mapping(args.options))
    analyses = read_table(args.analyses).with_columns(pl.col("pair_id").cast(pl.String)) if args.analyses else None
    examples, summary = build_examples(ds, cfg, analyses)
    write_prepared(examples, ds.ratings, summary, args.out_dir)
    print(f"{ds.name}: {examples.height} pairs, cases {summary['cases']}, target {summary['target']}, statuses {summary['pairs']}")
