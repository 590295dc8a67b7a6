"""A shard is a pure function of (input, split, index, config): rerunning gives the same bytes. A shard
job decodes the texts of its own rows only (srrg.dataset.read_shard)."""

from __future__ import annotations

import argparse

from srrg.settings.splits import SPLITS
from srrg.stages import _dataset

HELP = "write one Parquet shard of the dataset (a split and a shard index of plan.json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)
    parser.add_argument("split", choices=SPLITS, help="the split the shard belongs to")
    parser.add_argument("index", type=int, help="shard number within the split, from 0 (part-00000.parquet)")


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.dataset import run_dataset_shard

    _dataset.check_paths(args, shard=(args.split, args.index))
    cfg = _dataset.dataset_config(args)
    print(run_dataset_shard(args.inp, args.out_dir, args.split, args.index, cfg), file=sys.stderr)
