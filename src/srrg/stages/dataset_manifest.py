"""manifest.json records counts, statuses, column types and the config (with its hash) that
produced the shards, read back from the shard files themselves."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _dataset

HELP = "write manifest.json of the dataset from its plan and shards"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)
    parser.add_argument(
        "--upstream-config",
        metavar="JSON|FILE",
        help="settings of the stages before the dataset, recorded in the manifest",
    )


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.dataset import run_dataset_manifest

    _dataset.check_paths(args)
    cfg = _dataset.dataset_config(args)
    print(run_dataset_manifest(args.inp, args.out_dir, cfg, _args.mapping(args.upstream_config)), file=sys.stderr)
