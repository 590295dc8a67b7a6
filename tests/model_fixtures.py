"""Shared fixtures of the model/infer/tables tests: a toy dataset folder and tiny configs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from srrg.report import Finding, StructuredReport, render_sentences

if TYPE_CHECKING:  # torch is imported only by the tests that build a network
    from srrg.model.network import ReportGenerator
    from srrg.settings.model import ModelConfig

# the tiny model of the workflow tests (a Swin of two stages and a tiny LLM: seconds per step on CPU)
TINY_MODEL = {
    "encoder": {
        "name": "swin_tiny_patch4_window7_224",
        "pretrained": False,
        "image_size": 32,
        "kwargs": {"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4},
    },
    "llm": {"name": "tiny"},
    "baseline": {"d_model": 32, "layers": 2, "heads": 2, "dropout": 0.0},
    "max_target_tokens": 48,
}

REPORTS = [
    StructuredReport((Finding("pleural effusion", 3, "small", "in the right costophrenic angle"),), ("pneumothorax",)),
    StructuredReport((), ("pneumothorax", "consolidation")),
    StructuredReport((Finding("atelectasis", 2, None, "in the lower zone of the left lung"),), ()),
    StructuredReport((Finding("cardiomegaly", 3, "mild", None),), ("pleural effusion",)),
]


def toy_row(
    study_id: str, subject_id: str, split: str, rep: StructuredReport, image_paths: list[str], view: str
) -> dict[str, Any]:
    """One study with the dataset stage's columns, its report as structured JSON and sentences."""
    return {
        "study_id": study_id,
        "subject_id": subject_id,
        "split": split,
        "image_paths": image_paths,
        "view": view,
        "findings": "toy",
        "impression": None,
        "structured": rep.to_json(),
        "sentences": render_sentences(rep),
        "provenance": "{}",
    }


def write_toy_dataset(root: Path, n_train: int = 4, n_val: int = 2, n_test: int = 3, context: bool = False) -> Path:
    """DIR/{train,validate,test}/part-00000.parquet with the dataset stage's columns. context: also
    ingest's indication (`cough <i>`, none for study 1) and prior link (each study's prior is the
    split's previous study; the first has none)."""
    for split, n in (("train", n_train), ("validate", n_val), ("test", n_test)):
        rows: list[dict[str, Any]] = []
        for i in range(n):
            rep = REPORTS[i % len(REPORTS)]
            rows.append(
                toy_row(f"{split[:2]}{i:03d}", f"p{i}", split, rep, [f"{split}/{i}.png"], "PA" if i % 3 else "LATERAL")
            )
            if context:
                rows[-1].update(
                    indication=None if i == 1 else f"cough {i}",
                    prior_study_id=f"{split[:2]}{i - 1:03d}" if i else None,
                    prior_status="ok" if i else "first",
                )
        (root / split).mkdir(parents=True, exist_ok=True)
        pl.DataFrame(rows).write_parquet(root / split / "part-00000.parquet")
    return root


def tiny_train_config(**trainer: Any) -> dict[str, Any]:
    """A train slice that builds in milliseconds: 32 px tiny Swin, 2-layer hidden-32 Llama."""
    return {
        "model": {
            "arch": "llm",
            "target": "json",
            "encoder": {
                "name": "swin_tiny_patch4_window7_224",
                "pretrained": False,
                "image_size": 32,
                "kwargs": {"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4},
            },
            "llm": {"name": "tiny"},
            "baseline": {"d_model": 32, "layers": 2, "heads": 2, "dropout": 0.0, "min_word_count": 1},
            "max_target_tokens": 48,
        },
        "data": {"batch_size": 2},
        "trainer": {"max_steps": 2, "accelerator": "cpu", "devices": 1, "checkpoint_every_n_steps": 1, **trainer},
    }


def tiny_model_config(arch: str = "llm", baseline: dict[str, Any] | None = None, **model: Any) -> ModelConfig:
    """The model config of the generation tests: TINY_MODEL's 32 px Swin and tiny Llama, and a
    2-layer hidden-32 Transformer baseline (`baseline` adds to its settings); `model` sets any
    other ModelConfig field (target, max_target_tokens, ...)."""
    from srrg.settings.model import BaselineConfig, EncoderConfig, FrozenLLMConfig, ModelConfig

    enc = TINY_MODEL["encoder"]
    return ModelConfig(
        arch=arch,
        encoder=EncoderConfig(image_size=enc["image_size"], kwargs=enc["kwargs"]),
        llm=FrozenLLMConfig(name="tiny"),
        baseline=BaselineConfig(d_model=32, layers=2, heads=2, dropout=0.0, **(baseline or {})),
        **{"target": "json", **model},
    )


def tiny_generator(
    arch: str = "llm",
    seed: int = 0,
    vocab: list[str] | None = None,
    char_tokenizer: bool = False,
    baseline: dict[str, Any] | None = None,
    **model: Any,
) -> ReportGenerator:
    """A random network of tiny_model_config in eval mode, its weights drawn from `seed`;
    char_tokenizer: the tiny LLM's character tokenizer for the baseline too (instead of its own)."""
    import torch

    from srrg.model.llm import load_tokenizer
    from srrg.model.network import ReportGenerator

    torch.manual_seed(seed)
    cfg = tiny_model_config(arch, baseline, **model)
    tokenizer = load_tokenizer(cfg.llm) if char_tokenizer else None
    return ReportGenerator(cfg, tokenizer=tokenizer, vocab=vocab).eval()


def sigterm_mid_run(cmd: list[str], env: dict[str, str], marker: str = "step 3/", timeout: float = 300) -> str:
    """Start a training job (`srrg train` / `srrg rl`), send it SIGTERM once its log shows `marker`
    (a logged step, so mid-run), and return the rest of its stderr after checking that it exited
    143 (the status that makes Snakemake rerun the job)."""
    import signal
    import subprocess

    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if marker in line:
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=timeout) == 143, rest[-3000:]
    return rest
