"""GEMA's backbone grid: GEMA-Score Tables 1-2 with a row per judge model, both human error targets
side by side (docs/metaeval.md, "GEMA's backbone grid")."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "GEMA's backbone grid: GEMA Tables 1-2 with a row per judge model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cell",
        nargs=2,
        action="append",
        required=True,
        metavar=("MODEL", "PER_REPORT"),
        help="one backbone: judge model name and the per_report.parquet of GEMA scored with it",
    )
    parser.add_argument("--ratings", required=True, help="ratings.parquet of `srrg metaeval-prepare` (error counts)")
    parser.add_argument("--pairs", help="pairs.parquet of `srrg metaeval-prepare` (case ids for the bootstrap)")
    parser.add_argument("--out", required=True, help="folder for gema_grid.{md,csv,tex} and one folder per model")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.gema_tables import run_gema_grid
    from srrg.settings.metaeval import MetaevalConfig

    files = {f"--cell {m}": path for m, path in args.cell}
    _args.check_outputs({**files, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out})
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    grid = run_gema_grid([tuple(c) for c in args.cell], args.ratings, args.pairs, cfg, args.out)
    print(f"{grid['model'].n_unique()} judge backbones x {grid['target'].n_unique()} error targets -> {args.out}")
