"""Counts are over positive findings of all splits; the figure layout follows S-RRG Fig. 5."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "dataset statistics: most frequent findings, probability and severity as CSV and PNG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset folder holding manifest.json")
    parser.add_argument("--out-dir", required=True, help="folder for the CSV tables and PNG figures")
    _args.config(parser, "stats")


def run(args: argparse.Namespace) -> None:
    import sys
    import time

    from srrg.config import stage_config
    from srrg.settings.stats import StatsConfig
    from srrg.stats import run_stats

    cfg = stage_config(args.config, StatsConfig, "stats")
    _args.check_outputs({"--dataset": args.dataset}, folders={"--out-dir": args.out_dir})
    start = time.perf_counter()
    line = run_stats(args.dataset, args.out_dir, cfg)
    print(f"stats: {line} | {time.perf_counter() - start:.1f}s", file=sys.stderr)
