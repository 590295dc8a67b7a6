"""Location normalization on the real IU X-ray (Open-i) reports: unique raw phrases, requests sent
through the LLM client (against a scripted local OpenAI-compatible server), warm-rerun requests, and
optionally the local SmolLM2 backend on a sample of phrases. Prints what it measured.

    .venv/bin/python benchmarks/normalize_iu.py [--archive PATH] [--local N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the scripted OpenAI-compatible server lives with the tests

from openai_stub import OpenAIStub, Reply, last_user_message  # noqa: E402

from srrg.extract import extract_many  # noqa: E402
from srrg.llm import LLMClient  # noqa: E402
from srrg.normalize import rules_normalize, run  # noqa: E402
from srrg.settings.normalize import NormalizeConfig  # noqa: E402
from srrg.sources.iu_xray import read_iu_xray  # noqa: E402


def default_archive() -> Path:
    shared = ROOT.parent / "shared" / "data" / "iu_xray_reports" / "NLMCXR_reports.tgz"
    if shared.exists():
        return shared
    spec = importlib.util.find_spec("torchxrayvision")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("no IU X-ray archive: pass --archive or install torchxrayvision")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "NLMCXR_reports.tgz"


def extracted_frame(archive: Path) -> pl.DataFrame:
    records = read_iu_xray(archive)
    texts = [" ".join(t for t in (r.get("findings"), r.get("impression")) if t) for r in records]
    t0 = time.perf_counter()
    reports = extract_many(texts)
    print(f"reports={len(records)} extraction_seconds={time.perf_counter() - t0:.1f}")
    return pl.DataFrame(
        {
            "study_id": [str(r["study_id"]) for r in records],
            "structured": [json.dumps(rep) for rep in reports],
        }
    )


def llm_cfg(base_url: str, cache_dir: str, **extra: object) -> NormalizeConfig:
    llm = {"backend": "openai", "model": "stub", "base_url": base_url, "cache_dir": cache_dir, "concurrency": 8}
    llm.update(extra)
    return NormalizeConfig.from_dict({"method": "llm", "llm": llm})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--archive", type=Path, default=None)
    parser.add_argument("--local", type=int, default=0, help="also run the local SmolLM2 backend on N phrases")
    args = parser.parse_args()
    df = extracted_frame(args.archive or default_archive())

    t0 = time.perf_counter()
    out, phrases, summary = run(df, NormalizeConfig())
    rules_s = time.perf_counter() - t0
    findings_with_location = int(phrases["count"].sum())
    print(f"rules: {summary.line()}")
    print(
        f"findings_with_location={findings_with_location} unique_raw_phrases={phrases.height} "
        f"unique_normalized={phrases['normalized'].n_unique()} rules_seconds={rules_s:.3f}"
    )
    print("most frequent raw phrases -> rules phrase:")
    for raw, norm, n in phrases.sort("count", descending=True).select("raw", "normalized", "count").head(15).rows():
        print(f"  {n:5d}  {raw!r} -> {norm!r}")

    # the LLM path against a scripted local server that answers with a well-formed phrase
    with (
        OpenAIStub(responder=lambda body: Reply(rules_normalize(last_user_message(body)) or "in the chest")) as stub,
        tempfile.TemporaryDirectory() as cache,
    ):
        cfg = llm_cfg(stub.base_url, cache)
        t0 = time.perf_counter()
        _, _, cold = run(df, cfg, LLMClient(cfg.llm))
        cold_s = time.perf_counter() - t0
        cold_requests = len(stub.requests)
        _, _, warm = run(df, cfg, LLMClient(cfg.llm))
        print(
            f"openai(stub) cold: unique_phrases={cold.unique_phrases} http_requests={cold_requests} "
            f"client_sent={cold.usage['total']['sent']} seconds={cold_s:.2f}"
        )
        print(
            f"openai(stub) warm: http_requests={len(stub.requests) - cold_requests} "
            f"client_sent={warm.usage['total']['sent']} cache_hits={warm.usage['total']['cache_hits']}"
        )

    if args.local:
        sample = phrases.sort("count", descending=True)["raw"].head(args.local).to_list()
        sub = pl.DataFrame(
            {
                "study_id": [f"p{i}" for i in range(len(sample))],
                "structured": [
                    json.dumps(
                        {
                            "positive": [{"name": "opacity", "probability": 3, "level": None, "location": p}],
                            "negative": [],
                        }
                    )
                    for p in sample
                ],
            }
        )
        with tempfile.TemporaryDirectory() as cache:
            cfg = NormalizeConfig.from_dict({"method": "llm", "llm": {"backend": "local", "cache_dir": cache}})
            client = LLMClient(cfg.llm)
            t0 = time.perf_counter()
            _, table, local = run(sub, cfg, client)
            secs = time.perf_counter() - t0
        paths = Counter(table["path"].to_list())
        print(
            f"local SmolLM2: phrases={len(sample)} seconds_incl_load={secs:.1f} paths={dict(paths)} "
            f"tokens={local.usage['total']['prompt_tokens']}+{local.usage['total']['completion_tokens']}"
        )
        for raw, ans, norm, path in table.select("raw", "llm_answer", "normalized", "path").head(10).rows():
            print(f"  {raw!r}: model said {ans!r} -> {norm!r} [{path}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
