"""The extract stage's table step: studies -> extracted (stage contract: one row per input row;
the command is srrg.stages.extract).

Adds `structured` (MIMIC-STRUC JSON, raw un-normalized locations), `provenance` (JSON list of the
kept mentions with character spans into their section column) and `extract_status`
(ok | empty_text | truncated | long_sentence | error) to every input row; the configured sections are read from the columns
of the same name (default findings + impression).
"""

from __future__ import annotations

import json

import polars as pl
from tqdm import tqdm

from srrg.extract.pipeline import ExtractConfig, Extraction, column_sections, run_reports
from srrg.errors import UserError


def extract_table(df: pl.DataFrame, config: ExtractConfig, progress: bool = True) -> pl.DataFrame:
    """The input table plus structured / provenance / extract_status, row for row."""
    missing = [c for c in config.sections if c not in df.columns]
    if missing:
        raise UserError(f"input has no column(s) {missing} named by extract.sections; its columns are {df.columns}")
    if df.height == 0:
        raise UserError("the input table has no rows: nothing to extract")
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
