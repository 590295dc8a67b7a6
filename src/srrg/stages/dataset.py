"""Without the workflow: the plan, every shard and the manifest in one go (the workflow runs
dataset-plan, dataset-shard and dataset-manifest as separate jobs)."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _dataset

HELP = "write the whole dataset (plan, Parquet shards per split, manifest.json) in one go"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)
    parser.add_argument(
        "--upstream-config",
        metavar="JSON|FILE",
        help="settings of the stages before the dataset, recorded in the manifest",
    )
    _args.progress(parser)


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.dataset import run_dataset

    _dataset.check_paths(args)
    upstream = _args.mapping(args.upstream_config)
    line = run_dataset(args.inp, args.out_dir, _dataset.dataset_config(args), upstream, progress=not args.no_progress)
    print(line, file=sys.stderr)
