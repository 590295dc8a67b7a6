"""A shard is a pure function of (input, split, index, config): rerunning gives the same bytes. A shard
job decodes the texts of its own rows only (srrg.dataset.read_shard)."""

from __future__ import annotations

import argparse

from srrg.splits import SPLITS
from srrg.stages import _dataset

HELP = "write one Parquet shard of the dataset (a split and a shard index of plan.json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)
    parser.add_argument("split", choices=SPLITS, help="the split the shard belongs to")
    parser.add_argument("index", type=int, help="shard number within the split, from 0 (part-00000.parquet)")


def run(args: argparse.Namespace) -> None:
    import sys
    from pathlib import Path

    from srrg.config import stage_config
    from srrg.dataset import DatasetConfig, read_shard, shard_name, write_shard

    _dataset.check_paths(args)
    cfg = stage_config(args.config, DatasetConfig, "dataset")
    part = read_shard(args.inp, args.split, args.index, cfg.rows_per_shard)
    write_shard(part, Path(args.out_dir) / args.split / shard_name(args.index), cfg)
    print(f"dataset shard {args.split}/{shard_name(args.index)}: rows={part.height}", file=sys.stderr)
