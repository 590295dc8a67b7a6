"""GEMA's backbone grid: GEMA-Score Tables 1-2 with a row per judge model, both human error targets
side by side (docs/metaeval.md, "GEMA's backbone grid")."""

from __future__ import annotations

import argparse

from srrg.stages import _metaeval

HELP = "GEMA's backbone grid: GEMA Tables 1-2 with a row per judge model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.grid_arguments(
        parser,
        metavar=("MODEL", "PER_REPORT"),
        cell_help="one backbone: judge model name and the per_report.parquet of GEMA scored with it",
        out_help="folder for gema_grid.{md,csv,tex} and one folder per model",
    )


def run(args: argparse.Namespace) -> None:
    from srrg.metaeval.gema_tables import run_gema_grid

    cells, cfg = _metaeval.grid_settings(args)
    grid = run_gema_grid(cells, args.ratings, args.pairs, cfg, args.out)
    print(f"{grid['model'].n_unique()} judge backbones x {grid['target'].n_unique()} error targets -> {args.out}")
