"""The paper-sized model path once on CPU: Swin-base 224 + an LLM of Qwen2.5-3B's shape, bf16.

Builds the S-RRG generator (srrg.model.network.ReportGenerator) from configs only, random weights,
no download: the encoder `swin_base_patch4_window7_224` (timm, pretrained=False, 224 px) and a
Qwen2 causal LM with Qwen2.5-3B's dimensions (hidden 2048, 36 layers, 16 heads, 2 KV heads,
intermediate 11008, vocabulary 151936). Every weight is created in bf16 (the default dtype is bf16
while the model is built: no fp32 copy of the 3B weights ever exists). The LLM is frozen (the
paper's alignment setting, docs/model.md); gradient checkpointing runs through the LLM and the
Swin. Then one AdamW step on one study and one 3-beam generation of --new-tokens tokens (with the KV cache), printing
the times and the peak resident memory (ru_maxrss) after each phase as one JSON line.

    nice -n 5 env OMP_NUM_THREADS=1 .venv/bin/python benchmarks/paper_shape_step.py
    .venv/bin/python benchmarks/paper_shape_step.py --reduced     # the same code at a small shape

Expect 10+ GB of memory and minutes at full size; the figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_train_throughput import QWEN25_3B, TINY_LLM, TINY_SWIN, random_llm, studies  # noqa: E402

from srrg.model.llm import load_tokenizer  # noqa: E402
from srrg.model.network import ReportGenerator  # noqa: E402
from srrg.settings.model import EncoderConfig, FrozenLLMConfig, ModelConfig  # noqa: E402


def peak_rss_gb() -> float:
    """Peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def build(reduced: bool) -> ReportGenerator:
    """The generator with every weight created in bf16 directly (default dtype bf16 while building)."""
    if reduced:
        encoder = EncoderConfig(name="swin_tiny_patch4_window7_224", image_size=32, kwargs=TINY_SWIN)
        tok_cfg, shape = FrozenLLMConfig(name="tiny"), TINY_LLM
    else:
        encoder = EncoderConfig(name="swin_base_patch4_window7_224", pretrained=False, image_size=224)
        tok_cfg, shape = FrozenLLMConfig(name="smollm2-135m"), QWEN25_3B
    tok = load_tokenizer(tok_cfg)  # token ids only; the embedding table is the LLM's own
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        llm = random_llm(shape, torch.device("cpu"), torch.bfloat16)
        net = ReportGenerator(
            ModelConfig(encoder=encoder, llm=FrozenLLMConfig(name="tiny"), max_target_tokens=512),
            tokenizer=tok,
            llm=llm,
        )
    finally:
        torch.set_default_dtype(previous)
    llm.activation_checkpointing_enable({"use_reentrant": False})
    net.encoder.backbone.set_grad_checkpointing(True)
    net.train()
    llm.train()  # HF recomputes only in train mode; the frozen LLM has no dropout (attention_dropout 0)
    return net


def optimizer_step(net: ReportGenerator, images: torch.Tensor, targets: list[str]) -> float:
    """One AdamW step of the trainable part (encoder + projector) through the frozen LLM."""
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4)
    opt.zero_grad(set_to_none=True)
    loss = net.loss(images, targets)
    loss.backward()
    opt.step()
    return float(loss.item())


@torch.no_grad()
def beam_generate(net: ReportGenerator, images: torch.Tensor, new_tokens: int, beams: int) -> int:
    """Beam search from the srrg prompt (prefix | image tokens | suffix) for exactly `new_tokens`
    tokens (min = max: random weights would otherwise stop at whatever token maps to EOS), with the
    KV cache that checkpointing had switched off. Returns the number of generated tokens."""
    assert net.llm is not None
    net.llm.activation_checkpointing_disable()
    net.llm.config.use_cache = True
    embeds = net._prompt_embeds(net.image_tokens(images))
    out = net.llm.generate(
        inputs_embeds=embeds,
        attention_mask=torch.ones(embeds.shape[:2], dtype=torch.long),
        num_beams=beams,
        do_sample=False,
        min_new_tokens=new_tokens,
        max_new_tokens=new_tokens,
        pad_token_id=net.tokenizer.pad_token_id,
        eos_token_id=net.tokenizer.eos_token_id,
    )
    return int(out.shape[1])


def run(reduced: bool, new_tokens: int, beams: int) -> dict[str, Any]:
    torch.manual_seed(0)
    t0 = time.perf_counter()
    net = build(reduced)
    built = time.perf_counter()
    rss_built = peak_rss_gb()
    size = net.cfg.encoder.image_size
    images = torch.randn(1, 3, size, size, dtype=torch.bfloat16)
    targets = [studies(1, 3, "paper")[0][1]]
    loss = optimizer_step(net, images, targets)
    stepped = time.perf_counter()
    rss_step = peak_rss_gb()
    net.eval()
    tokens = beam_generate(net, images, new_tokens, beams)
    generated = time.perf_counter()
    params = {
        "trainable": sum(p.numel() for p in net.parameters() if p.requires_grad),
        "frozen": sum(p.numel() for p in net.parameters() if not p.requires_grad),
    }
    return {
        "shape": "reduced" if reduced else "paper (swin_base_patch4_window7_224 224 px + Qwen2.5-3B dimensions)",
        "dtype": "bfloat16",
        "threads": torch.get_num_threads(),
        "params": params,
        "target_tokens": len(net.tokenizer(targets[0], add_special_tokens=False)["input_ids"]) + 1,
        "build_s": round(built - t0, 1),
        "step_s": round(stepped - built, 1),
        "generate_s": round(generated - stepped, 1),
        "beams": beams,
        "generated_tokens": tokens,
        "loss": round(loss, 4),
        "peak_rss_gb": {"built": rss_built, "step": rss_step, "generate": peak_rss_gb()},
        "load": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reduced", action="store_true", help="tiny Swin + tiny Qwen2 (tests)")
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--beams", type=int, default=3)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.reduced, args.new_tokens, args.beams)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
