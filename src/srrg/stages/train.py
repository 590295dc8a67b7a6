"""Checkpoints live outside the outputs, so a killed job resumes; under `srun`, Lightning reads the
ranks from SLURM and only rank 0 writes outputs (docs/model.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "train an image-to-report model for one run (Lightning; multi-GPU and SLURM aware)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="dataset folder with train/ (and validate/) Parquet shards")
    parser.add_argument(
        "--out", required=True, help="model file to write (weights + config); a summary goes to OUT.json"
    )
    _args.config(parser, "train")
    parser.add_argument(
        "--run",
        default="default",
        help="run name: names the checkpoint folder, and picks the entry of `runs` when the settings list runs",
    )


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.settings.model import TrainConfig, pick_run

    # settings that list `runs` give the entry of --run (an unknown run is one line, like a wrong
    # setting); a wrong setting or path is named before torch loads
    cfg = stage_config(args.config, TrainConfig, "train", adjust=lambda settings: pick_run(settings, args.run))
    _args.require_inputs(folders={"--dataset": args.dataset})
    _args.check_outputs({"--dataset": args.dataset}, files={"--out": args.out})
    from srrg.model.encoder import check_encoder_name

    check_encoder_name(cfg.model.encoder)  # timm loads here anyway; before any data or weights are read
    from srrg.errors import UserError
    from srrg.model.images import ImageError
    from srrg.model.train import run_train

    try:
        run_train(args.dataset, args.out, cfg, args.run)
    except ImageError as err:  # a missing or unreadable image the configured image root names
        raise UserError(str(err)) from err
