"""GREEN Table 7's direct preference (docs/metaeval.md, "Direct preference"): a judge picks the
better of two candidates of one case; its accuracy against the experts' preference beside each
metric's on the same comparisons."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "direct preference: a judge picks the better of two candidates; accuracy against experts beside the metrics'"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairs", required=True, help="pairs.parquet of `srrg metaeval-prepare` (cases, texts)")
    parser.add_argument("--ratings", required=True, help="ratings.parquet of `srrg metaeval-prepare`")
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score` on the same pairs")
    parser.add_argument("--out", required=True, help="folder for preference.{csv,md}, comparisons.parquet, info.json")
    _args.config(parser, "metaeval.preference")


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.direct_preference import run_metaeval_preference
    from srrg.settings.metaeval import DirectPreference

    _args.check_outputs(
        {"--pairs": args.pairs, "--ratings": args.ratings, "--scores": args.scores}, folders={"--out": args.out}
    )
    cfg = stage_config(args.config, DirectPreference, "metaeval.preference")
    table = run_metaeval_preference(args.pairs, args.ratings, args.scores, cfg, args.out)
    judge = table.row(0, named=True)
    print(f"{judge['row']}: accuracy {judge['accuracy']:.3f} on {judge['comparisons']} comparisons -> {args.out}")
