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


def check_paths(args: argparse.Namespace) -> None:
    """The dataset folder must not be, or hold, the input table, nor its split folders, which are
    written and pruned of shards no longer planned, at any depth (docs/cli.md)."""
    from pathlib import Path

    from srrg.splits import SPLITS

    splits = {f"--out-dir ({s} split)": str(Path(args.out_dir, s)) for s in SPLITS}
    _args.check_outputs({"--in": args.inp}, folders={"--out-dir": args.out_dir}, trees=splits)


def dataset_config(args: argparse.Namespace) -> Any:
    """The DatasetConfig of a dataset command's --config."""
    from srrg.config import stage_config
    from srrg.dataset import DatasetConfig

    return stage_config(args.config, DatasetConfig, "dataset")
