"""One cache shard per dataset shard (one job each): every image of the shard's studies decoded
once, at reduced scale where the JPEG allows, into <dataset>/image_cache/<size>px/ (docs/model.md,
"Image cache"); a missing or unreadable image is a recorded status and a log line."""

from __future__ import annotations

import argparse

from srrg.settings.splits import SPLITS
from srrg.stages import _args

HELP = "decode the images of one dataset shard once into the image cache that train and infer read"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset folder (its <split>/part-NNNNN.parquet shards)")
    parser.add_argument("--size", required=True, type=int, help="side of the cached images in pixels")
    parser.add_argument("--image-root", help="folder of relative image_paths (train.data.image_root)")
    _args.progress(parser)
    parser.add_argument("split", choices=SPLITS, help="the split the shard belongs to")
    parser.add_argument("index", type=int, help="shard number within the split, from 0 (part-00000.parquet)")


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.errors import UserError
    from srrg.image_cache import run_image_cache

    _args.require_inputs(folders={"--dataset": args.dataset})
    if args.size < 1 or args.index < 0:
        raise UserError(f"--size must be >= 1 and index >= 0 (got {args.size}, {args.index})")
    line = run_image_cache(args.dataset, args.split, args.index, args.size, args.image_root, not args.no_progress)
    print(line, file=sys.stderr)
