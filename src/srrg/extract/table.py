"""The extract stage's table step: studies -> extracted (stage contract: one row per input row;
the command is srrg.stages.extract).

Adds `structured` (MIMIC-STRUC JSON, raw un-normalized locations), `provenance` (JSON list of the
kept mentions with character spans into their section column) and `extract_status`
(ok | empty_text | truncated | long_sentence | error) to every input row; the configured sections
are read from the columns of the same name (default findings + impression).
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from functools import partial
from typing import Any, TypeVar

import polars as pl

from srrg.errors import UserError
from srrg.extract.pipeline import column_sections, get_extractor, run_reports
from srrg.io import read_table, write_parquet
from srrg.progress import tracked
from srrg.settings.extract import ExtractConfig
from srrg.srrg_text import header_locations_table

T, R = TypeVar("T"), TypeVar("R")


def extract_table(df: pl.DataFrame, config: ExtractConfig, progress: bool = True) -> pl.DataFrame:
    """The input table plus structured / provenance / extract_status, row for row. Chunks of
    `batch_size x 4` rows are extracted in turn (in config.n_process workers, at most two chunks
    each in flight) and each chunk's strings become Arrow columns as it comes back, so neither the
    sections of the whole table nor its results as Python strings are ever held at once."""
    missing = [c for c in config.sections if c not in df.columns]
    if missing:
        raise UserError(f"input has no column(s) {missing} named by extract.sections; its columns are {df.columns}")
    if df.height == 0:
        raise UserError("the input table has no rows: nothing to extract")
    size = max(1, config.batch_size * 4)
    starts = range(0, df.height, size)
    chunks = (df.slice(start, size).select(list(config.sections)).rows() for start in starts)
    work = partial(_stored, config)
    if config.n_process > 1 and len(starts) > 1:
        get_extractor(config)  # built once here: forked workers inherit it instead of building their own
        with ProcessPoolExecutor(max_workers=config.n_process) as pool:
            done = _in_order(pool, work, chunks, window=2 * config.n_process)
            parts = [_columns(p) for p in tracked(done, "extract", "chunk", total=len(starts), disable=not progress)]
    else:
        parts = [
            _columns(work(c)) for c in tracked(chunks, "extract", "chunk", total=len(starts), disable=not progress)
        ]
    return df.with_columns(pl.concat(parts, rechunk=False).get_columns())  # no copy of the whole output


def _in_order(pool: Executor, fn: Callable[[T], R], items: Iterable[T], window: int) -> Iterator[R]:
    """fn of every item, in order, with at most `window` items submitted and not yet taken."""
    pending: deque[Future[R]] = deque()
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _columns(rows: list[tuple[str, str, str]]) -> pl.DataFrame:
    """A chunk's stored strings as the three output columns."""
    structured, provenance, status = zip(*rows)
    return pl.DataFrame(
        {"structured": structured, "provenance": provenance, "extract_status": status},
        schema={"structured": pl.Utf8, "provenance": pl.Utf8, "extract_status": pl.Utf8},
    )


def _stored(config: ExtractConfig, rows: list[tuple[Any, ...]]) -> list[tuple[str, str, str]]:
    """(structured, provenance, status) of a chunk of section-column rows as stored: workers send
    back strings, which pickle faster and hold less memory than the Extraction objects. One process
    per chunk: the chunks are what the config.n_process workers share out."""
    wanted = config.sections
    done = run_reports([column_sections(dict(zip(wanted, row)), wanted) for row in rows], config, n_process=1)
    return [(r.report.to_json(), json.dumps(r.provenance, ensure_ascii=False), r.status) for r in done]


def run_extract(inp: str, out: str, config: ExtractConfig, progress: bool = True) -> str:
    """The extract stage: the table at inp extracted (extract_table) and written to out; returns
    the rows and statuses line it prints."""
    df = read_table(inp)
    # SRRG studies: the organ header is location evidence where a bullet states none (docs/inputs.md)
    table = header_locations_table(extract_table(df, config, progress=progress))
    write_parquet(table, out)
    statuses = Counter(table["extract_status"].to_list())
    return f"{df.height} rows in, {table.height} rows out, statuses {dict(statuses)}"
