"""Training throughput of the image-to-report model: tokens/s and images/s per optimizer step.

Paper-sized by default (swin_base_patch4_window7_224 at 224 px + a ~3B LLM): the LLM is loaded
from --llm when that path exists locally, otherwise a randomly initialized model with the
Qwen2.5-3B shape is built on the device (same FLOPs, no download). Run it on a GPU:

    python benchmarks/gpu_train_throughput.py --steps 20 --batch-size 8
    python benchmarks/gpu_train_throughput.py --tiny          # CPU smoke test (seconds)

It prints one JSON line with what it measured (and the configuration it measured).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from srrg.model.config import EncoderConfig, FrozenLLMConfig, ModelConfig
from srrg.model.llm import load_tokenizer
from srrg.model.network import ReportGenerator
from srrg.model.prompt import target_token_ids

# Qwen2.5-3B shape (config.json of Qwen/Qwen2.5-3B-Instruct)
QWEN25_3B = dict(vocab_size=151936, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
                 num_attention_heads=16, num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=True)


def random_llm(device: torch.device, dtype: torch.dtype) -> Qwen2ForCausalLM:
    """A random model of the 3B shape, initialized directly on the device in the target dtype."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with device:
            return Qwen2ForCausalLM(Qwen2Config(**QWEN25_3B))
    finally:
        torch.set_default_dtype(previous)


def build(args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> tuple[ReportGenerator, str]:
    if args.tiny:
        enc = EncoderConfig(image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4})
        return ReportGenerator(ModelConfig(encoder=enc, llm=FrozenLLMConfig(name="tiny"))), "tiny"
    enc = EncoderConfig(name=args.encoder, pretrained=False, image_size=args.image_size, kwargs={})
    if args.llm and Path(args.llm).exists():
        return ReportGenerator(ModelConfig(encoder=enc, llm=FrozenLLMConfig(name=args.llm, dtype="bfloat16"))), args.llm
    tok = load_tokenizer(FrozenLLMConfig(name="tiny"))  # token ids only; the vocabulary size is the 3B one
    return ReportGenerator(ModelConfig(encoder=enc, llm=FrozenLLMConfig(name="tiny")), tokenizer=tok,
                           llm=random_llm(device, dtype)), "random Qwen2.5-3B shape"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="tiny encoder + tiny LLM on CPU (smoke test)")
    parser.add_argument("--encoder", default="swin_base_patch4_window7_224")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--llm", default="", help="local path of a causal LM (else random 3B-shaped)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--target-chars", type=int, default=600, help="length of the synthetic target text")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.tiny else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    torch.manual_seed(0)
    net, llm_name = build(args, device, dtype)
    net = net.to(device).train()
    if args.tiny:
        args.batch_size, args.steps, args.warmup = 2, 3, 1
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    unit = '{"name": "pleural effusion", "probability": 3, "level": "small", "location": "in the right lung"}, '
    text = (unit * (args.target_chars // len(unit) + 1))[: args.target_chars]
    targets = [text] * args.batch_size
    size = net.cfg.encoder.image_size
    images = torch.randn(args.batch_size, 3, size, size, device=device)
    n_target = sum(len(t) for t in target_token_ids(net.tokenizer, targets, net.cfg.max_target_tokens))
    with torch.no_grad():
        n_image = net.image_tokens(images[:1]).shape[1]
    n_prompt = len(net.prompt.prefix_ids) + n_image + len(net.prompt.suffix_ids)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        with autocast:
            loss = net.loss(images, targets)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(args.warmup):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    result = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "encoder": net.cfg.encoder.name, "image_size": size, "llm": llm_name,
        "trainable_params": sum(p.numel() for p in net.parameters() if p.requires_grad),
        "frozen_params": sum(p.numel() for p in net.parameters() if not p.requires_grad),
        "batch_size": args.batch_size, "steps": args.steps, "seconds": round(seconds, 3),
        "prompt_tokens_per_sample": n_prompt, "target_tokens_per_batch": n_target,
        "images_per_s": round(args.batch_size * args.steps / seconds, 2),
        "tokens_per_s": round((n_prompt * args.batch_size + n_target) * args.steps / seconds, 1),
        "target_tokens_per_s": round(n_target * args.steps / seconds, 1),
        "last_loss": round(loss, 4),
        "peak_gpu_mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
