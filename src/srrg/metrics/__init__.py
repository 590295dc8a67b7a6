"""Report metrics behind one interface: `evaluate(refs, hyps, metrics)` returns a flat dict."""

from srrg.metrics.base import Metric, MetricResult, available, evaluate, get_metric, register, score_all

__all__ = ["Metric", "MetricResult", "available", "evaluate", "get_metric", "register", "score_all"]
