"""GEMA-Score Tables 1-2: the metrics of a rating set correlated with its clinically significant
and its clinically insignificant human error counts, side by side (docs/metaeval.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _metaeval

HELP = "GEMA Tables 1-2: correlation with significant and insignificant human error counts, side by side"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.correlate_inputs(
        parser, ratings_required=True, out_help="folder for table_gema12.{md,csv,tex} and one folder per target"
    )


def run(args: argparse.Namespace) -> None:
    from srrg.metaeval.gema_tables import run_metaeval_gema

    cfg = _metaeval.correlate_settings(args)
    results = run_metaeval_gema(args.scores, args.ratings, args.pairs, cfg, args.out)
    print(f"{len(next(iter(results.values())).info['metrics'])} metrics x {len(results)} error targets -> {args.out}")
