"""Phantoms are drawn from each study's structured report (docs/phantom.md); the figure shows a few
training studies with the most positive findings next to their reports."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "figure of phantom radiographs next to their structured reports (for snakemake --report)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset folder with train/ Parquet shards")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--n", type=int, default=6, help="number of studies shown (default: 6)")


def run(args: argparse.Namespace) -> None:
    from srrg.phantom import run_phantoms

    _args.check_outputs({"--dataset": args.dataset}, files={"--out": args.out})
    run_phantoms(args.dataset, args.out, args.n)
