"""Pairs are split by case, so no case is in two splits; heldout/ holds the files the tuned judge
and the zero-shot metrics are scored on (docs/judge_train.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "ratings dataset -> judge training examples (split by case) and the held-out pairs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.dataset_arguments(parser)
    parser.add_argument(
        "--analyses",
        help="table with pair_id, analysis (GREEN-style explanation targets), or a teacher judge's per_report table "
        "of `srrg score --metrics gema` (distilled GEMA targets)",
    )
    parser.add_argument("--out-dir", required=True, help="folder for examples.parquet, prepare.json and heldout/")
    _args.config(parser, "judge_train.train")


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.judge_train.dataset import run_judge_train_prepare
    from srrg.settings.judge_train import JudgeTrainConfig

    _args.check_outputs({"--data": args.data, "--analyses": args.analyses}, folders={"--out-dir": args.out_dir})
    cfg = stage_config(args.config, JudgeTrainConfig, "judge_train.train")
    options = _args.mapping(args.options)
    print(run_judge_train_prepare(args.adapter, args.data, options, args.analyses, cfg, args.out_dir))
