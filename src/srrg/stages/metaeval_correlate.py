"""Kendall tau-b and Spearman with case-clustered bootstrap CIs, paired tests, count-level P/R/F1,
ensembles, within-case preference agreement and system-ranking agreement, in the GEMA-Score
Table 1 and S-RRG Table 3 layouts; the human ceiling (leave-one-rater-out), per-rater and
per-category tables, tests between metrics and tie-calibrated pairwise accuracy (docs/metaeval.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _metaeval

HELP = "correlate per-report metric scores with human ratings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _metaeval.correlate_inputs(parser, ratings_required=False, out_help="folder for the tables")


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.metaeval.run import printed_summary, run_metaeval_correlate

    cfg = _metaeval.correlate_settings(args)
    result = run_metaeval_correlate(args.scores, args.ratings, args.pairs, cfg, args.out)
    if cfg.caveat:
        print(f"note: {cfg.caveat}", file=sys.stderr)
    info = result.info
    print(
        f"{len(info['metrics'])} metrics x {info['n_with_human']} rated pairs "
        f"({info['n_without_human']} without rating), "
        f"resampling {info['resampling']} -> {args.out}"
    )
    print(printed_summary(result))
