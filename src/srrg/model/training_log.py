"""Training that can be watched: a plain log line every N steps, a metrics CSV and a loss figure.

The log line has no carriage returns, so it reads the same in a terminal, a Snakemake log and a
SLURM output file. The rows travel in checkpoints, so a resumed run's CSV holds the whole run.
"""

from __future__ import annotations

import csv
import logging
import math
import time
from pathlib import Path
from typing import Any

import lightning as L

from srrg.io import atomic_path

log = logging.getLogger("srrg.train")

COLUMNS = ("step", "train_loss", "finding_loss", "val_loss", "lr", "seconds")


def duration(seconds: float) -> str:
    """1h02m, 3m05s or 12s."""
    s = int(round(max(0.0, seconds)))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def progress_line(step: int, total: int, loss: float, lr: float, rate: float, finding_loss: float | None = None) -> str:
    """`step 40/400 loss 1.2345 lr 4.9e-04 3.21 it/s ETA 1m52s` (rate in optimizer steps/s); with a
    finding head `finding_loss 0.1234` follows the report loss."""
    eta = duration((total - step) / rate) if rate > 0 else "?"
    extra = f" finding_loss {finding_loss:.4f}" if finding_loss is not None else ""
    return f"step {step}/{total} loss {loss:.4f}{extra} lr {lr:.2e} {rate:.2f} it/s ETA {eta}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class ProgressLog(L.Callback):
    """Logs every `every` optimizer steps (and the last one) on rank 0 and keeps one metrics row per
    step; `csv_path`, when set, is rewritten at each log line so it can be watched."""

    def __init__(self, every: int, csv_path: Path | None = None) -> None:
        self.every, self.csv_path = max(1, every), csv_path
        self.rows: list[dict[str, Any]] = []
        self._start: tuple[float, int] | None = None
        self._window: list[float] = []
        self._finding_window: list[float] = []

    def state_dict(self) -> dict[str, Any]:
        return {"rows": self.rows}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rows = list(state.get("rows", []))

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._start = (time.perf_counter(), trainer.global_step)

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """train_loss is the report loss (`report_loss` when the step returns its parts)."""
        parts = outputs if isinstance(outputs, dict) else {"loss": outputs}
        loss = parts.get("report_loss", parts.get("loss"))
        if loss is None:
            return
        self._window.append(float(loss))
        finding = parts.get("finding_loss")
        if finding is not None:
            self._finding_window.append(float(finding))
        step = trainer.global_step
        if self.rows and self.rows[-1]["step"] == step:
            return  # still accumulating gradients for this step
        lr = float(trainer.optimizers[0].param_groups[0]["lr"]) if trainer.optimizers else math.nan
        elapsed = time.perf_counter() - self._start[0] if self._start else 0.0
        self.rows.append(
            {
                "step": step,
                "train_loss": float(loss),
                "finding_loss": None if finding is None else float(finding),
                "val_loss": None,
                "lr": lr,
                "seconds": round(elapsed, 2),
            }
        )
        if step % self.every == 0 or step >= trainer.max_steps:
            done = step - (self._start[1] if self._start else 0)
            mean, finding_mean = _mean(self._window), _mean(self._finding_window)
            self._window, self._finding_window = [], []
            if trainer.is_global_zero:
                log.info(
                    progress_line(
                        step, trainer.max_steps, mean or 0.0, lr, done / elapsed if elapsed > 0 else 0.0, finding_mean
                    )
                )
                self.write()

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        value = trainer.callback_metrics.get("val_loss")
        if value is None or trainer.sanity_checking:
            return
        if self.rows and self.rows[-1]["step"] == trainer.global_step:
            self.rows[-1]["val_loss"] = float(value)
        else:
            self.rows.append(
                {
                    "step": trainer.global_step,
                    "train_loss": None,
                    "finding_loss": None,
                    "val_loss": float(value),
                    "lr": None,
                    "seconds": None,
                }
            )
        if trainer.is_global_zero:
            log.info("step %d/%d val_loss %.4f", trainer.global_step, trainer.max_steps, float(value))
            self.write()

    def write(self) -> None:
        if self.csv_path is not None:
            write_metrics(self.rows, self.csv_path)


def write_metrics(rows: list[dict[str, Any]], path: Path, columns: tuple[str, ...] = COLUMNS) -> None:
    """A metrics CSV, by default step, train_loss, finding_loss, val_loss, lr, seconds (empty cells
    where a value was not measured); srrg rl writes its own columns through it."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows({k: ("" if r.get(k) is None else r[k]) for k in columns} for r in rows)


def loss_figure(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Training (report) loss by step, validation loss where measured and the finding loss when the
    run has a finding head, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train = [(r["step"], r["train_loss"]) for r in rows if r.get("train_loss") is not None]
    val = [(r["step"], r["val_loss"]) for r in rows if r.get("val_loss") is not None]
    finding = [(r["step"], r["finding_loss"]) for r in rows if r.get("finding_loss") is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=110)
    if train:
        ax.plot(*zip(*train), label="train loss", linewidth=1)
    if val:
        ax.plot(*zip(*val), "o-", label="validation loss")
    if finding:
        ax.plot(*zip(*finding), label="finding loss (BCE)", linewidth=1, alpha=0.7)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
