"""The number of shards per split follows from the split sizes; the shard jobs are named from
plan.json, and shards of an earlier, larger plan are removed."""

from __future__ import annotations

import argparse

from srrg.stages import _dataset

HELP = "plan the dataset shards: rows and shard files per split (plan.json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.dataset import run_dataset_plan

    _dataset.check_paths(args)
    print(run_dataset_plan(args.inp, args.out_dir, _dataset.dataset_config(args)), file=sys.stderr)
