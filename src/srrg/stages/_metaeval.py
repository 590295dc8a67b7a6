"""Options shared by the meta-evaluation and judge-training commands."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srrg.settings.metaeval import MetaevalConfig

ADAPTERS = (
    "radeval_expert",
    "radevalx",
    "radpref",
    "rate_eval",
    "rexval",
)  # srrg.metaeval.readers.load.READERS (a test checks)


def dataset_arguments(parser: argparse.ArgumentParser) -> None:
    """A ratings dataset in its published layout."""
    parser.add_argument("--adapter", required=True, choices=ADAPTERS, help="layout of the ratings dataset")
    parser.add_argument(
        "--data", required=True, help="dataset folder or file in its published layout (docs/metaeval.md)"
    )
    parser.add_argument("--options", metavar="JSON|FILE", help="column options of the adapter (docs/judges.md)")


def correlate_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="JSON|FILE",
        help="settings of `metaeval.correlate` in config.yaml (n_boot, seed, ci_level, ensembles, ...) "
        "as inline JSON or a .json/.yaml file",
    )


def grid_arguments(parser: argparse.ArgumentParser, *, metavar: tuple[str, ...], cell_help: str, out_help: str) -> None:
    """The inputs of a judge-model grid command (vert-grid, gema-grid): one --cell per grid cell,
    its last value the cell's per_report.parquet, the prepared ratings and pairs, the output folder
    and the `metaeval.correlate` settings."""
    parser.add_argument("--cell", nargs=len(metavar), action="append", required=True, metavar=metavar, help=cell_help)
    parser.add_argument("--ratings", required=True, help="ratings.parquet of `srrg metaeval-prepare`")
    parser.add_argument("--pairs", help="pairs.parquet of `srrg metaeval-prepare` (case ids for the bootstrap)")
    parser.add_argument("--out", required=True, help=out_help)
    correlate_config(parser)


def grid_settings(args: argparse.Namespace) -> tuple[list[tuple[str, ...]], MetaevalConfig]:
    """The cells of grid_arguments with their files checked (srrg.stages._args.check_outputs) and the
    `metaeval.correlate` settings."""
    from srrg.config import stage_config
    from srrg.settings.metaeval import MetaevalConfig
    from srrg.stages import _args

    files = {f"--cell {' '.join(c[:-1])}": c[-1] for c in args.cell}
    _args.check_outputs({**files, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out})
    return [tuple(c) for c in args.cell], stage_config(args.config, MetaevalConfig, "metaeval.correlate")


def correlate_inputs(parser: argparse.ArgumentParser, *, ratings_required: bool, out_help: str) -> None:
    """The inputs of a correlation command (metaeval-correlate, metaeval-gema): per-report scores,
    the prepared ratings and pairs, the output folder and the `metaeval.correlate` settings."""
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    ratings_help = "ratings.parquet of `srrg metaeval-prepare`"
    parser.add_argument(
        "--ratings",
        required=ratings_required,
        help=ratings_help if ratings_required else f"{ratings_help} (omit when the scores hold the rating column)",
    )
    parser.add_argument(
        "--pairs",
        help="pairs.parquet of `srrg metaeval-prepare`: case ids for the clustered bootstrap, systems (optional)",
    )
    parser.add_argument("--out", required=True, help=out_help)
    correlate_config(parser)


def correlate_settings(args: argparse.Namespace) -> MetaevalConfig:
    """The inputs of correlate_inputs checked (srrg.stages._args.check_outputs) and the
    `metaeval.correlate` settings read through the one door (srrg.settings.metaeval.MetaevalConfig)."""
    from srrg.config import stage_config
    from srrg.settings.metaeval import MetaevalConfig
    from srrg.stages import _args

    _args.check_outputs(
        {"--scores": args.scores, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out}
    )
    return stage_config(args.config, MetaevalConfig, "metaeval.correlate")
