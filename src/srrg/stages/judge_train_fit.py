"""QLoRA (4-bit NF4) needs a CUDA GPU with bitsandbytes; otherwise plain LoRA. Checkpoints go to
--work-dir, outside the outputs, so a killed job resumes (docs/judge_train.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "fine-tune an LLM judge with LoRA/QLoRA; writes the adapter and the merged model"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prepared", required=True, help="output folder of `srrg judge-train-prepare`")
    parser.add_argument("--out-dir", required=True, help="folder for adapter/, merged/ and the training summary")
    parser.add_argument("--work-dir", required=True, help="folder for resumable checkpoints (kept outside the outputs)")
    _args.config(parser, "judge_train.train")


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.judge_train.train import run_judge_train_fit
    from srrg.settings.judge_train import JudgeTrainConfig

    _args.check_outputs({"--prepared": args.prepared}, folders={"--out-dir": args.out_dir, "--work-dir": args.work_dir})
    cfg = stage_config(args.config, JudgeTrainConfig, "judge_train.train")
    s = run_judge_train_fit(args.prepared, cfg, args.out_dir, args.work_dir)
    print(
        f"{s['method']} on {s['device']}: {s['train_examples']} examples, {s['steps']} steps, "
        f"loss {s['train_loss']:.4f}, {s['trainable_params']} trainable params -> {args.out_dir}"
    )
