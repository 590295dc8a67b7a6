"""GEMA-Score Table 3: every other metric of a rating set correlated with GEMA as the column (set
`human_column: gema` in --config), with CheXbert's precision, recall and F1 (from the scores' CheXbert
counts, else labelled here from --refs/--hyps with the radeval extra; `unavailable` rows without
it); no ratings file is read (docs/metaeval.md, "GEMA Table 3")."""

from __future__ import annotations

import argparse

from srrg.stages import _args, _metaeval

HELP = "GEMA Table 3: every other metric of a rating set (and CheXbert P/R/F1) correlated with GEMA"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    parser.add_argument(
        "--refs", help="refs.parquet of `srrg metaeval-prepare` (CheXbert labels where the scores lack them)"
    )
    parser.add_argument("--hyps", help="hyps.parquet of `srrg metaeval-prepare`")
    parser.add_argument(
        "--pairs",
        help="pairs.parquet of `srrg metaeval-prepare`: case ids for the clustered bootstrap (optional)",
    )
    parser.add_argument("--out", required=True, help="folder for the tables")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.gema3 import run_metaeval_gema3
    from srrg.settings.metaeval import MetaevalConfig

    files = {"--scores": args.scores, "--refs": args.refs, "--hyps": args.hyps, "--pairs": args.pairs}
    _args.check_outputs(files, folders={"--out": args.out})
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    result, reason = run_metaeval_gema3(args.scores, args.refs, args.hyps, args.pairs, cfg, args.out)
    chexbert = f"CheXbert P/R/F1 unavailable: {reason}" if reason else "with CheXbert P/R/F1"
    print(f"{len(result.info['metrics'])} metrics against {cfg.human_column} ({chexbert}) -> {args.out}")
