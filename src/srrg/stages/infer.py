"""Structured-First outputs are parsed (valid / repaired / unparseable, never raising) and rendered
to sentences for the NLG metrics; studies outside the view filter keep a row with a status."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "beam-search predictions of a trained model for one dataset split"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model file written by `srrg train`")
    parser.add_argument("--dataset", required=True, help="dataset folder with <split>/ Parquet shards")
    parser.add_argument(
        "--out", required=True, help="predictions Parquet file to write (a row per study, or per image: infer.samples)"
    )
    parser.add_argument(
        "--pairs", help="also write the pairs to score (study_id, reference, report) to this Parquet file"
    )
    parser.add_argument(
        "--shard",
        type=int,
        help="write only this shard (0-based, of infer.shards) to --out, a part for `srrg infer-merge`",
    )
    _args.config(parser, "infer")


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.settings.model import InferConfig

    cfg = stage_config(args.config, InferConfig, "infer")  # a wrong setting or path is named before torch loads
    _args.require_inputs(files={"--model": args.model}, folders={"--dataset": args.dataset})
    _args.check_outputs(
        {"--model": args.model, "--dataset": args.dataset}, files={"--out": args.out, "--pairs": args.pairs}
    )
    from srrg.errors import UserError
    from srrg.model.images import ImageError
    from srrg.model.infer import run_infer

    if args.shard is not None and args.pairs:
        raise UserError("--pairs goes to `srrg infer-merge` when --shard is given (a part is no predictions file)")
    try:
        run_infer(args.model, args.dataset, args.out, args.pairs, cfg, args.shard)
    except ImageError as err:
        raise UserError(str(err)) from err
