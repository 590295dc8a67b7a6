"""Extraction throughput on one core over the IU X-ray collection, next to the bare spaCy tokenizer.

Prints reports per second of (a) spaCy's blank English tokenizer alone, (b) the stage path: the
extractor on each report's findings + impression columns (what `srrg extract` runs per chunk) and
(c) the free-text path: `extract_many` on the same reports written as one text with FINDINGS: and
IMPRESSION: headers (section splitting included), each as the best of --repeat runs after a
warm-up, each run starting with an empty text and sentence cache (docs/extraction.md, "Speed"). Both
wall-clock and process-CPU rates are printed: on a shared machine the CPU rate is what one
dedicated core would do (bar: >= 2,000 reports/s for (b) and (c)).

With --hash it prints instead a SHA-256 of everything both paths return for every report
(structured report, provenance, status), computed with an empty text and sentence cache, and checks that a
second pass served from the cache returns the same: a speed change is output-neutral when the
hashes are the same before and after it.

    .venv/bin/python benchmarks/extract_speed.py [--archive NLMCXR_reports.tgz] [--repeat 3] [--hash]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from collections.abc import Sequence

os.environ.setdefault("OMP_NUM_THREADS", "1")

from srrg.extract import extract_detailed, extract_many
from srrg.extract.evaluation import default_archive
from srrg.extract.pipeline import (
    Extraction,
    column_sections,
    get_extractor,
)
from srrg.settings.extract import ExtractConfig
from srrg.sources.iu_xray import read_reports


def best_rate(fn, n: int, repeat: int, cold=lambda: None) -> tuple[float, float]:
    """Best (wall, cpu) reports/s over `repeat` runs, each after `cold()` (untimed)."""
    walls, cpus = [], []
    for _ in range(repeat):
        cold()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return n / min(walls), n / min(cpus)


# every labelling convention set the other way (docs/extraction.md, "Conventions"): the hash covers their code too
OTHER_CONVENTIONS = ExtractConfig(borderline_probability=1, versus_probability=1, nodular_opacity="nodule")


def output_hash(extractions: Sequence[Extraction]) -> str:
    """SHA-256 over every extraction's report JSON, provenance and status, in order."""
    digest = hashlib.sha256()
    for e in extractions:
        row = [e.report.to_json(), e.provenance, e.status]
        digest.update(json.dumps(row, ensure_ascii=False, sort_keys=True).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def print_hashes(reports: list, free: list[str]) -> None:
    """The output hash of both paths under both convention sets, cold, and whether a second pass
    served from the caches hashes the same."""
    for config in (ExtractConfig(), OTHER_CONVENTIONS):
        name = "default config" if config == ExtractConfig() else "other conventions"
        extractor = get_extractor(config)
        paths = {"stage path": lambda: extractor.run(reports), "free-text path": lambda: extract_detailed(free, config)}  # noqa: B023
        for path, run in paths.items():
            extractor.clear_cache()
            cold, warm = output_hash(run()), output_hash(run())
            same = "same" if warm == cold else "DIFFERENT"
            print(f"{name:<17} {path:<14} {len(reports)} reports: sha256 {cold} (from the cache: {same})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--hash", action="store_true", help="print the output hash of both paths instead of timing them"
    )
    args = parser.parse_args()
    records = list(read_reports(args.archive or default_archive()))
    extractor = get_extractor(ExtractConfig())
    reports = [
        column_sections({"findings": r.findings, "impression": r.impression}, extractor.config.sections)
        for r in records
    ]
    texts = [s.text for secs in reports for s in secs]
    free = [f"FINDINGS: {r.findings or ''}\n\nIMPRESSION: {r.impression or ''}" for r in records]
    n = len(records)
    if args.hash:
        print_hashes(reports, free)
        return
    tokenizer = extractor.nlp.tokenizer
    extractor.run(reports[:200])  # warm-up: tokenizer cache, lazy vocab loading
    extract_many(free[:200])
    list(tokenizer.pipe(texts))
    tok_wall, tok_cpu = best_rate(lambda: list(tokenizer.pipe(texts)), n, args.repeat)
    # every timed run starts with an empty text and sentence cache: a cold pass over the collection, as in a real run
    ext_wall, ext_cpu = best_rate(lambda: extractor.run(reports), n, args.repeat, extractor.clear_cache)
    free_wall, free_cpu = best_rate(lambda: extract_many(free), n, args.repeat, extractor.clear_cache)
    words = sum(len(t.split()) for t in texts)
    print(f"IU X-ray: {n} reports, {len(texts)} section texts, {words / n:.1f} words per report")
    print(f"spaCy blank tokenizer          : {tok_wall:8.0f} reports/s wall, {tok_cpu:8.0f} reports/s CPU")
    print(f"srrg extraction, stage path    : {ext_wall:8.0f} reports/s wall, {ext_cpu:8.0f} reports/s CPU")
    print(f"srrg extraction, free-text path: {free_wall:8.0f} reports/s wall, {free_cpu:8.0f} reports/s CPU")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print(f"extraction / tokenizer: {ext_cpu / tok_cpu:.2f} (CPU rates)")


if __name__ == "__main__":
    main()
