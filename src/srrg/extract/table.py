"""The extract stage's table step: studies -> extracted (stage contract: one row per input row;
the command is srrg.stages.extract).

Adds `structured` (MIMIC-STRUC JSON, raw un-normalized locations), `provenance` (JSON list of the
kept mentions with character spans into their section column) and `extract_status`
(ok | empty_text | truncated | long_sentence | error) to every input row; the configured sections
are read from the columns of the same name (default findings + impression).
"""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import polars as pl

from srrg.errors import UserError
from srrg.extract.pipeline import ExtractConfig, column_sections, get_extractor, run_reports
from srrg.io import read_table, write_parquet
from srrg.progress import tracked
from srrg.text.sections import Section


def extract_table(df: pl.DataFrame, config: ExtractConfig, progress: bool = True) -> pl.DataFrame:
    """The input table plus structured / provenance / extract_status, row for row."""
    missing = [c for c in config.sections if c not in df.columns]
    if missing:
        raise UserError(f"input has no column(s) {missing} named by extract.sections; its columns are {df.columns}")
    if df.height == 0:
        raise UserError("the input table has no rows: nothing to extract")
    rows = df.select(list(config.sections)).iter_rows(named=True)
    reports = [column_sections(row, config.sections) for row in rows]
    size = max(1, config.batch_size * 4)
    chunks = [reports[start : start + size] for start in range(0, len(reports), size)]
    work = partial(_stored, config)
    out: list[tuple[str, str, str]] = []
    if config.n_process > 1 and len(chunks) > 1:
        get_extractor(config)  # built once here: forked workers inherit it instead of building their own
        with ProcessPoolExecutor(max_workers=config.n_process) as pool:
            parts = tracked(pool.map(work, chunks), "extract", "chunk", total=len(chunks), disable=not progress)
            out = [row for part in parts for row in part]
    else:
        for chunk in tracked(chunks, "extract", "chunk", disable=not progress):
            out.extend(work(chunk))
    structured, provenance, status = zip(*out)
    return df.with_columns(
        pl.Series("structured", structured, dtype=pl.Utf8),
        pl.Series("provenance", provenance, dtype=pl.Utf8),
        pl.Series("extract_status", status, dtype=pl.Utf8),
    )


def _stored(config: ExtractConfig, reports: list[list[Section]]) -> list[tuple[str, str, str]]:
    """(structured, provenance, status) of a chunk as stored: workers send back strings, which
    pickle faster and hold less memory than the Extraction objects. One process per chunk: the
    chunks are what the config.n_process workers share out."""
    done = run_reports(reports, config, n_process=1)
    return [(r.report.to_json(), json.dumps(r.provenance, ensure_ascii=False), r.status) for r in done]


def run_extract(inp: str, out: str, config: ExtractConfig, progress: bool = True) -> str:
    """The extract stage: the table at inp extracted (extract_table) and written to out; returns
    the rows and statuses line it prints."""
    df = read_table(inp)
    table = extract_table(df, config, progress=progress)
    write_parquet(table, out)
    statuses = Counter(table["extract_status"].to_list())
    return f"{df.height} rows in, {table.height} rows out, statuses {dict(statuses)}"
