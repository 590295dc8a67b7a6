"""The LightningModule: optimizer, schedule, logging, and checkpoints without the frozen LLM."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import lightning as L
import numpy as np
import torch

from srrg.config import from_dict
from srrg.model.file import read_blob
from srrg.model.network import ReportGenerator
from srrg.settings.model import ModelConfig, OptimConfig


def cosine_with_warmup(step: int, warmup: int, total: int) -> float:
    """LR multiplier: linear warmup to 1, then cosine decay to 0 at `total` steps."""
    if warmup > 0 and step < warmup:
        return (step + 1) / warmup
    span = max(1, total - warmup)
    progress = min(1.0, (step - warmup) / span)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def param_groups(net: ReportGenerator, lr: float, encoder_lr_scale: float) -> list[dict[str, Any]]:
    """Trainable weights in two AdamW groups: the encoder and projector (the visual path) at
    lr * encoder_lr_scale (docs/model.md), everything else (decoder side, finding head) at `lr`."""
    visual = [p for m in (net.encoder, net.projector) for p in m.parameters() if p.requires_grad]
    ids = {id(p) for p in visual}
    rest = [p for p in net.parameters() if p.requires_grad and id(p) not in ids]
    return [{"params": rest, "lr": lr}, {"params": visual, "lr": lr * encoder_lr_scale}]


ENCODER_PREFIX = "encoder."
HEAD_PREFIX = "finding_head."


def init_encoder(net: ReportGenerator, path: str) -> int:
    """Copy the encoder weights (backbone, BatchNorm statistics, position embedding) of the srrg
    model file `path` into `net.encoder` (model.encoder.init_from, docs/model.md): a run then starts
    from an encoder that already reads the images (e.g. the baseline's, trained with the finding
    loss) and its decoder side only has to learn to read those features. The file must hold every
    encoder tensor with the same shape (same encoder name, image size and token_pool): anything
    else is a ValueError naming the file. When both models have a finding head over the same
    labels, the head comes along (a finding prompt then names what that head learned to see).
    Returns the number of tensors copied."""
    blob = read_blob(path)
    state = blob["state_dict"]
    own = net.encoder.state_dict()
    theirs = {k[len(ENCODER_PREFIX) :]: v for k, v in state.items() if k.startswith(ENCODER_PREFIX)}
    missing = sorted(set(own) - set(theirs))
    shapes = sorted(k for k in set(own) & set(theirs) if own[k].shape != theirs[k].shape)
    if missing or shapes:
        raise ValueError(
            f"model.encoder.init_from {path}: its encoder does not fit this run's (missing {missing[:3]}, "
            f"other shapes {shapes[:3]}); use a model file with the same encoder name, image_size and token_pool"
        )
    net.encoder.load_state_dict({k: theirs[k] for k in own})
    copied = len(own)
    if net.finding_head is not None and blob.get("findings") == net.finding_head.labels:
        head = {k[len(HEAD_PREFIX) :]: v for k, v in state.items() if k.startswith(HEAD_PREFIX)}
        net.finding_head.load_state_dict(head)
        copied += len(head)
    return copied


RNG_KEY = "srrg_rng_state"


def keep_exported(net: ReportGenerator, checkpoint: dict[str, Any]) -> None:
    """A Lightning checkpoint of `net` keeps only the weights its model file exports (the frozen LLM
    stays out) and the random generator states (a resume continues them exactly)."""
    keep = {f"net.{k}" for k in net.export_state_dict()}
    checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k in keep}
    checkpoint[RNG_KEY] = rng_state()


def restore_exported(net: ReportGenerator, checkpoint: dict[str, Any], what: str) -> None:
    """The other half of keep_exported: a checkpoint that lacks an exported weight is refused (it
    belongs to another network), and the saved random generator states come back."""
    expected = {f"net.{k}" for k in net.export_state_dict()}
    missing = sorted(expected - set(checkpoint["state_dict"]))
    if missing:
        raise ValueError(f"checkpoint lacks {len(missing)} {what}, e.g. {missing[:3]}")
    if RNG_KEY in checkpoint:
        set_rng_state(checkpoint[RNG_KEY])


def rng_state() -> dict[str, Any]:
    """Random generator states: stochastic layers (Swin drop-path, decoder dropout) then continue
    after a resume exactly as they would have without the interruption."""
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    # plain lists and tensors only: Lightning loads checkpoints with torch.load(weights_only=True)
    state = {
        "python": [version, list(internal), gauss],
        "numpy": [name, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class ReportModule(L.LightningModule):
    def __init__(
        self,
        model: Mapping[str, Any],
        optim: Mapping[str, Any],
        vocab: list[str] | None = None,
        findings: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.model_cfg = from_dict(ModelConfig, model, "model")
        self.optim_cfg = from_dict(OptimConfig, optim, "optim")
        self.net = ReportGenerator(self.model_cfg, vocab=vocab, findings=findings)
        if self.model_cfg.encoder.init_from:  # a resumed run then loads its checkpoint over it
            init_encoder(self.net, self.model_cfg.encoder.init_from)
        # checkpoints omit a reloadable frozen LLM; on_load_checkpoint checks the rest is complete
        self.strict_loading = False

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> dict[str, torch.Tensor]:
        """Minimizes `total`; the progress log records the report loss and the finding loss apart.
        The batch's `present` (views) and `contexts` (study context text) exist when their switches are on."""
        parts = self.net.losses(
            batch["images"], batch["targets"], batch["positives"], batch.get("present"), batch.get("contexts")
        )
        self.log("train_loss", parts["report"], prog_bar=True, batch_size=len(batch["targets"]))
        out = {"loss": parts["total"], "report_loss": parts["report"].detach()}
        if "findings" in parts:
            out["finding_loss"] = parts["findings"].detach()
        return out

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        """val_loss is the report loss alone: comparable between runs with and without a finding head."""
        loss = self.net.loss(batch["images"], batch["targets"], batch.get("present"), batch.get("contexts"))
        self.log("val_loss", loss, prog_bar=True, batch_size=len(batch["targets"]), sync_dist=True)

    def configure_optimizers(self) -> dict[str, Any]:
        lr = self.optim_cfg.lr
        groups = param_groups(self.net, lr, self.optim_cfg.encoder_lr_scale)
        opt = torch.optim.AdamW(groups, lr=lr, weight_decay=self.optim_cfg.weight_decay)
        total = int(self.trainer.estimated_stepping_batches)
        warmup = self.optim_cfg.warmup_steps
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_with_warmup(s, warmup, total))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        keep_exported(self.net, checkpoint)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        restore_exported(self.net, checkpoint, "trainable weights")
