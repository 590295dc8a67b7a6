"""`srrg train`: fit one run (model x target) with Lightning and export its weights.

Checkpoints live under checkpoint_dir/<run>/<fingerprint>, outside Snakemake's outputs: the
fingerprint covers the run config, the source of the srrg modules training runs and the dataset
(its manifest's digest), so a killed job resumes from `last.ckpt` while a changed config, changed
code or another dataset trains afresh (a finished run's last.ckpt is never another dataset's start). Under `srun`
Lightning's SLURMEnvironment supplies ranks (ntasks-per-node = devices); only rank 0 writes outputs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.plugins.environments import SLURMEnvironment
from lightning.pytorch.utilities.exceptions import SIGTERMException

from srrg.codedeps import stage_files
from srrg.config import config_hash
from srrg.errors import UserError
from srrg.io import write_text
from srrg.model.context import check_supported
from srrg.model.datamodule import ReportDataModule
from srrg.model.file import dataset_digest, first_line, save_model
from srrg.model.findings import finding_labels
from srrg.model.module import ReportModule
from srrg.model.training_log import ProgressLog, loss_figure, write_metrics
from srrg.model.words import build_vocab
from srrg.settings.model import TrainConfig

log = logging.getLogger("srrg.train")

# trainer keys that place a run on hardware without changing what it learns: not part of the hash
PLACEMENT_KEYS = ("accelerator", "devices", "num_nodes", "strategy", "checkpoint_every_n_steps", "log_every_n_steps")


def code_files() -> list[Path]:
    """The sources `srrg train` runs: its stage module's import closure, the same files the
    workflow declares as the train rule's code inputs (srrg.codedeps)."""
    return stage_files("train")


def code_fingerprint(files: list[Path]) -> str:
    """Hash of the files' names and bytes: any edit to the training code changes it."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode("utf-8") + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def resolve_precision(precision: str, accelerator: str) -> str:
    """`auto`: bf16-mixed on a GPU, full fp32 on CPU."""
    if precision != "auto":
        return precision
    gpu = torch.cuda.is_available() and accelerator in {"auto", "gpu", "cuda"}
    return "bf16-mixed" if gpu else "32-true"


def checkpoint_dir(cfg: TrainConfig, run: str, code: str | None = None, dataset: str | None = None) -> Path:
    """checkpoint_dir/<run>/<hash of everything that changes the trained weights: the config
    without placement keys, the training code (code_fingerprint of code_files by default) and the
    dataset (srrg.model.file.dataset_digest; run_train always passes it)>."""
    data = cfg.to_dict()
    data["trainer"] = {k: v for k, v in data["trainer"].items() if k not in PLACEMENT_KEYS}
    data.pop("checkpoint_dir")
    data["code"] = code if code is not None else code_fingerprint(code_files())
    if dataset is not None:
        data["dataset"] = dataset
    return Path(cfg.checkpoint_dir) / run / config_hash(data)


def epoch_steps(samples: int, batch_size: int, world_size: int, accumulate: int, epochs: int) -> int:
    """Optimizer steps of `epochs` passes (docs/model.md): each rank gets ceil(samples / world)
    samples (the distributed sampler pads the shares to equal size), in ceil(share / batch_size)
    batches, and steps every `accumulate` batches and at the end of each epoch."""
    share = math.ceil(samples / world_size)
    return epochs * math.ceil(math.ceil(share / batch_size) / accumulate)


LAST = "last.ckpt"
SIGTERM_EXIT = 143  # 128 + SIGTERM: what a shell and SLURM report for a job ended by SIGTERM


class CheckpointOnSigterm(L.Callback):
    """A scheduler's SIGTERM (scancel, preemption, the time limit's first signal) makes Lightning
    stop after the step in progress; this callback writes last.ckpt at the end of that step, at the
    point where the periodic checkpoints are taken (so it resumes exactly like them), written aside
    and renamed so a second kill cannot leave half a file. A rerun then resumes where the job
    stopped; a SIGTERM during validation falls back to the last periodic checkpoint (docs/model.md)."""

    def __init__(self, ckpt_dir: Path) -> None:
        self.ckpt_dir = ckpt_dir

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if not trainer.received_sigterm:
            return
        tmp = self.ckpt_dir / f"{LAST}.sigterm"
        trainer.save_checkpoint(tmp)  # collective under DDP: every rank calls it, rank 0 writes
        if trainer.is_global_zero:
            os.replace(tmp, self.ckpt_dir / LAST)
        log.warning("SIGTERM: stopping after step %d; %s saved, a rerun resumes there", trainer.global_step, LAST)


def build_trainer(cfg: TrainConfig, ckpt_dir: Path, progress: ProgressLog | None = None) -> L.Trainer:
    t = cfg.trainer
    plugins = [SLURMEnvironment(auto_requeue=False)] if SLURMEnvironment.detect() else []  # Snakemake owns retries
    ckpt = ModelCheckpoint(
        dirpath=ckpt_dir, save_last=True, save_top_k=1, every_n_train_steps=t.checkpoint_every_n_steps
    )
    return L.Trainer(
        max_steps=t.max_steps,
        accelerator=t.accelerator,
        devices=t.devices,
        num_nodes=t.num_nodes,
        strategy=t.strategy,
        precision=resolve_precision(t.precision, t.accelerator),
        plugins=plugins,
        callbacks=[ckpt, progress or ProgressLog(t.log_every_n_steps), CheckpointOnSigterm(ckpt_dir)],
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
        enable_progress_bar=False,  # ProgressLog writes plain lines instead (files, SLURM)
    )


def metrics_paths(out: str | Path) -> tuple[Path, Path]:
    """The metrics CSV and the loss figure of a run: beside its model file."""
    folder = Path(out).parent
    return folder / "metrics.csv", folder / "loss.png"


def check_resumable(path: Path) -> None:
    """A last.ckpt to resume from must be a readable checkpoint: a truncated, garbage or empty file
    (copied, edited, a full disk) is a UserError naming it and the fix, not Lightning's traceback.
    Read memory-mapped and with the safe unpickler, so the check costs no copy of the weights."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        ok = isinstance(state, dict) and "state_dict" in state
        problem = "" if ok else "no state_dict in it"
    except Exception as exc:  # noqa: BLE001 - the safe unpickler fails on garbage with any error type
        problem = first_line(exc) or type(exc).__name__
    if problem:
        raise UserError(
            f"{path}: not a checkpoint training can resume from ({problem}); delete it (or its folder) "
            "to train this run from scratch"
        )


def last_value(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return float(values[-1]) if values else None


def run_train(dataset_dir: str | Path, out: str | Path, cfg: TrainConfig, run: str = "default") -> dict[str, Any]:
    """Fit (resuming from the last checkpoint of the same config, code and dataset when there is one), then
    write on rank 0: `out` (weights, model config, vocabulary), `out`.json (summary), and beside it
    metrics.csv and loss.png. Returns the summary."""
    start = time.perf_counter()
    check_supported(cfg.model)  # before any data is read
    L.seed_everything(cfg.trainer.seed, workers=True)
    ckpt_dir = checkpoint_dir(cfg, run, dataset=dataset_digest(dataset_dir))
    data = ReportDataModule(
        dataset_dir,
        cfg.data,
        cfg.model.target,
        cfg.model.encoder.image_size,
        cfg.trainer.seed,
        cfg.model.context.views,
        cfg.model.context,
    )
    data.setup("fit")
    assert data.train_set is not None
    vocab = None
    if cfg.model.arch == "baseline" and cfg.model.baseline.vocab == "words":
        vocab = build_vocab(data.train_set.targets(), cfg.model.baseline.min_word_count)
        log.info(
            "word vocabulary: %d entries (pieces seen >= %d times in %d training targets)",
            len(vocab),
            cfg.model.baseline.min_word_count,
            len(data.train_set),
        )
    findings = None
    if cfg.model.finding_loss > 0:
        findings = finding_labels(data.train_set.positives())
        log.info(
            "finding loss (weight %g): %d finding labels of the training reports", cfg.model.finding_loss, len(findings)
        )
    module = ReportModule(asdict(cfg.model), asdict(cfg.optim), vocab, findings)
    csv_path, fig_path = metrics_paths(out)
    progress = ProgressLog(cfg.trainer.log_every_n_steps, csv_path)
    trainer = build_trainer(cfg, ckpt_dir, progress)
    if cfg.trainer.max_epochs is not None:
        steps = epoch_steps(
            len(data.train_set),
            cfg.data.batch_size,
            trainer.world_size,
            cfg.trainer.accumulate_grad_batches,
            cfg.trainer.max_epochs,
        )
        trainer.fit_loop.epoch_loop.max_steps = steps  # the schedule and the progress log read it
        log.info(
            "max_epochs %d: %d steps (%d samples, batch %d, world size %d)",
            cfg.trainer.max_epochs,
            steps,
            len(data.train_set),
            cfg.data.batch_size,
            trainer.world_size,
        )
    resume = (ckpt_dir / LAST).is_file()
    if resume:
        check_resumable(ckpt_dir / LAST)
        log.info("resuming from %s (same config, code and dataset)", ckpt_dir / LAST)
    else:
        log.info("training from scratch; checkpoints in %s", ckpt_dir)
    try:
        trainer.fit(module, datamodule=data, ckpt_path=str(ckpt_dir / LAST) if resume else None)
    except SIGTERMException:
        raise SystemExit(SIGTERM_EXIT) from None  # a failed job to the scheduler: Snakemake reruns it
    summary = {
        "run": run,
        "steps": trainer.global_step,
        "train_loss": last_value(progress.rows, "train_loss"),
        "val_loss": last_value(progress.rows, "val_loss"),
        "resumed": resume,
        "images": data.images,
        "vocab_size": len(module.net.tokenizer),
        "world_size": trainer.world_size,
        "precision": str(trainer.precision),
        "train_studies": data.train_studies,
        "train_samples": len(data.train_set),
        **({"context": data.context_counts} if data.context_counts else {}),  # model.context's text, by split
        "checkpoint_dir": str(ckpt_dir),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if trainer.is_global_zero:
        data_config = {**asdict(cfg.data), "images": data.images}  # inference uses the same resolved source
        save_model(out, module.net, data_config, summary)
        write_text(f"{out}.json", json.dumps(summary, indent=2) + "\n")
        write_metrics(progress.rows, csv_path)
        title = f"{run} ({cfg.model.arch}, {cfg.model.target} target, {data.images} images)"
        loss_figure(progress.rows, fig_path, title)
        log.info(
            "train %s: %d steps, train_loss %s, val_loss %s, %.1fs -> %s",
            run,
            summary["steps"],
            summary["train_loss"],
            summary["val_loss"],
            summary["seconds"],
            out,
        )
    return summary
