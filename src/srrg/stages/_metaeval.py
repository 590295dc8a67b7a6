"""Options shared by the meta-evaluation and judge-training commands."""

from __future__ import annotations

import argparse

ADAPTERS = (
    "radeval_expert",
    "radevalx",
    "radpref",
    "rate_eval",
    "rexval",
)  # srrg.metaeval.adapters.ADAPTERS (a test checks)


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
