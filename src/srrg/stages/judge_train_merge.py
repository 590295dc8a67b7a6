"""Needed after QLoRA training on a GPU: the merged model is what the local judge backend loads."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "fold a LoRA adapter into its (unquantized) base model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", required=True, help="adapter folder written by `srrg judge-train-fit`")
    parser.add_argument("--out", required=True, help="folder for the merged model")
    _args.config(
        parser, "judge_train.train", "the judge training settings used for the adapter (they name the base model)"
    )


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.config import stage_config
    from srrg.judge_train.train import run_judge_train_merge
    from srrg.settings.judge_train import JudgeTrainConfig
    from srrg.text.decode import read_mapping_file

    _args.check_outputs({"--adapter": args.adapter}, folders={"--out": args.out})
    cfg = stage_config(args.config, JudgeTrainConfig, "judge_train.train")
    read_mapping_file(Path(args.adapter) / "adapter_config.json")  # peft's own reader of it raises a traceback
    print(f"merged -> {run_judge_train_merge(args.adapter, cfg, args.out)}")
