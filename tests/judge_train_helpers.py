"""Shared pieces of the judge fine-tuning tests: a synthetic rating set, a RaTE-Eval-layout folder
with its own train/test files, a tiny Llama base saved as a model folder, and tiny LoRA settings."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from srrg.metaeval.readers.common import PAIRS_SCHEMA, RATINGS_SCHEMA, RatingsDataset
from srrg.settings.judge_train import JudgeTrainConfig


def synthetic(n_cases: int = 6, per_case: int = 2) -> RatingsDataset:
    """n_cases references, each judged against per_case candidates, rated 1-5 by one rater."""
    pairs = [
        {"pair_id": f"{c}:{k}", "reference": f"finding {c} in the right lung", "candidate": f"candidate {k}"}
        for c in range(n_cases)
        for k in range(per_case)
    ]
    ratings = [
        {
            "pair_id": p["pair_id"],
            "rater": "0",
            "kind": "rating",
            "category": "",
            "significance": "",
            "value": float(i % 5 + 1),
        }
        for i, p in enumerate(pairs)
    ]
    return RatingsDataset(
        "synthetic",
        pl.DataFrame(pairs, schema=PAIRS_SCHEMA, orient="row"),
        pl.DataFrame(ratings, schema=RATINGS_SCHEMA, orient="row"),
    )


def rate_eval_folder(root, n_train_cases=10, n_test_cases=3, shared=True):
    """Task2_paragraph_rate/rate_{train,test}.csv (gt_report, similar_report, Score), two candidates
    per reference; with shared, the test file's first reference also occurs in the training file."""
    folder = root / "Task2_paragraph_rate"
    folder.mkdir(parents=True)
    train = [(f"Train finding {c}.", f"Candidate {k} of {c}.", (c + k) % 5 * 0.75) for c in range(n_train_cases)
             for k in range(2)]  # fmt: skip
    test = [(f"Test finding {c}.", f"Other {k} of {c}.", (c + 2 * k) % 5 * 0.5) for c in range(n_test_cases)
            for k in range(2)]  # fmt: skip
    if shared:
        train.append(("Test finding 0.", "A leaked candidate.", 3.0))
    for name, rows in (("rate_train.csv", train), ("rate_test.csv", test)):
        pl.DataFrame(rows, schema=["gt_report", "similar_report", "Score"], orient="row").write_csv(folder / name)
    return folder


def save_tiny_base(folder: Path) -> Path:
    """A 2-layer Llama with a character tokenizer (ChatML template) saved as a model folder."""
    import torch

    from srrg.model.tiny import tiny_llm, tiny_tokenizer

    torch.set_num_threads(1)
    tok = tiny_tokenizer()
    torch.manual_seed(0)
    tiny_llm(len(tok)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def tiny_cfg(base: Path, **kw) -> JudgeTrainConfig:
    opts = dict(
        model=str(base),
        max_steps=3,
        batch_size=2,
        grad_accum=1,
        lora_r=4,
        lora_alpha=8,
        lora_dropout=0.0,
        max_words=8,
        logging_steps=1,
        save_steps=2,
        learning_rate=1e-2,
    )
    return JudgeTrainConfig(**{**opts, **kw})
