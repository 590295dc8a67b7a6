"""VERT's grid: every judge model x prompt of a rating set correlated with its human scores, one
table (docs/judges.md, "VERT's grid")."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "VERT's grid: judge models x prompts correlated with a rating set's human scores"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cell",
        nargs=3,
        action="append",
        required=True,
        metavar=("MODEL", "PROMPT", "PER_REPORT"),
        help="one grid cell: judge model name, prompt (green, direct, formula, rubric) and its per_report.parquet",
    )
    parser.add_argument("--ratings", required=True, help="ratings.parquet of `srrg metaeval-prepare`")
    parser.add_argument("--pairs", help="pairs.parquet of `srrg metaeval-prepare` (case ids for the bootstrap)")
    parser.add_argument("--out", required=True, help="folder for vert_grid.{csv,md} and one folder per model")
    parser.add_argument(
        "--ensembles",
        action="store_true",
        help="add the cross-model ensemble rows (mean of z-scores, least squares) evaluated on the held-out pairs",
    )
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.grid import run_vert_grid
    from srrg.settings.metaeval import MetaevalConfig

    files = {f"--cell {m} {p}": path for m, p, path in args.cell}
    _args.check_outputs({**files, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out})
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    grid = run_vert_grid([tuple(c) for c in args.cell], args.ratings, args.pairs, cfg, args.out, args.ensembles)
    print(f"{grid['model'].n_unique()} judge models x {grid['column'].n_unique()} columns -> {args.out}")
