"""Report metrics behind one interface: `evaluate(refs, hyps, metrics)` returns a flat dict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srrg.errors import UserError
from srrg.metrics.base import Metric, MetricResult, available, evaluate, get_metric, register, score_all

__all__ = ["Metric", "MetricResult", "available", "evaluate", "get_metric", "metric_options", "register", "score_all"]


def metric_options(metrics: Sequence[str], options: Mapping[str, Any]) -> dict[str, Any]:
    """The per-metric options of a stage that scores (`--config` of score, compare, metaeval-rank),
    after checking that --metrics names metrics and only registered ones. `options` come through
    srrg.config.stage_config at `score.options`, whose schema already allows registered metrics
    only, each with its own option keys."""
    if not metrics:
        raise UserError(f"--metrics names no metric; available: {', '.join(available())}")
    unknown = sorted(set(metrics) - set(available()))
    if unknown:
        raise UserError(f"--metrics: unknown metric(s) {', '.join(unknown)}; available: {', '.join(available())}")
    return dict(options)
