"""What makes the demo baseline read the phantoms: encoder x finding loss x seed (issue 12).

Trains the demo's `transformer_json` run (config.yaml) with the real `srrg train` / `srrg infer`
code under each variant on a finished demo's dataset, and prints the learning summary of
benchmarks/demo_learning.py for each: parse rate, S-Score, the Constant row and the margin. One
variant is about 4-5 minutes on a 2-core CPU.

    .venv/bin/python benchmarks/demo_ablation.py [--results results] [--seeds 42]
        [--variants resnet18:1.0 resnet18:0 tiny-swin:1.0 tiny-swin:0]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path

import yaml
from demo_learning import learning_summary

from srrg.config import stage_config
from srrg.model.infer import run_infer
from srrg.model.train import run_train
from srrg.settings.model import InferConfig, TrainConfig, deep_merge, run_slice

RUN = "transformer_json"


def variant_config(train_slice: dict, encoder: str, finding_loss: float, seed: int, checkpoints: Path) -> TrainConfig:
    """The demo run's config with another encoder, finding-loss weight and seed."""
    over = {
        "model": {"encoder": {"name": encoder}, "finding_loss": finding_loss},
        "trainer": {"seed": seed},
        "checkpoint_dir": str(checkpoints),
    }
    return stage_config(deep_merge(run_slice({"train": train_slice}, RUN, "train"), over), TrainConfig, "train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", type=Path, help="a finished demo's results folder")
    parser.add_argument("--config", default="config.yaml", type=Path)
    parser.add_argument("--seeds", default=[42], type=int, nargs="+")
    parser.add_argument(
        "--variants",
        default=["resnet18:1.0", "resnet18:0", "tiny-swin:1.0", "tiny-swin:0"],
        nargs="+",
        help="encoder:finding_loss pairs",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    infer_cfg = stage_config(run_slice(config, RUN, "infer"), InferConfig, "infer")
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants:
            encoder, weight = variant.split(":")
            for seed in args.seeds:
                work = Path(tmp) / f"{encoder}_{weight}_{seed}"
                run_dir = work / "runs" / RUN
                cfg = variant_config(config["train"], encoder, float(weight), seed, work / "ckpt")
                summary = run_train(args.results / "dataset", run_dir / "model.pt", cfg, RUN)
                run_infer(
                    run_dir / "model.pt", args.results / "dataset", run_dir / "predictions.parquet", None, infer_cfg
                )
                s = learning_summary(work, RUN, args.results / "dataset")
                print(
                    f"encoder {encoder} finding_loss {weight} seed {seed}: train {summary['seconds']:.0f}s "
                    f"studies {s['studies']} parse_rate {s['parse_rate']:.3f} s_score {s['s_score']:.4f} "
                    f"constant {s['constant']:.4f} margin {s['margin']:+.4f} "
                    f"no_findings predicted {s['no_findings_predicted']} reference {s['no_findings_reference']}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
