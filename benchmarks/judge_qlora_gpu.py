"""QLoRA step time and GPU memory of judge fine-tuning (srrg.judge_train) on a lent CUDA GPU.

Runs a few optimizer steps of the VERT recipe (4-bit NF4 base, LoRA r=32 / alpha=64 on all linear
layers except MoE routers, AdamW + cosine, lr 2e-4) on synthetic rated pairs with VERT prompts of
realistic length, through the same build_trainer() that `srrg judge-train-fit` uses. Weights must
already be on the machine (a folder, or a hub name present in the local Hugging Face cache);
nothing is downloaded. CPU CI never runs it.

    python benchmarks/judge_qlora_gpu.py --model /models/Qwen3-30B-A3B-Instruct-2507 --steps 10
    python benchmarks/judge_qlora_gpu.py --model Qwen/Qwen2.5-3B-Instruct --batch-size 2

Prints one JSON line: model, method, trainable parameters, mean/median step time after warm-up,
tokens per step, peak GPU memory. Exits 2 with a clear message when there is no CUDA GPU, no
bitsandbytes or no local weights.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn


def fail(message: str) -> NoReturn:
    print(f"judge_qlora_gpu: {message}", file=sys.stderr)
    raise SystemExit(2)


def local_weights(name: str) -> str:
    """A local folder with config.json, or the cached snapshot of a hub name (never downloads)."""
    path = Path(name)
    if path.is_dir():
        if not (path / "config.json").exists():
            fail(f"{path} has no config.json: not a transformers model folder")
        return str(path)
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name, local_files_only=True)
    except Exception as exc:  # any miss in the offline cache means: no local weights
        fail(
            f"no local weights for {name!r} (not a folder, not in the Hugging Face cache: {type(exc).__name__}); "
            "pass --model /path/to/model-folder"
        )


def synthetic_examples(n: int, words: int):
    """n rated pairs, one per case, with reports of about `words` words."""
    import polars as pl

    from srrg.metaeval.readers.common import PAIRS_SCHEMA, RATINGS_SCHEMA, RatingsDataset

    sentence = "There is a small left pleural effusion with adjacent atelectasis in the left lower lobe. "
    body = " ".join([sentence] * max(1, words // len(sentence.split())))
    pairs = [
        {"pair_id": f"{i}:c", "reference": f"Case {i}. {body}", "candidate": f"{body} Case {i}."} for i in range(n)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="Qwen/Qwen3-30B-A3B-Instruct-2507", help="model folder or cached hub name")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the timing")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--report-words", type=int, default=150)
    parser.add_argument("--gradient-checkpointing", action="store_true")
    args = parser.parse_args()

    import importlib.util

    import torch

    if not torch.cuda.is_available():
        fail(
            "no CUDA GPU: QLoRA needs one (run this on a GPU node; "
            "CPU LoRA is tested by tests/judges/test_judge_train.py)"
        )
    if importlib.util.find_spec("bitsandbytes") is None:
        fail("bitsandbytes is not installed: pip install bitsandbytes (QLoRA 4-bit NF4)")
    source = local_weights(args.model)

    from transformers import TrainerCallback

    from srrg.judge_train.dataset import build_examples
    from srrg.judge_train.train import build_trainer
    from srrg.settings.judge_train import JudgeTrainConfig

    steps = args.steps + args.warmup
    cfg = JudgeTrainConfig(
        model=source,
        quantization="4bit",
        max_steps=steps,
        batch_size=args.batch_size,
        grad_accum=1,
        test_fraction=0.0,
        validate_fraction=0.0,
        logging_steps=max(1, steps),
        save_steps=10**9,
        gradient_checkpointing=args.gradient_checkpointing,
        max_words=args.report_words,
    )
    examples, _ = build_examples(synthetic_examples(steps * args.batch_size, args.report_words), cfg)

    class Timer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self.start = 0.0

        def on_step_begin(self, *a, **k):  # noqa: ANN002, ANN003
            torch.cuda.synchronize()
            self.start = time.perf_counter()

        def on_step_end(self, *a, **k):  # noqa: ANN002, ANN003
            torch.cuda.synchronize()
            self.times.append(time.perf_counter() - self.start)

    with tempfile.TemporaryDirectory() as tmp:
        load_start = time.perf_counter()
        setup = build_trainer(examples, cfg, Path(tmp) / "ckpt")
        load_s = time.perf_counter() - load_start
        timer = Timer()
        setup.trainer.add_callback(timer)
        torch.cuda.reset_peak_memory_stats()
        setup.trainer.train()
    timed = timer.times[args.warmup :] or timer.times
    trainable, total = setup.model.get_nb_trainable_parameters()
    print(
        json.dumps(
            {
                "model": args.model,
                "method": "qlora-4bit-nf4" if setup.quantize else "lora",
                "device": torch.cuda.get_device_name(0),
                "trainable_params": int(trainable),
                "total_params": int(total),
                "batch_size": args.batch_size,
                "tokens_per_step": int(setup.encoded["n_tokens"].drop_nulls().mean() * args.batch_size),
                "steps_timed": len(timed),
                "step_s_mean": round(statistics.mean(timed), 4),
                "step_s_median": round(statistics.median(timed), 4),
                "load_s": round(load_s, 1),
                "peak_gpu_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
