"""Speed of the judge-side metrics on one core: s_score_text (pairs/s) on real IU X-ray reports,
and seconds per pair of each LLM judge with the local SmolLM2-135M backend (cold cache).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/judge_speed.py [--pairs 2000] [--judge-pairs 2] [--max-tokens 128]

--max-tokens 0 uses each judge's default answer length; --pairs 0 skips s_score_text. Per judge it
prints the answers' statuses (how many were cut off by max_tokens: `truncated`). Failed answers
are reported, not fatal here (max_failure_fraction 1.0). Numbers depend on the machine; the script
prints what it measured and nothing else.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def iu_texts() -> list[str]:
    from srrg.sources.iu_xray import read_iu_xray

    rows = read_iu_xray()
    return [
        " ".join(t for t in (r.get("findings"), r.get("impression")) if t)
        for r in rows
        if r.get("findings") or r.get("impression")
    ]


def bench_sscore_text(texts: list[str], n_pairs: int) -> None:
    from srrg.extract.pipeline import get_extractor
    from srrg.metrics.sscore_text import score_texts

    get_extractor()  # build the pipeline outside the timing
    refs = texts[:n_pairs]
    hyps = texts[1 : n_pairs + 1]
    start = time.perf_counter()
    result = score_texts(refs, hyps)
    seconds = time.perf_counter() - start
    print(
        f"s_score_text: {len(refs)} IU X-ray pairs in {seconds:.2f}s = {len(refs) / seconds:.0f} pairs/s "
        f"(mean S {result.summary['s_score_text']:.3f}; "
        f"extraction of {len(set(refs) | set(hyps))} distinct texts included)"
    )


def bench_judges(texts: list[str], n_pairs: int, max_tokens: int) -> None:
    import torch

    from srrg.llm import LLMClient
    from srrg.metrics import get_metric
    from srrg.settings.llm import LLMConfig

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as cache:
        client = LLMClient(LLMConfig.from_dict({"backend": "local", "cache_dir": cache, "batch_size": 1}))
        from srrg.llm.local_backend import load_model, resolve_model

        start = time.perf_counter()
        load_model(*resolve_model(client.cfg), client.cfg.device)
        print(f"local SmolLM2 load: {time.perf_counter() - start:.1f}s")
        refs, hyps = texts[:n_pairs], texts[1 : n_pairs + 1]
        for name in ("green", "vert", "gema", "proxy_rating"):
            options = {"max_failure_fraction": 1.0, **({"max_tokens": max_tokens} if max_tokens else {})}
            metric = get_metric(name, client=client, **options)
            before = client.usage.total()
            start = time.perf_counter()
            result = metric.compute(refs, hyps)
            seconds = time.perf_counter() - start
            after = client.usage.total()
            kinds = {
                k.removeprefix(f"{name}_").removeprefix("proxy_"): int(v)
                for k, v in result.summary.items()
                if k.endswith(("failures", "truncated", "unparseable", "no_response"))
            }
            print(
                f"{name}: {seconds / n_pairs:.1f}s per pair "
                f"({n_pairs} pairs, max_tokens {metric.cfg.max_tokens}, cold cache); "
                f"requests {after.sent - before.sent}, cut off {after.truncated - before.truncated}; pairs {kinds}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--judge-pairs", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128, help="0 = each judge's default")
    args = parser.parse_args()
    texts = iu_texts()
    if args.pairs > 0:
        bench_sscore_text(texts, args.pairs)
    if args.judge_pairs > 0:
        bench_judges(texts, args.judge_pairs, args.max_tokens)


if __name__ == "__main__":
    main()
