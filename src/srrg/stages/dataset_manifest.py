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
    import json
    import sys
    import time
    from pathlib import Path

    from srrg.config import stage_config
    from srrg.dataset import MANIFEST_NAME, PLAN_NAME, DatasetConfig, build_manifest, count_rows, summarize, write_json

    start = time.perf_counter()
    _dataset.check_paths(args)
    cfg = stage_config(args.config, DatasetConfig, "dataset")
    rows_in = count_rows(args.inp)
    out_dir = Path(args.out_dir)
    plan = json.loads((out_dir / PLAN_NAME).read_text(encoding="utf-8"))
    manifest = build_manifest(out_dir, plan, cfg, _args.mapping(args.upstream_config))
    write_json(out_dir / MANIFEST_NAME, manifest)
    print(summarize(manifest, rows_in, time.perf_counter() - start), file=sys.stderr)
