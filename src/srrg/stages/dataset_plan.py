"""The number of shards per split follows from the split sizes; the shard jobs are named from
plan.json, and shards of an earlier, larger plan are removed."""

from __future__ import annotations

import argparse

from srrg.stages import _dataset

HELP = "plan the dataset shards: rows and shard files per split (plan.json)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _dataset.add_common(parser)


def run(args: argparse.Namespace) -> None:
    import json
    import sys
    from pathlib import Path

    from srrg.dataset import PLAN_NAME, plan_input, remove_stale_shards, write_json

    _dataset.check_paths(args)
    rows, plan = plan_input(args.inp, _dataset.dataset_config(args))  # the split column alone is read
    out_dir = Path(args.out_dir)
    stale = remove_stale_shards(out_dir, plan)
    write_json(out_dir / PLAN_NAME, plan)
    print(f"dataset plan: rows in={rows} {json.dumps(plan['splits'])} stale removed={len(stale)}", file=sys.stderr)
