"""Reinforcement fine-tuning of a trained run with metric rewards (docs/model.md, "Reinforcement
fine-tuning"): checkpoints live outside the outputs and a job ended by SIGTERM saves its step and
exits 143, like `srrg train`; the output is a model file that `srrg infer` reads."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "fine-tune a trained model with a metric reward (GRPO / self-critical policy gradient; Lightning)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset folder with train/ Parquet shards")
    parser.add_argument("--model", required=True, help="model file written by `srrg train` (the starting point)")
    parser.add_argument(
        "--out", required=True, help="model file to write (weights + config); a summary goes to OUT.json"
    )
    _args.config(parser, "rl")
    parser.add_argument("--run", default="default", help="run name: names the checkpoint folder")


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.settings.rl import RLConfig

    cfg = stage_config(args.config, RLConfig, "rl")  # a wrong setting or path is named before torch loads
    _args.require_inputs(files={"--model": args.model}, folders={"--dataset": args.dataset})
    _args.check_outputs({"--dataset": args.dataset, "--model": args.model}, files={"--out": args.out})
    from srrg.errors import UserError
    from srrg.model.images import ImageError
    from srrg.model.rl import run_rl

    try:
        run_rl(args.dataset, args.model, args.out, cfg, args.run)
    except ImageError as err:
        raise UserError(str(err)) from err
