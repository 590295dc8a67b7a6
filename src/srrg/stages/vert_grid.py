"""VERT's grid: every judge model x prompt of a rating set correlated with its human scores, one
table (docs/judges.md, "VERT's grid")."""

from __future__ import annotations

import argparse

from srrg.stages import _metaeval

HELP = "VERT's grid: judge models x prompts correlated with a rating set's human scores"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.grid_arguments(
        parser,
        metavar=("MODEL", "PROMPT", "PER_REPORT"),
        cell_help="one grid cell: judge model name, prompt (green, direct, formula, rubric) and its per_report.parquet",
        out_help="folder for vert_grid.{csv,md} and one folder per model",
    )
    parser.add_argument(
        "--ensembles",
        action="store_true",
        help="add the cross-model ensemble rows (mean of z-scores, least squares) evaluated on the test pairs "
        "(the rating set's published test split, else the held-out share)",
    )
    parser.add_argument(
        "--ensemble-train",
        type=int,
        metavar="N",
        help="training instances the least-squares ensembles are fitted on (metaeval.grid.ensemble_train; VERT: "
        "500); omitted = every training pair",
    )


def run(args: argparse.Namespace) -> None:
    from srrg.errors import UserError
    from srrg.metaeval.grid import run_vert_grid

    if args.ensemble_train is not None and args.ensemble_train < 1:
        raise UserError(f"--ensemble-train must be at least 1, got {args.ensemble_train}")
    cells, cfg = _metaeval.grid_settings(args)
    grid = run_vert_grid(cells, args.ratings, args.pairs, cfg, args.out, args.ensembles, args.ensemble_train)
    print(f"{grid['model'].n_unique()} judge models x {grid['column'].n_unique()} columns -> {args.out}")
