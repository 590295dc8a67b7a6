"""Report metrics behind one interface: `evaluate(refs, hyps, metrics)` returns a flat dict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srrg.errors import UserError
from srrg.metrics.base import Metric, MetricResult, available, evaluate, get_metric, register, score_all

__all__ = ["Metric", "MetricResult", "available", "evaluate", "get_metric", "metric_options", "register", "score_all"]


def metric_options(metrics: Sequence[str], options: Mapping[str, Any]) -> dict[str, Any]:
    """The per-metric options of a stage that scores (`--config` of score, compare, metaeval-rank),
    after checking that every metric named (in --metrics or as an options key) is registered; each
    metric checks its own option keys when it is built."""
    if not metrics:
        raise UserError(f"--metrics names no metric; available: {', '.join(available())}")
    for where, names in (("--metrics", list(metrics)), ("--config", list(options))):
        unknown = sorted(set(names) - set(available()))
        if unknown:
            raise UserError(f"{where}: unknown metric(s) {', '.join(unknown)}; available: {', '.join(available())}")
    bad = sorted(k for k, v in options.items() if not isinstance(v, dict))
    if bad:
        raise UserError(f"--config: the options of {', '.join(bad)} must be a mapping of option -> value")
    return dict(options)
