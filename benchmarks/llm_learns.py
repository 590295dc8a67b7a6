"""Does the LLM arm (encoder + projector + SmolLM2-135M) learn? S-Score against steps (issue 45).

Trains the demo's `smollm2_json` run (config.yaml) with the real training code (srrg.model.train's
data module, ReportModule and trainer) once per LLM tuning (frozen, lora; one process and one
torch thread per arm, side by side), with `--steps` steps,
and every `--every` steps predicts the same first `--studies` test studies (greedy, the report
grammar on, srrg.model.infer.run_infer) and scores them: S-Score, P-Score, D-Score, parse rate and
distinct reports, beside the Constant row (the most frequent training report) on the same studies.
Prints one line per evaluation and a final table, the seeds and the wall and CPU time, and writes
a figure of S-Score against steps.

The run keeps its config.yaml settings (encoder warm start from the baseline's model file,
model.encoder.init_from: transformer_json -> <results>/runs/transformer_json/model.pt, so a
finished demo's results folder is needed: `make demo` or `snakemake results/runs/transformer_json/model.pt`).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/llm_learns.py [--results results] [--steps 300]
        [--every 50] [--studies 50] [--batch-size 8] [--arms frozen lora] [--seed 42] [--figure llm_learns.png]

--batch-size overrides the run's data.batch_size (the demo's 8); a step's CPU time is about
proportional to it, so 300 steps of both arms fit the hour of 2 cores at 4, not at 8
(docs/model.md, "The LLM arm on the embedded default").
"""

from __future__ import annotations

import argparse
import logging
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import lightning as L
import polars as pl
import torch
import yaml

from srrg.config import stage_config
from srrg.metrics import evaluate
from srrg.model.datamodule import ReportDataModule
from srrg.model.file import save_model
from srrg.model.findings import finding_labels
from srrg.model.infer import run_infer
from srrg.model.module import ReportModule
from srrg.model.train import build_trainer
from srrg.model.training_log import ProgressLog
from srrg.reference_runs import most_frequent_report, training_reports
from srrg.run_tables import parse_rates, scored
from srrg.settings.model import InferConfig, TrainConfig, deep_merge, run_slice

RUN = "smollm2_json"


def arm_config(
    config: dict[str, Any], results: Path, tuning: str, steps: int, seed: int, ckpt: Path, batch_size: int | None
) -> TrainConfig:
    """The demo run's train slice with the arm's LLM tuning, steps, seed and batch size (None: the
    run's); a run name in model.encoder.init_from becomes that run's model file under `results`
    (as the workflow does)."""
    cfg = run_slice(config, RUN, "train")
    init = cfg.get("model", {}).get("encoder", {}).get("init_from")
    runs = {r["name"] for r in config["train"]["runs"]}
    over: dict[str, Any] = {
        "model": {"llm": {"tuning": tuning}},
        "trainer": {"max_steps": steps, "seed": seed, "val_check_interval": None, "limit_val_batches": 0},
        "checkpoint_dir": str(ckpt),
    }
    if batch_size is not None:
        over["data"] = {"batch_size": batch_size}
    if init in runs:
        over["model"]["encoder"] = {"init_from": str(results / "runs" / init / "model.pt")}
    return stage_config(deep_merge(cfg, over), TrainConfig, "train")


def score(pred_file: Path, constant: str) -> dict[str, Any]:
    """S/P/D-Score of the scored predictions and the Constant row on the same studies."""
    preds = scored(pl.read_parquet(pred_file))
    refs, hyps = preds["reference"].to_list(), preds["report"].to_list()
    got = evaluate(refs, hyps, ["s_score"])
    const = evaluate(refs, [constant] * len(refs), ["s_score"])
    return {
        "studies": len(refs),
        "parsed": parse_rates(preds["parse_status"].to_list())["parsed"],
        "distinct": len(set(hyps)),
        "s_score": got["s_score"],
        "p_score": got["p_score"],
        "d_score": got["d_score"],
        "constant": const["s_score"],
    }


class Evaluate(ProgressLog):
    """The progress log, plus a prediction and scoring round every `every` steps and at the end."""

    def __init__(
        self, arm: str, every: int, steps: int, work: Path, dataset: Path, infer: InferConfig, data: dict, constant: str
    ):
        super().__init__(every)
        self.arm, self.eval_every, self.steps, self.work, self.dataset = arm, every, steps, work, dataset
        self.infer, self.data, self.constant = infer, data, constant
        self.points: list[dict[str, Any]] = []

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        super().on_train_batch_end(trainer, pl_module, *args)
        step = trainer.global_step
        if step % self.eval_every and step != self.steps:
            return
        model = self.work / f"step{step}.pt"
        save_model(model, pl_module.net, self.data, {"steps": step})
        start = time.perf_counter()
        run_infer(model, self.dataset, self.work / f"step{step}.parquet", None, self.infer)
        point = {"arm": self.arm, "step": step, **score(self.work / f"step{step}.parquet", self.constant)}
        point["infer_s"] = round(time.perf_counter() - start, 1)
        self.points.append(point)
        print("  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in point.items()), flush=True)
        pl_module.net.train()


def train_arm(
    arm: str, cfg: TrainConfig, dataset: Path, work: Path, every: int, infer: InferConfig, constant: str
) -> list:
    """run_train's fit, with the Evaluate callback instead of the plain progress log; one arm per
    process, one torch thread each (the arms run side by side on two cores)."""
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    print(
        f"arm {arm}: seed {cfg.trainer.seed}, {cfg.trainer.max_steps} steps, batch {cfg.data.batch_size}, "
        f"lr {cfg.optim.lr}",
        flush=True,
    )
    L.seed_everything(cfg.trainer.seed, workers=True)
    data = ReportDataModule(dataset, cfg.data, cfg.model.target, cfg.model.encoder.image_size, cfg.trainer.seed)
    data.setup("fit")
    assert data.train_set is not None
    findings = finding_labels(data.train_set.positives()) if cfg.model.finding_loss > 0 else None
    module = ReportModule(asdict(cfg.model), asdict(cfg.optim), None, findings)
    data_config = {**asdict(cfg.data), "images": data.images}
    callback = Evaluate(arm, every, cfg.trainer.max_steps, work, dataset, infer, data_config, constant)
    trainer = build_trainer(cfg, work / "ckpt", callback)
    trainer.fit(module, datamodule=data)
    return callback.points


def figure(curves: dict[str, list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for arm, points in curves.items():
        ax.plot([p["step"] for p in points], [p["s_score"] for p in points], marker="o", label=f"SmolLM2 {arm}")
    constant = next(p["constant"] for points in curves.values() for p in points)
    ax.axhline(constant, color="grey", linestyle="--", label="Constant")
    ax.axhline(constant + 0.10, color="grey", linestyle=":", label="Constant + 0.10")
    ax.set_xlabel("training step")
    ax.set_ylabel("S-Score (same test studies)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", type=Path, help="a demo results folder (dataset, baseline)")
    parser.add_argument("--config", default="config.yaml", type=Path)
    parser.add_argument("--steps", default=300, type=int)
    parser.add_argument("--every", default=50, type=int)
    parser.add_argument("--studies", default=50, type=int)
    parser.add_argument("--batch-size", default=None, type=int, help="default: the run's data.batch_size")
    parser.add_argument("--arms", default=["frozen", "lora"], nargs="+", choices=["frozen", "lora"])
    parser.add_argument("--seed", default=42, type=int)
    parser.add_argument("--figure", default="llm_learns.png", type=Path)
    args = parser.parse_args()
    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    dataset = args.results / "dataset"
    constant = most_frequent_report(training_reports(dataset)).to_json()
    infer_slice = deep_merge(run_slice(config, RUN, "infer"), {"num_beams": 1, "max_studies": args.studies})
    infer = stage_config(infer_slice, InferConfig, "infer")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(len(args.arms), get_context("spawn")) as pool:
        jobs = {
            arm: pool.submit(
                train_arm,
                arm,
                arm_config(config, args.results, arm, args.steps, args.seed, Path(tmp) / arm / "ckpt", args.batch_size),
                dataset,
                Path(tmp) / arm,
                args.every,
                infer,
                constant,
            )
            for arm in args.arms
        }
        curves = {arm: job.result() for arm, job in jobs.items()}
    figure(curves, args.figure)
    print("\n| arm | step | S-Score | P-Score | D-Score | Constant | margin | Parsed | distinct | studies |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arm, points in curves.items():
        for p in points:
            print(
                f"| {arm} | {p['step']} | {p['s_score']:.3f} | {p['p_score']:.3f} | {p['d_score']:.3f} | "
                f"{p['constant']:.3f} | {p['s_score'] - p['constant']:+.3f} | {p['parsed']:.3f} | {p['distinct']} | "
                f"{p['studies']} |"
            )
    cpu = sum(resource.getrusage(who).ru_utime for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(f"seed {args.seed}; wall {time.perf_counter() - start:.0f} s, CPU {cpu:.0f} s; figure {args.figure}")


if __name__ == "__main__":
    main()
