"""`srrg rl`: reinforcement fine-tuning of a trained run with metric rewards (docs/model.md,
"Reinforcement fine-tuning").

Each step samples `group_size` reports per study from the current model (JSON targets under the
report grammar when the model is constrainable, as at inference), scores each against its
reference with the configured metrics (the per-report values of `srrg score`), and minimizes

    L = (1 / sum_i |y_i|) sum_i sum_t ( -A_i log pi(y_it) + beta * k3_it ),
    k3 = exp(log pi_ref - log pi) - (log pi_ref - log pi) - 1  (>= 0, zero where pi = pi_ref),

with A_i = r_i - b (b: the group mean, GRPO; or the greedy decode's reward, SCST), optionally over
the group's standard deviation. With ce_weight w > 0 the minimized loss is (1 - w) L + w CE,
CE the supervised cross-entropy of the reference reports (the mixed objective of Paulus et al.
2017), which keeps the policy near fluent, reference-like reports. Checkpoints, SIGTERM
handling and the trainer are `srrg train`'s (srrg.model.train), so an RL job resumes like a
train job.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.utilities.exceptions import SIGTERMException
from transformers import LogitsProcessorList

from srrg.codedeps import stage_files
from srrg.config import config_hash
from srrg.errors import UserError
from srrg.io import atomic_path, write_text
from srrg.metrics.base import get_metric, score_all
from srrg.model.constrained import ReportConstraint
from srrg.model.datamodule import ReportDataModule
from srrg.model.file import load_model, save_model
from srrg.model.module import keep_exported, restore_exported
from srrg.model.network import ReportGenerator, pad_batch
from srrg.model.train import LAST, SIGTERM_EXIT, build_trainer, code_fingerprint, epoch_steps
from srrg.model.training_log import ProgressLog, duration, write_metrics
from srrg.report import UNPARSEABLE, parse_report
from srrg.settings.model import InferConfig, TrainConfig
from srrg.settings.rl import RewardTerm, RLConfig

log = logging.getLogger("srrg.rl")

COLUMNS = ("step", "loss", "reward_mean", "reward_std", "kl", "unparseable", "lr", "seconds")


# ---- the objective ---------------------------------------------------------------------------


def advantages(
    rewards: torch.Tensor, baseline: torch.Tensor | None = None, scale_by_std: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """(B, G) rewards -> (B, G) advantages: reward minus the group mean (GRPO), or minus
    `baseline` (B,) (the greedy decode's reward, SCST); with scale_by_std divided by the group's
    standard deviation (population, + eps: a group of equal rewards gives 0, not NaN)."""
    base = rewards.mean(dim=1, keepdim=True) if baseline is None else baseline.unsqueeze(1)
    adv = rewards - base
    if scale_by_std:
        adv = adv / (rewards.std(dim=1, keepdim=True, correction=0) + eps)
    return adv


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token estimate of KL(pi || pi_ref) from tokens sampled from pi (Schulman's k3):
    exp(d) - d - 1 with d = log pi_ref - log pi; never negative, exactly zero when pi = pi_ref."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1


def policy_loss(
    logp: torch.Tensor, ref_logp: torch.Tensor | None, mask: torch.Tensor, adv: torch.Tensor, kl_coef: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, mean KL per token) of N sampled sequences: logp/ref_logp/mask (N, T), adv (N,). The
    loss is the mean over all sampled tokens of -A log pi + kl_coef * k3: a token-level mean, so a
    report's weight grows with its length. (A mean per report first would give each token of a
    short report more weight, and with it push a positive advantage towards short reports, such as
    the no-findings one, and a negative one towards long reports.)"""
    mask = mask.to(logp.dtype)
    tokens = mask.sum().clamp(min=1)
    kl = torch.zeros_like(logp) if ref_logp is None else kl_estimate(logp, ref_logp)
    per_token = -adv.unsqueeze(1) * logp + kl_coef * kl
    loss = (per_token * mask).sum() / tokens
    return loss, (kl.detach() * mask).sum() / tokens


def mixed_loss(rl_loss: torch.Tensor, ce_loss: torch.Tensor | None, ce_weight: float) -> torch.Tensor:
    """(1 - ce_weight) * rl_loss + ce_weight * ce_loss; rl_loss alone when ce_weight is 0."""
    if ce_weight == 0 or ce_loss is None:
        return rl_loss
    return (1 - ce_weight) * rl_loss + ce_weight * ce_loss


# ---- rewards ---------------------------------------------------------------------------------


def term_key(term: RewardTerm) -> str:
    return term.key or term.metric


def reward_signature(terms: Sequence[RewardTerm]) -> str:
    """The reward as its metrics' signatures (docs/metrics.md, "Signatures") with their weights:
    what the model file's summary and Table 1's caption name."""
    parts = []
    for term in terms:
        sig = get_metric(term.metric, **term.options).signature(term_key(term))
        parts.append(sig if len(terms) == 1 and term.weight == 1 else f"{term.weight:g} x {sig}")
    return " + ".join(parts)


def rewards(refs: Sequence[str], hyps: Sequence[str], terms: Sequence[RewardTerm]) -> list[float]:
    """One reward per pair: the weighted sum of each term's per-report value (score_all, the code
    of `srrg score`; judges go through their LLM client, cache and privacy guard). A value the
    metric leaves undefined (NaN) counts 0."""
    total = [0.0] * len(hyps)
    for term in terms:
        result = score_all(refs, hyps, [term.metric], {term.metric: term.options})
        key = term_key(term)
        if key not in result.per_report:
            raise ValueError(f"metric {term.metric} has no per-report value {key!r}; keys: {sorted(result.per_report)}")
        for i, value in enumerate(result.per_report[key]):
            v = float(value) if value is not None else math.nan
            total[i] += term.weight * (0.0 if math.isnan(v) else v)
    return total


# ---- sampling and log-likelihoods ------------------------------------------------------------


def cut_at_eos(rows: list[list[int]], eos: int) -> list[list[int]]:
    """Each generated row up to and including its first EOS (the rest is padding)."""
    return [row[: row.index(eos) + 1] if eos in row else row for row in rows]


def max_new(net: ReportGenerator, cfg: RLConfig) -> int:
    budget = cfg.max_new_tokens or net.cfg.max_target_tokens
    return min(budget, net.cfg.max_target_tokens) if net.llm is None else budget  # the decoder's positions


def group_search(cfg: RLConfig) -> dict[str, Any]:
    """generate()'s arguments that draw a study's group: random samples (temperature, top-p), or
    the group_size best beams of a group_size-wide beam search (sampler: beam)."""
    if cfg.sampler == "beam":
        return {"do_sample": False, "num_beams": cfg.group_size}
    return {"do_sample": True, "temperature": cfg.temperature, "top_p": cfg.top_p, "top_k": 0}


@torch.no_grad()
def sample(net: ReportGenerator, img: torch.Tensor, cfg: RLConfig) -> list[list[int]]:
    """group_size token sequences per study (row i * G + j: study i's j-th sample or beam), each
    ending in EOS unless cut by the budget. A constrainable JSON model decodes under the report
    grammar (docs/model.md, "Constrained generation"), so every finished sample parses."""
    tok, budget = net.tokenizer, max_new(net, cfg)
    kwargs: dict[str, Any] = {
        **group_search(cfg),
        "num_return_sequences": cfg.group_size,
        "max_new_tokens": budget,
        "pad_token_id": tok.pad_token_id,
        "eos_token_id": tok.eos_token_id,
    }
    if net.constrainable:
        kwargs["logits_processor"] = LogitsProcessorList(
            [ReportConstraint(net.report_grammar(), tok, budget, 2 * cfg.group_size)]
        )
    if net.llm is not None:
        embeds = net._prompt_embeds(img)
        attention = torch.ones(embeds.shape[:2], dtype=torch.long, device=img.device)
        out = net.llm.generate(inputs_embeds=embeds, attention_mask=attention, **kwargs)
    else:
        assert net.decoder is not None
        bos = torch.full((img.shape[0], 1), net.decoder.config.bos_token_id, dtype=torch.long, device=img.device)
        out = net.decoder.generate(
            input_ids=bos, attention_mask=torch.ones_like(bos), encoder_hidden_states=img, **kwargs
        )[:, 1:]
    return cut_at_eos(out.tolist(), tok.eos_token_id)


def sequence_logprobs(
    net: ReportGenerator, img: torch.Tensor, seqs: list[list[int]]
) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, T) log-probabilities of each sequence's tokens given its image tokens img (N, ., .)
    under `net` (teacher forcing, as in training), and their 0/1 mask."""
    ids, mask = pad_batch([s or [net.tokenizer.eos_token_id] for s in seqs], net.tokenizer.pad_token_id, img.device)
    if net.llm is not None:
        head = net._prompt_embeds(img)
        embeds = torch.cat([head, net.llm.get_input_embeddings()(ids)], dim=1)
        ones = torch.ones(head.shape[:2], dtype=torch.long, device=img.device)
        hidden = net.llm.base_model(
            inputs_embeds=embeds, attention_mask=torch.cat([ones, mask], dim=1)
        ).last_hidden_state
        start = head.shape[1] - 1  # the last prompt position predicts the first token
        logits = net.llm.get_output_embeddings()(hidden[:, start : start + ids.shape[1]]).float()
    else:
        assert net.decoder is not None
        bos = torch.full((ids.shape[0], 1), net.decoder.config.bos_token_id, dtype=torch.long, device=img.device)
        logits = net.decoder(
            input_ids=torch.cat([bos, ids], dim=1),
            attention_mask=torch.cat([torch.ones_like(bos), mask], dim=1),
            encoder_hidden_states=img,
        ).logits[:, :-1]
    logp = torch.log_softmax(logits, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    return logp * mask, mask


def unparseable_share(texts: Sequence[str], target: str) -> float:
    """Share of samples a JSON target cannot parse (0 for sentence targets)."""
    if target != "json" or not texts:
        return 0.0
    return sum(parse_report(t)[1] == UNPARSEABLE for t in texts) / len(texts)


# ---- Lightning ---------------------------------------------------------------------------------


class RLModule(L.LightningModule):
    """The policy (a ReportGenerator) and its frozen starting copy; a checkpoint carries the
    policy's exported weights, the optimizer and the random states (the reference is rebuilt from
    the base model file)."""

    def __init__(self, net: ReportGenerator, cfg: RLConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.net = net
        self.ref = copy.deepcopy(net).eval().requires_grad_(False)
        if not cfg.tune_encoder:
            net.encoder.requires_grad_(False)
        self.strict_loading = False

    def train(self, mode: bool = True) -> RLModule:
        """No dropout while sampling and scoring: the log-likelihoods are those of the sampler."""
        super().train(mode)
        self.net.eval()
        self.ref.eval()
        return self

    def step_values(self, images: torch.Tensor, refs: list[str]) -> dict[str, Any]:
        """Sample, score, and the loss of one batch (no optimizer step)."""
        cfg, net, g = self.cfg, self.net, self.cfg.group_size
        img = net.image_tokens(images)  # with gradients: the log-likelihoods below need them
        seqs = sample(net, img.detach(), cfg)
        texts = [t.strip() for t in net.tokenizer.batch_decode(seqs, skip_special_tokens=True)]
        group_refs = [r for r in refs for _ in range(g)]
        reward = torch.tensor(rewards(group_refs, texts, cfg.reward), dtype=torch.float32).view(len(refs), g)
        base = None
        if cfg.baseline == "greedy":
            greedy = net.generate(images, InferConfig(num_beams=1, max_new_tokens=max_new(net, cfg)))
            base = torch.tensor(rewards(refs, [c[0] for c in greedy], cfg.reward), dtype=torch.float32)
        adv = advantages(reward, base, cfg.scale_by_std).flatten().to(images.device)
        logp, mask = sequence_logprobs(net, img.repeat_interleave(g, dim=0), seqs)
        ref_logp = None
        if cfg.kl_coef > 0:
            with torch.no_grad():
                ref_logp, _ = sequence_logprobs(self.ref, self.ref.image_tokens(images).repeat_interleave(g, 0), seqs)
        loss, kl = policy_loss(logp, ref_logp, mask, adv, cfg.kl_coef)
        ce = net.token_loss(img, refs) if cfg.ce_weight > 0 else None
        loss = mixed_loss(loss, ce, cfg.ce_weight)
        return {
            "loss": loss,
            "reward_mean": float(reward.mean()),
            "reward_std": float(reward.std(correction=0)),
            "kl": float(kl),
            "unparseable": unparseable_share(texts, net.cfg.target),
        }

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> dict[str, Any]:
        return self.step_values(batch["images"], batch["targets"])

    def configure_optimizers(self) -> torch.optim.Optimizer:
        params = [p for p in self.net.parameters() if p.requires_grad]
        return torch.optim.AdamW(params, lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        keep_exported(self.net, checkpoint)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        restore_exported(self.net, checkpoint, "weights of the policy")


class RLLog(ProgressLog):
    """One metrics row per RL step (COLUMNS) and a plain log line every N steps; the rows travel in
    checkpoints (ProgressLog's state), so a resumed run's CSV holds the whole run."""

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, *args: Any) -> None:
        step = trainer.global_step
        lr = float(trainer.optimizers[0].param_groups[0]["lr"]) if trainer.optimizers else math.nan
        elapsed = time.perf_counter() - self._start[0] if self._start else 0.0
        row = {k: outputs[k] for k in ("reward_mean", "reward_std", "kl", "unparseable")}
        self.rows.append({"step": step, "loss": float(outputs["loss"]), **row, "lr": lr, "seconds": round(elapsed, 2)})
        if step % self.every == 0 or step >= trainer.max_steps:
            done = step - (self._start[1] if self._start else 0)
            rate = done / elapsed if elapsed > 0 else 0.0
            eta = duration((trainer.max_steps - step) / rate) if rate > 0 else "?"
            if trainer.is_global_zero:
                log.info(
                    "step %d/%d reward %.4f (std %.4f) kl %.4f unparseable %.3f %.2f it/s ETA %s",
                    step,
                    trainer.max_steps,
                    row["reward_mean"],
                    row["reward_std"],
                    row["kl"],
                    row["unparseable"],
                    rate,
                    eta,
                )
                self.write()

    def write(self) -> None:
        if self.csv_path is not None:
            write_rl_metrics(self.rows, self.csv_path)


def write_rl_metrics(rows: list[dict[str, Any]], path: Path) -> None:
    """The RL metrics CSV: COLUMNS, one row per step."""
    write_metrics(rows, path, COLUMNS)


def reward_figure(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """Mean reward per step with its spread (one std) and the KL estimate on a second axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    mean = [r["reward_mean"] for r in rows]
    std = [r["reward_std"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=110)
    ax.plot(steps, mean, label="reward (mean of the samples)", linewidth=1)
    ax.fill_between(steps, [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)], alpha=0.2)
    ax.set_xlabel("RL step")
    ax.set_ylabel("reward")
    kl_ax = ax.twinx()
    kl_ax.plot(steps, [r["kl"] for r in rows], color="tab:red", linewidth=0.8, alpha=0.7, label="KL to start")
    kl_ax.set_ylabel("KL estimate", color="tab:red")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


# ---- the run ---------------------------------------------------------------------------------


def file_digest(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


PLACEMENT_KEYS = ("accelerator", "devices", "num_nodes", "strategy", "checkpoint_every_n_steps", "log_every_n_steps")


def rl_checkpoint_dir(cfg: RLConfig, run: str, base_model: str | Path) -> Path:
    """checkpoint_dir/<run>/<hash of the RL config (placement keys aside), the starting model's
    bytes and the code `srrg rl` runs>: a changed reward, model or code starts afresh."""
    data = cfg.to_dict()
    data["trainer"] = {k: v for k, v in data["trainer"].items() if k not in PLACEMENT_KEYS}
    data.pop("checkpoint_dir")
    data["base_model"] = file_digest(base_model)
    data["code"] = code_fingerprint(stage_files("rl"))
    return Path(cfg.checkpoint_dir) / run / config_hash(data)


def outputs_beside(out: str | Path) -> tuple[Path, Path]:
    """The metrics CSV and the reward figure of an RL run: beside its model file."""
    folder = Path(out).parent
    return folder / "metrics.csv", folder / "reward.png"


def run_rl(
    dataset_dir: str | Path, base_model: str | Path, out: str | Path, cfg: RLConfig, run: str = "default"
) -> dict[str, Any]:
    """Fine-tune the model file `base_model` with the RL objective on the training split (resuming
    from the last checkpoint of the same settings, model and code), then write on rank 0 `out`
    (a model file like `srrg train`'s), `out`.json (summary, with the reward's signature),
    metrics.csv and reward.png. Returns the summary."""
    start = time.perf_counter()
    L.seed_everything(cfg.trainer.seed, workers=True)
    signature = reward_signature(cfg.reward)  # an unusable reward fails before any model loads
    net, data_cfg = load_model(base_model, torch.device("cpu"))
    if net.cfg.context.per_study_prompt:
        raise UserError(
            f"srrg rl: {base_model} reads a per-study prompt (model.context findings/indication/prior_report: the "
            "LLM's prompt or the baseline decoder's prefix); reinforcement fine-tuning samples from the shared "
            "prompt only so far"
        )
    ckpt_dir = rl_checkpoint_dir(cfg, run, base_model)
    data_cfg = replace(
        data_cfg, batch_size=cfg.batch_size, max_train_studies=cfg.max_studies, max_val_studies=1
    )  # no validation: the module has no validation_step
    data = ReportDataModule(dataset_dir, data_cfg, net.cfg.target, net.cfg.encoder.image_size, cfg.trainer.seed)
    data.setup("fit")
    assert data.train_set is not None
    module = RLModule(net, cfg)
    csv_path, fig_path = outputs_beside(out)
    progress = RLLog(cfg.trainer.log_every_n_steps, csv_path)
    trainer = build_trainer(TrainConfig(trainer=cfg.trainer), ckpt_dir, progress)
    if cfg.trainer.max_epochs is not None:
        steps = epoch_steps(
            len(data.train_set),
            cfg.batch_size,
            trainer.world_size,
            cfg.trainer.accumulate_grad_batches,
            cfg.trainer.max_epochs,
        )
        trainer.fit_loop.epoch_loop.max_steps = steps
    resume = (ckpt_dir / LAST).is_file()
    log.info(
        "rl %s: reward %s, G=%d (%s), baseline %s, kl_coef %g, %d training studies; %s",
        run,
        signature,
        cfg.group_size,
        cfg.sampler,
        cfg.baseline,
        cfg.kl_coef,
        len(data.train_set),
        f"resuming from {ckpt_dir / LAST}" if resume else f"checkpoints in {ckpt_dir}",
    )
    try:
        trainer.fit(module, datamodule=data, ckpt_path=str(ckpt_dir / LAST) if resume else None)
    except SIGTERMException:
        raise SystemExit(SIGTERM_EXIT) from None  # a failed job to the scheduler: Snakemake reruns it
    rows = progress.rows
    first, last = (rows[0], rows[-1]) if rows else ({}, {})
    summary = {
        "run": run,
        "rl": {
            "from": str(base_model),
            "reward": [asdict(t) for t in cfg.reward],
            "reward_signature": signature,
            "group_size": cfg.group_size,
            "sampler": cfg.sampler,
            "baseline": cfg.baseline,
            "scale_by_std": cfg.scale_by_std,
            "kl_coef": cfg.kl_coef,
            "ce_weight": cfg.ce_weight,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "lr": cfg.lr,
        },
        "steps": trainer.global_step,
        "reward_first": first.get("reward_mean"),
        "reward_last": last.get("reward_mean"),
        "kl_last": last.get("kl"),
        "unparseable_last": last.get("unparseable"),
        "resumed": resume,
        "images": data.images,
        "world_size": trainer.world_size,
        "train_studies": data.train_studies,
        "checkpoint_dir": str(ckpt_dir),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if trainer.is_global_zero:
        save_model(out, module.net, asdict(data_cfg), summary)
        write_text(f"{out}.json", json.dumps(summary, indent=2) + "\n")
        write_rl_metrics(rows, csv_path)
        reward_figure(rows, fig_path, f"{run}: reward {signature}")
        log.info(
            "rl %s: %d steps, reward %s -> %s, %.1fs -> %s",
            run,
            summary["steps"],
            summary["reward_first"],
            summary["reward_last"],
            summary["seconds"],
            out,
        )
    return summary
