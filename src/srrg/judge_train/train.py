"""LoRA (QLoRA on a CUDA GPU with bitsandbytes) fine-tuning of a causal LM as a report judge with
the transformers Trainer, then export of the adapter and of a merged model folder.

The merged folder is a plain transformers model + tokenizer, so the project's `local` LLM backend
loads it with `llm.model: <folder>` and any OpenAI-compatible server (vLLM) can serve it: the
`vert` / `green` metrics use the tuned judge unchanged. Loss is on the answer tokens only, and the
prompt is rendered with the same chat-template code the local backend uses at inference.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_parquet, write_parquet, write_text
from srrg.judge_train.dataset import EMPTY_TEXT, EXAMPLE_SCHEMA, OK, PAIR_REQUESTS, TOO_LONG
from srrg.judge_train.epochs import epoch_callback, epoch_table, write_epoch_outputs
from srrg.llm.local_backend import render_prompt, resolve_model
from srrg.settings.judge_train import JudgeTrainConfig
from srrg.settings.llm import LLMConfig
from srrg.text.decode import read_mapping_file

log = logging.getLogger(__name__)
IGNORE = -100  # label of prompt and padding tokens: no loss


def base_source(cfg: JudgeTrainConfig) -> tuple[str, str | None]:
    """(name or folder, GGUF file or None) of the base model, resolved as the local LLM backend does."""
    return resolve_model(LLMConfig(backend="local", model=cfg.model, gguf_file=cfg.gguf_file))


def use_4bit(cfg: JudgeTrainConfig, cuda: bool, has_bnb: bool) -> bool:
    """QLoRA needs a CUDA GPU and bitsandbytes: `auto` uses it when both are there, `4bit` insists."""
    if cfg.quantization == "none":
        return False
    if cfg.quantization == "4bit" and not (cuda and has_bnb):
        missing = [m for m, ok in (("a CUDA GPU", cuda), ("the bitsandbytes package", has_bnb)) if not ok]
        raise UserError(f"judge_train.quantization '4bit' needs {' and '.join(missing)}; use 'auto' or 'none' for LoRA")
    return cuda and has_bnb


def use_bf16(cfg: JudgeTrainConfig, cuda: bool) -> bool:
    import torch

    if cfg.precision == "auto":
        return cuda and torch.cuda.is_bf16_supported()
    return cfg.precision == "bf16"


def load_base(cfg: JudgeTrainConfig, quantize: bool, bf16: bool) -> tuple[Any, Any]:
    """(tokenizer, model) of the base; 4-bit NF4 with double quantization for QLoRA (VERT's setup)."""
    import torch

    from srrg.causal_lm import load_causal_lm, load_tokenizer

    source, gguf = base_source(cfg)
    tokenizer = load_tokenizer(source, gguf)
    dtype = torch.bfloat16 if bf16 else torch.float32
    if quantize:
        if gguf:
            raise UserError(
                "QLoRA loads safetensors weights; "
                "a GGUF base cannot be quantized with bitsandbytes (set quantization: none)"
            )
        from peft import prepare_model_for_kbit_training
        from transformers import BitsAndBytesConfig

        bnb = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        model = load_causal_lm(source, dtype=torch.bfloat16, quantization_config=bnb, device_map={"": 0})
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=cfg.gradient_checkpointing)
    else:
        model = load_causal_lm(source, gguf, dtype)
        if gguf:
            plain_weights(model)
    model.config.use_cache = False
    return tokenizer, model


def plain_weights(model: Any) -> None:
    """Drop the GGUF quantizer marker: transformers dequantizes GGUF weights to floats on load, but
    the leftover marker makes the Trainer refuse to train and would be saved into config.json."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    if getattr(model.config, "_is_quantized", False):
        model.config._is_quantized = False


def lora_config(cfg: JudgeTrainConfig, module_names: Sequence[str]) -> Any:
    """LoRA settings; the exclusion pattern is kept only when it matches a module (dense models
    have no router), since peft warns about a pattern that excludes nothing."""
    from peft import LoraConfig

    targets = cfg.lora_target_modules if isinstance(cfg.lora_target_modules, str) else list(cfg.lora_target_modules)
    pattern = cfg.lora_exclude_modules
    exclude = pattern if pattern and any(re.fullmatch(pattern, n) for n in module_names) else None
    return LoraConfig(
        task_type="CAUSAL_LM", r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
        target_modules=targets, exclude_modules=exclude, bias="none",
    )  # fmt: skip


def attach_lora(model: Any, cfg: JudgeTrainConfig) -> Any:
    """The base wrapped with LoRA adapters; only the adapter weights are trainable."""
    from peft import get_peft_model

    return get_peft_model(model, lora_config(cfg, [n for n, _ in model.named_modules()]))


def encode(
    tokenizer: Any, messages: Sequence[Mapping[str, str]], target: str, max_length: int
) -> dict[str, list[int]] | None:
    """input_ids / labels of one example (prompt tokens labelled IGNORE, answer + end-of-turn token
    learned); None when it is longer than max_length."""
    prompt_ids = tokenizer(render_prompt(tokenizer, messages), add_special_tokens=False)["input_ids"]
    answer_ids = tokenizer(target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    if len(prompt_ids) + len(answer_ids) > max_length:
        return None
    return {"input_ids": prompt_ids + answer_ids, "labels": [IGNORE] * len(prompt_ids) + answer_ids}


@dataclass(frozen=True)
class Collator:
    """Right-pads a batch: pad token ids, attention mask 0 and label IGNORE on the padding."""

    pad_id: int

    def __call__(self, batch: Sequence[Mapping[str, list[int]]]) -> dict[str, Any]:
        import torch

        width = max(len(b["input_ids"]) for b in batch)
        ids = [b["input_ids"] + [self.pad_id] * (width - len(b["input_ids"])) for b in batch]
        labels = [b["labels"] + [IGNORE] * (width - len(b["labels"])) for b in batch]
        mask = [[1] * len(b["input_ids"]) + [0] * (width - len(b["input_ids"])) for b in batch]
        return {"input_ids": torch.tensor(ids), "labels": torch.tensor(labels), "attention_mask": torch.tensor(mask)}


def encode_split(
    tokenizer: Any, examples: pl.DataFrame, split: str, max_length: int
) -> tuple[list[dict[str, list[int]]], list[dict[str, Any]]]:
    """Encoded ok-examples of a split and one status row per example of that split."""
    encoded, rows = [], []
    for row in examples.filter(pl.col("split") == split).iter_rows(named=True):
        item = (
            encode(tokenizer, json.loads(row["messages"]), row["target"], max_length) if row["status"] == OK else None
        )
        status = row["status"] if row["status"] != OK else (OK if item is not None else TOO_LONG)
        if item is not None:
            encoded.append(item)
        rows.append(
            {
                "pair_id": row["pair_id"],
                "split": split,
                "n_tokens": len(item["input_ids"]) if item else None,
                "status": status,
            }
        )
    return encoded, rows


@contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary folder beside `path` that replaces it only when the block succeeds."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def training_arguments(cfg: JudgeTrainConfig, checkpoints: Path, cuda: bool, bf16: bool, has_eval: bool) -> Any:
    from transformers import TrainingArguments

    return TrainingArguments(
        output_dir=str(checkpoints),
        per_device_train_batch_size=cfg.batch_size,
        per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps if cfg.max_steps > 0 else -1,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=cfg.warmup_ratio,
        weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm,
        optim="adamw_torch",
        logging_steps=cfg.logging_steps,
        logging_first_step=True,
        save_strategy="steps",
        save_steps=cfg.save_steps,
        save_total_limit=2,
        eval_strategy="epoch" if has_eval else "no",
        bf16=bf16,
        activation_checkpointing=cfg.gradient_checkpointing,
        use_cpu=not cuda,
        dataloader_pin_memory=cuda,
        seed=cfg.seed,
        data_seed=cfg.seed,
        report_to="none",
        remove_unused_columns=False,
        label_names=["labels"],
    )


@dataclass
class Setup:
    """Everything `fit` trains with, built separately so tests can inspect the model around training."""

    trainer: Any
    model: Any
    tokenizer: Any
    encoded: pl.DataFrame
    quantize: bool
    bf16: bool
    cuda: bool
    epoch_tau: Any = None  # the per-epoch test evaluation (srrg.judge_train.epochs), None without eval_epochs


def scored_test(examples: pl.DataFrame) -> pl.DataFrame:
    """The test split's examples the per-epoch tau asks the model about: those with both reports
    and a human judgement (whatever their target)."""
    return examples.filter(
        (pl.col("split") == "test") & (pl.col("status") != EMPTY_TEXT) & pl.col("human").is_not_null()
    )


def build_trainer(
    examples: pl.DataFrame, cfg: JudgeTrainConfig, checkpoints: Path, mode: str = "score", lower: bool = False
) -> Setup:
    """Base + LoRA, the encoded train/validate splits and a Trainer (validation loss each epoch, and
    Kendall's tau on the test split after each of cfg.eval_epochs: srrg.judge_train.epochs; mode
    is prepare's target, lower whether a lower human judgement is better)."""
    import torch
    from transformers import Trainer

    cuda = torch.cuda.is_available()
    quantize = use_4bit(cfg, cuda, importlib.util.find_spec("bitsandbytes") is not None)
    bf16 = use_bf16(cfg, cuda)
    tokenizer, model = load_base(cfg, quantize, bf16)
    train_set, train_rows = encode_split(tokenizer, examples, "train", cfg.max_length)
    val_set, val_rows = encode_split(tokenizer, examples, "validate", cfg.max_length)
    test_rows = [
        {"pair_id": p, "split": "test", "n_tokens": None, "status": s}
        for p, s in examples.filter(pl.col("split") == "test").select("pair_id", "status").iter_rows()
    ]
    if not train_set:
        raise UserError(
            "no trainable example in the train split (check statuses in examples.parquet and judge_train.max_length)"
        )
    model = attach_lora(model, cfg)
    checkpoints.mkdir(parents=True, exist_ok=True)
    test = scored_test(examples)
    # an answer longer than the longest learned target (+ its end token) is cut off
    longest = max(sum(label != IGNORE for label in item["labels"]) for item in train_set)
    callbacks = (
        [epoch_callback(test, mode, lower, cfg.eval_epochs, tokenizer, max_tokens=longest, batch_size=cfg.batch_size)]
        if cfg.eval_epochs
        else []
    )
    trainer = Trainer(
        model=model,
        args=training_arguments(cfg, checkpoints, cuda, bf16, bool(val_set)),
        train_dataset=train_set,
        eval_dataset=val_set or None,
        data_collator=Collator(tokenizer.pad_token_id),
        callbacks=callbacks,
    )
    schema = {"pair_id": pl.String, "split": pl.String, "n_tokens": pl.Int64, "status": pl.String}
    encoded = pl.DataFrame(train_rows + val_rows + test_rows, schema=schema, orient="row")
    return Setup(trainer, model, tokenizer, encoded, quantize, bf16, cuda, callbacks[0] if callbacks else None)


def run_judge_train_fit(
    prepared_dir: str | Path, cfg: JudgeTrainConfig, out_dir: str | Path, work_dir: str | Path
) -> dict[str, Any]:
    """The judge-train-fit stage: fit on the examples.parquet that judge-train-prepare wrote (its
    prepare.json says the target and whether lower human judgements are better)."""
    prepared = Path(prepared_dir)
    summary = read_mapping_file(prepared / "prepare.json")
    scale = summary.get("scale") or {}
    examples = read_parquet(prepared / "examples.parquet")
    missing = [c for c in EXAMPLE_SCHEMA if c not in examples.columns]
    if missing:
        raise UserError(
            f"{prepared / 'examples.parquet'} lacks column(s) {missing} (an older or other table): "
            "run `srrg judge-train-prepare` again"
        )
    return fit(
        examples, cfg, out_dir, work_dir,
        mode=str(summary.get("target", "score")), lower=bool(scale.get("lower_is_better", False)),
    )  # fmt: skip


def fit(
    examples: pl.DataFrame,
    cfg: JudgeTrainConfig,
    out_dir: str | Path,
    work_dir: str | Path,
    mode: str = "score",
    lower: bool = False,
) -> dict[str, Any]:
    """Train on the train split, resuming from the last checkpoint in work_dir; write
    out_dir/adapter (+ merged), encoded.parquet (a status per pair), train_log.jsonl, fit.json and
    the per-epoch test tau (epoch_tau.csv/.md/.png, srrg.judge_train.epochs)."""
    from transformers.trainer_utils import get_last_checkpoint

    start = time.perf_counter()
    out, checkpoints = Path(out_dir), Path(work_dir) / "checkpoints"
    setup = build_trainer(examples, cfg, checkpoints, mode, lower)
    last = get_last_checkpoint(str(checkpoints))
    result = setup.trainer.train(resume_from_checkpoint=last)
    if setup.epoch_tau is not None:  # a rerun resumed after the last epoch ended skips its end: the model is that one
        setup.epoch_tau.evaluate(setup.trainer.state, setup.model, missing_only=True)
    with atomic_dir(out / "adapter") as tmp:
        setup.model.save_pretrained(tmp)
        setup.tokenizer.save_pretrained(tmp)
    write_parquet(setup.encoded, out / "encoded.parquet")
    history = setup.trainer.state.log_history
    write_text(out / "train_log.jsonl", "".join(json.dumps(entry) + "\n" for entry in history))
    per_epoch = epoch_table(history, cfg.eval_epochs)
    n_test = scored_test(examples).filter(pl.col("request").is_in(PAIR_REQUESTS)).height
    write_epoch_outputs(
        per_epoch, out, f"Kendall τb of the judge being tuned on the {n_test} test pairs by epoch ({mode} target)"
    )
    trainable, total = setup.model.get_nb_trainable_parameters()
    counts = setup.encoded.filter(pl.col("status") == OK).group_by("split").len()
    summary = {
        "base": "/".join(p for p in base_source(cfg) if p),
        "method": "qlora-4bit-nf4" if setup.quantize else "lora",
        "bf16": setup.bf16,
        "device": "cuda" if setup.cuda else "cpu",
        "trainable_params": int(trainable),
        "total_params": int(total),
        "train_examples": int(sum(n for s, n in counts.iter_rows() if s == "train")),
        "validate_examples": int(sum(n for s, n in counts.iter_rows() if s == "validate")),
        "too_long": int((setup.encoded["status"] == TOO_LONG).sum()),
        "steps": int(result.global_step),
        "train_loss": float(result.training_loss),
        "resumed_from": last,
        "eval_loss": [e["eval_loss"] for e in history if "eval_loss" in e],
        "epoch_tau": {e: t if math.isfinite(t) else None for e, t in per_epoch.select("epoch", "kendall").iter_rows()},
        "config": cfg.to_dict(),
    }
    if cfg.merge and not setup.quantize:  # fold the trained adapter in place: no second load
        save_merged(setup.model.merge_and_unload(), setup.tokenizer, out / "merged")
    elif cfg.merge:  # QLoRA: fold into the unquantized base, not into 4-bit weights
        del setup
        run_judge_train_merge(out / "adapter", cfg, out / "merged")
    summary["seconds"] = round(time.perf_counter() - start, 1)
    write_text(out / "fit.json", json.dumps(summary, indent=2) + "\n")
    return summary


def save_merged(model: Any, tokenizer: Any, out_dir: str | Path) -> Path:
    model.config.use_cache = True
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    return Path(out_dir)


def run_judge_train_merge(adapter_dir: str | Path, cfg: JudgeTrainConfig, out_dir: str | Path) -> Path:
    """Base (unquantized, even after QLoRA) + adapter folded into one model folder with the tokenizer:
    what `llm.model` and vLLM load."""
    import torch
    from peft import PeftModel

    tokenizer, base = load_base(cfg, quantize=False, bf16=use_bf16(cfg, torch.cuda.is_available()))
    return save_merged(PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload(), tokenizer, out_dir)
