"""`srrg train`: fit one run (model x target) with Lightning and export its weights.

Checkpoints live under checkpoint_dir/<run>/<config hash>, outside Snakemake's outputs, so a
killed job resumes from `last.ckpt` and a changed config never resumes a stale run. Under `srun`
Lightning's SLURMEnvironment supplies ranks (ntasks-per-node = devices); only rank 0 writes outputs.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.plugins.environments import SLURMEnvironment

from srrg.config import config_hash
from srrg.io import atomic_path, write_text
from srrg.model.config import TrainConfig
from srrg.model.datamodule import ReportDataModule
from srrg.model.module import ReportModule

log = logging.getLogger("srrg.train")

# trainer keys that place a run on hardware without changing what it learns: not part of the hash
PLACEMENT_KEYS = ("accelerator", "devices", "num_nodes", "strategy", "checkpoint_every_n_steps", "log_every_n_steps")


def resolve_precision(precision: str, accelerator: str) -> str:
    """`auto`: bf16-mixed on a GPU, full fp32 on CPU."""
    if precision != "auto":
        return precision
    gpu = torch.cuda.is_available() and accelerator in {"auto", "gpu", "cuda"}
    return "bf16-mixed" if gpu else "32-true"


def checkpoint_dir(cfg: TrainConfig, run: str) -> Path:
    """checkpoint_dir/<run>/<hash of everything that changes the trained weights>."""
    data = cfg.to_dict()
    data["trainer"] = {k: v for k, v in data["trainer"].items() if k not in PLACEMENT_KEYS}
    data.pop("checkpoint_dir")
    return Path(cfg.checkpoint_dir) / run / config_hash(data)


def build_trainer(cfg: TrainConfig, ckpt_dir: Path) -> L.Trainer:
    t = cfg.trainer
    plugins = [SLURMEnvironment(auto_requeue=False)] if SLURMEnvironment.detect() else []  # Snakemake owns retries
    ckpt = ModelCheckpoint(dirpath=ckpt_dir, save_last=True, save_top_k=1, every_n_train_steps=t.checkpoint_every_n_steps)
    return L.Trainer(
        max_steps=t.max_steps,
        accelerator=t.accelerator,
        devices=t.devices,
        num_nodes=t.num_nodes,
        strategy=t.strategy,
        precision=resolve_precision(t.precision, t.accelerator),
        plugins=plugins,
        callbacks=[ckpt],
        default_root_dir=ckpt_dir,
        logger=False,
        use_distributed_sampler=False,  # the data module shards with its own seeded sampler
        val_check_interval=t.val_check_interval,
        check_val_every_n_epoch=None if t.val_check_interval else 1,
        limit_val_batches=t.limit_val_batches,
        num_sanity_val_steps=0,
        accumulate_grad_batches=t.accumulate_grad_batches,
        gradient_clip_val=t.gradient_clip_val,
        log_every_n_steps=t.log_every_n_steps,
        enable_model_summary=False,
    )


def _metric(trainer: L.Trainer, key: str) -> float | None:
    value = trainer.callback_metrics.get(key)
    return None if value is None else float(value)


def run_train(dataset_dir: str | Path, out: str | Path, cfg: TrainConfig, run: str = "default") -> dict[str, Any]:
    """Fit (resuming from the run's last checkpoint when there is one), then write `out` (weights +
    model config) and `out`.json (summary) on rank 0. Returns the summary."""
    start = time.perf_counter()
    L.seed_everything(cfg.trainer.seed, workers=True)
    ckpt_dir = checkpoint_dir(cfg, run)
    module = ReportModule(asdict(cfg.model), asdict(cfg.optim))
    data = ReportDataModule(dataset_dir, cfg.data, cfg.model.target, cfg.model.encoder.image_size, cfg.trainer.seed)
    trainer = build_trainer(cfg, ckpt_dir)
    resume = (ckpt_dir / "last.ckpt").is_file()
    if resume:
        log.info("resuming from %s", ckpt_dir / "last.ckpt")
    trainer.fit(module, datamodule=data, ckpt_path="last" if resume else None)
    summary = {
        "run": run,
        "steps": trainer.global_step,
        "train_loss": _metric(trainer, "train_loss"),
        "val_loss": _metric(trainer, "val_loss"),
        "resumed": resume,
        "world_size": trainer.world_size,
        "precision": str(trainer.precision),
        "train_studies": len(data.train_set or []),
        "checkpoint_dir": str(ckpt_dir),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if trainer.is_global_zero:
        exported = {**module.export(), "data_config": asdict(cfg.data), "summary": summary}
        with atomic_path(out) as tmp:
            torch.save(exported, tmp)
        write_text(f"{out}.json", json.dumps(summary, indent=2) + "\n")
        log.info("train %s: %d steps, train_loss %s, %.1fs -> %s", run, summary["steps"], summary["train_loss"], summary["seconds"], out)
    return summary
