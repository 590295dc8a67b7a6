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
    import json

    from srrg.dataset import read_split
    from srrg.phantom import figure
    from srrg.report import from_obj

    _args.check_outputs({"--dataset": args.dataset}, files={"--out": args.out})
    df = read_split(args.dataset, "train", ["structured"]).drop_nulls()  # sorted by study_id, shards checked
    reports = [(sid, from_obj(json.loads(s))[0]) for sid, s in df.iter_rows()]
    # the studies with the most positive findings (ties by id): the figure should show something
    reports.sort(key=lambda item: -len(item[1].positive))
    figure(reports[: args.n], args.out)
