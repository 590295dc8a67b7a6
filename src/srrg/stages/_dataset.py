"""Arguments and input reading shared by the dataset commands."""

from __future__ import annotations

import argparse
from typing import Any

from srrg.stages import _args


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in", dest="inp", metavar="TABLE", required=True, help="normalized.parquet of `srrg normalize`"
    )
    parser.add_argument(
        "--out-dir", required=True, help="dataset folder (holds plan.json, <split>/part-NNNNN.parquet, manifest.json)"
    )
    _args.config(parser, "dataset")


def check_paths(args: argparse.Namespace, shard: tuple[str, int] | None = None) -> None:
    """The dataset folder must not be, or hold, the input table, nor its split folders, which are
    written and pruned of shards no longer planned, at any depth (docs/cli.md). A shard job
    (`shard`: split, index) shares its split folder with the shard jobs running beside it, so it
    removes the stale temporary files of its own shard and checksum only, never their live ones."""
    from pathlib import Path

    from srrg.dataset import checksum_path, shard_name
    from srrg.io import remove_stale_temps
    from srrg.settings.splits import SPLITS

    splits = {f"--out-dir ({s} split)": str(Path(args.out_dir, s)) for s in SPLITS}
    _args.check_outputs({"--in": args.inp}, folders={"--out-dir": args.out_dir}, trees=splits, clean=shard is None)
    if shard is not None:
        path = Path(args.out_dir, shard[0], shard_name(shard[1])).resolve()
        for own in (path, checksum_path(path)):
            remove_stale_temps(own, folder=False)


def dataset_config(args: argparse.Namespace) -> Any:
    """The DatasetConfig of a dataset command's --config."""
    from srrg.config import stage_config
    from srrg.settings.dataset import DatasetConfig

    return stage_config(args.config, DatasetConfig, "dataset")
