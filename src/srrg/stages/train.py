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
    from srrg.config import ConfigError, stage_config
    from srrg.settings.model import TrainConfig, pick_run

    def pick(settings: dict) -> dict:
        try:
            return pick_run(settings, args.run)
        except ValueError as err:  # an unknown --run, or a run spec the settings refuse: one line
            raise ConfigError(str(err)) from None

    # settings that list `runs` give the entry of --run; a wrong setting or path is named before torch loads
    cfg = stage_config(args.config, TrainConfig, "train", adjust=pick)
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
