"""S-RRG Table 3: the cheap metrics of the judge subset against its LLM-proxy rating (set
`human_column: proxy_rating` in --config); no ratings file is read."""

from __future__ import annotations

from srrg.stages.metaeval_correlate import add_arguments, run

HELP = "correlate the judge subset's metrics with its LLM-proxy rating (S-RRG Table 3)"

__all__ = ["HELP", "add_arguments", "run"]
