"""The same command as `srrg score`, run by the workflow on the judge subset: per_report.parquet
keeps every judge's counts, statuses and explanations."""

from __future__ import annotations

from srrg.stages.score import add_arguments, run

HELP = "LLM judges (GREEN, VERT, GEMA, proxy rating) and cheap metrics on the judge subset (as `srrg score`)"

__all__ = ["HELP", "add_arguments", "run"]
