"""`srrg extract`: studies.parquet -> extracted.parquet (stage contract: one row per input row).

Adds `structured` (MIMIC-STRUC JSON, raw un-normalized locations), `provenance` (JSON list of the
kept mentions with character spans into their section column) and `extract_status`
(ok | empty_text | truncated | error) to every input row; the configured sections are read from the columns
of the same name (default findings + impression).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import polars as pl
from tqdm import tqdm

from srrg.extract.pipeline import ExtractConfig, Extraction, column_sections, run_reports
from srrg.io import read_table, write_parquet


def extract_table(df: pl.DataFrame, config: ExtractConfig, progress: bool = True) -> pl.DataFrame:
    """The input table plus structured / provenance / extract_status, row for row."""
    missing = [c for c in config.sections if c not in df.columns]
    if missing:
        raise ValueError(f"input has no column(s) {missing} for extract.sections; columns: {df.columns}")
    rows = df.select(list(config.sections)).iter_rows(named=True)
    reports = [column_sections(row, config.sections) for row in rows]
    results: list[Extraction] = []
    if config.n_process > 1:
        results = run_reports(reports, config, config.n_process)
    else:
        chunk = max(1, config.batch_size * 4)
        for start in tqdm(range(0, len(reports), chunk), desc="extract", unit="chunk", disable=not progress):
            results.extend(run_reports(reports[start : start + chunk], config))
    return df.with_columns(
        pl.Series("structured", [r.report.to_json() for r in results], dtype=pl.Utf8),
        pl.Series("provenance", [json.dumps(r.provenance, ensure_ascii=False) for r in results], dtype=pl.Utf8),
        pl.Series("extract_status", [r.status for r in results], dtype=pl.Utf8),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srrg extract", description="free-text report sections -> structured reports")
    parser.add_argument("--in", dest="inp", required=True, help="studies table (.parquet, .jsonl, .csv)")
    parser.add_argument("--out", required=True, help="output .parquet")
    parser.add_argument("--config", help="the `extract` config slice: inline JSON or a .json/.yaml path")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    config = ExtractConfig.from_dict(args.config)
    start = time.perf_counter()
    df = read_table(args.inp)
    out = extract_table(df, config, progress=not args.no_progress)
    write_parquet(out, args.out)
    statuses = Counter(out["extract_status"].to_list())
    seconds = time.perf_counter() - start
    print(f"extract: {df.height} rows in, {out.height} rows out, statuses {dict(statuses)}, {seconds:.1f} s", file=sys.stderr)
    return 0
