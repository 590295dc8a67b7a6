"""The normalize stage's table step: every row's structured report with normalized locations, one
row per unique raw phrase, and the summary line."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from srrg.errors import StageFailed, UserError
from srrg.io import read_table, write_parquet, write_text
from srrg.llm import LLMClient
from srrg.normalize.llm import PhraseResult, normalize_phrases
from srrg.report import StructuredReport, from_obj
from srrg.settings.normalize import NormalizeConfig
from srrg.text.spelling import plain_spelling

# rows per row group of normalized.parquet: each dataset shard job decodes only the groups that hold
# its rows (srrg.dataset.read_shard), a tenth of the file for a 20,000-row shard instead of all of it
NORMALIZED_ROW_GROUP = 10_000


def _load_report(value: str | None) -> StructuredReport | None:
    if value is None:
        return None
    try:
        return from_obj(json.loads(value))[0]
    except (ValueError, TypeError, AttributeError):
        return None


def collect_phrases(reports: Iterable[StructuredReport | None]) -> Counter[str]:
    """Unique raw location phrases (shared spelling) with how many findings carry each."""
    counts: Counter[str] = Counter()
    for report in reports:
        for f in report.positive if report is not None else ():
            if f.location:
                counts[plain_spelling(f.location)] += 1
    return counts


def apply_mapping(report: StructuredReport, mapping: Mapping[str, str | None]) -> StructuredReport:
    """The report with each finding's location replaced by its normalized phrase."""
    positive = tuple(
        replace(f, location=mapping.get(plain_spelling(f.location), f.location)) if f.location else f
        for f in report.positive
    )
    return replace(report, positive=positive)


@dataclass
class StageSummary:
    rows: int
    statuses: dict[str, int]
    unique_phrases: int
    paths: dict[str, int]
    fallbacks: int
    usage: dict[str, Any]
    seconds: float

    def line(self) -> str:
        u = self.usage.get("total", {})
        return (
            f"normalize: rows={self.rows} statuses={self.statuses} unique_phrases={self.unique_phrases} "
            f"paths={self.paths} requests_sent={u.get('sent', 0)} cache_hits={u.get('cache_hits', 0)} "
            f"fallbacks={self.fallbacks} errors={u.get('errors', 0)} prompt_tokens={u.get('prompt_tokens', 0)} "
            f"completion_tokens={u.get('completion_tokens', 0)} cost_usd={u.get('cost_usd', 0.0):.4f} "
            f"seconds={self.seconds:.2f}"
        )


def _require_llm(results: list[PhraseResult], client: LLMClient) -> None:
    """The configured method is llm: a phrase whose request failed (endpoint down, timeout, no model)
    fails the stage rather than quietly taking the rules phrase (normalize.allow_fallback opts in)."""
    failed = [r for r in results if r.path == "rules" and r.llm_answer is None and r.reason is not None]
    if failed:
        raise StageFailed(
            f"normalize: {len(failed)} of {len(results)} phrase requests to {client.describe()} failed "
            f"(first: {failed[0].reason}); nothing written. Fix the endpoint and rerun (answers so far are cached), "
            f"or set normalize.allow_fallback: true to keep the rules phrase for them"
        )


def run(
    df: pl.DataFrame, cfg: NormalizeConfig, client: LLMClient | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, StageSummary]:
    """Normalize every row's locations: (rows with structured replaced and structured_raw kept,
    one row per unique raw phrase, summary). Rows without a report keep status and null output."""
    t0 = time.perf_counter()
    if "structured" not in df.columns:
        raise UserError(f"input has no 'structured' column (columns: {df.columns}); run srrg extract first")
    raw_json = df["structured"].cast(pl.String).to_list()
    # each distinct report is decoded (and below re-encoded) once: corpora repeat reports many times
    loaded = {v: _load_report(v) for v in set(raw_json) if v is not None}
    reports = [loaded[v] if v is not None else None for v in raw_json]
    counts = collect_phrases(reports)
    phrases = sorted(counts)
    if cfg.method == "llm" and client is None:
        client = LLMClient(cfg.llm)
    results = normalize_phrases(phrases, cfg, client)
    if client is not None and cfg.method == "llm" and not cfg.allow_fallback:
        _require_llm(results, client)
    mapping = {r.raw: r.normalized for r in results}
    normalized = {v: apply_mapping(r, mapping).to_json() for v, r in loaded.items() if r is not None}
    out_json: list[str | None] = []
    statuses: list[str] = []
    for value, report in zip(raw_json, reports):
        if value is None:
            out_json.append(None)
            statuses.append("no_report")
        elif report is None:
            out_json.append(value)
            statuses.append("unparseable")
        else:
            out_json.append(normalized[value])
            statuses.append("ok")
    out = df.with_columns(
        pl.Series("structured_raw", raw_json, dtype=pl.String),
        pl.Series("structured", out_json, dtype=pl.String),
        pl.Series("normalize_status", statuses, dtype=pl.String),
    )
    table = pl.DataFrame(
        {
            "raw": [r.raw for r in results],
            "normalized": [r.normalized for r in results],
            "path": [r.path for r in results],
            "count": [counts[r.raw] for r in results],
            "llm_answer": [r.llm_answer for r in results],
            "reason": [r.reason for r in results],
        },
        schema={
            "raw": pl.String,
            "normalized": pl.String,
            "path": pl.String,
            "count": pl.Int64,
            "llm_answer": pl.String,
            "reason": pl.String,
        },
    )
    summary = StageSummary(
        rows=df.height,
        statuses=dict(sorted(Counter(statuses).items())),
        unique_phrases=len(phrases),
        paths=dict(sorted(Counter(r.path for r in results).items())),
        fallbacks=sum(
            r.llm_answer is not None or (r.reason or "").startswith("llm error") for r in results if r.path == "rules"
        ),
        usage=client.usage.to_dict() if client is not None and cfg.method == "llm" else {},
        seconds=time.perf_counter() - t0,
    )
    return out, table, summary


def run_normalize(inp: str, out: str, phrases: str, stats: str | None, cfg: NormalizeConfig) -> StageSummary:
    """The normalize stage: the table at inp normalized (run) and written to out, its phrase table
    to phrases and, when stats is given, the summary as JSON."""
    rows, table, summary = run(read_table(inp), cfg)
    write_parquet(rows, out, row_group_size=NORMALIZED_ROW_GROUP)
    write_parquet(table, phrases)
    if stats:
        write_text(stats, json.dumps(summary.__dict__, indent=2, sort_keys=True))
    return summary
