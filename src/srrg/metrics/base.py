"""One metric interface and a registry (RadEval-style): every metric returns flat per-report lists
and a flat summary, so tables, meta-evaluation and the CLI treat all metrics alike.

Metric modules are imported lazily by name so that scoring BLEU never imports an LLM backend.
"""

from __future__ import annotations

import importlib
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.report import REPAIRED, UNPARSEABLE, VALID
from srrg.settings.metrics import METRIC_OPTIONS

# metric name -> module that registers it
METRIC_MODULES: dict[str, str] = {
    "s_score": "srrg.metrics.sscore",
    "ce": "srrg.metrics.ce",
    "bleu": "srrg.metrics.nlg",
    "meteor": "srrg.metrics.nlg",
    "rouge_l": "srrg.metrics.nlg",
    "cider": "srrg.metrics.nlg",
    "green": "srrg.metrics.judges.green",
    "vert": "srrg.metrics.judges.vert",
    "gema": "srrg.metrics.judges.gema",
    "proxy_rating": "srrg.metrics.judges.proxy_rating",
    "crimson": "srrg.metrics.judges.crimson",
    "s_score_text": "srrg.metrics.sscore_text",
    # RadEval-backed (optional extra `radeval`; docs/metrics.md, "RadEval metrics")
    "chexbert": "srrg.metrics.radeval",
    "radgraph": "srrg.metrics.radeval",
    "bertscore": "srrg.metrics.radeval",
    "radcliq": "srrg.metrics.radeval",
    "ratescore": "srrg.metrics.radeval",
    "srrbert": "srrg.metrics.radeval",
    "green_model": "srrg.metrics.radeval",
    "radeval_bleu": "srrg.metrics.radeval",
    "radeval_rouge": "srrg.metrics.radeval",
    # the ReXrank leaderboard's columns (docs/metrics.md, "ReXrank preset")
    "rexrank": "srrg.metrics.rexrank",
    "rexrank_bleu": "srrg.metrics.rexrank",
    "rexrank_radcliq": "srrg.metrics.rexrank",
    # comparisons with a prior study stated by the hypothesis (docs/metrics.md, "Temporal claims")
    "temporal_claims": "srrg.metrics.temporal",
}

_REGISTRY: dict[str, type[Metric]] = {}


@dataclass
class MetricResult:
    """per_report: key -> one value per pair (floats, or text such as judge explanations);
    summary: key -> one corpus-level float; signatures: key (of either) -> what produced it
    (srrg.metrics.signature), filled by score_all."""

    per_report: dict[str, list[Any]]
    summary: dict[str, float]
    signatures: dict[str, str] = field(default_factory=dict)


class Metric(ABC):
    """A metric scores aligned lists of reference and hypothesis reports.

    `config_class` is the settings class of the metric's options (the one place of their
    defaults), None for a metric without options: it is METRIC_OPTIONS[name]
    (srrg.settings.metrics), set for each class that names a metric, never written in the class."""

    name: ClassVar[str]
    keys: ClassVar[tuple[str, ...]]
    config_class: ClassVar[type | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if isinstance(name, str):
            if name not in METRIC_OPTIONS:
                raise TypeError(f"metric {name!r} has no entry in srrg.settings.metrics.METRIC_OPTIONS")
            cls.config_class = METRIC_OPTIONS[name]

    def __init__(self, **options: Any) -> None:
        if self.config_class is None:
            if options:
                raise UserError(f"metric {self.name!r} takes no options, got {', '.join(sorted(options))}")
            return
        self.cfg = from_dict(self.config_class, options, self.name)  # a refused value: one line

    @abstractmethod
    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        """Score every pair; refs and hyps have equal length."""

    def compute_with_context(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]]
    ) -> MetricResult:
        """Score every pair knowing its patient context (srrg.metrics.context; {} = none). Only a
        metric that reads context (CRIMSON) overrides this; every other metric ignores it."""
        return self.compute(refs, hyps)

    def signature(self, key: str) -> str:
        """What produced the value of `key` (docs/metrics.md, "Signatures"): by default the metric
        name, its options and the srrg version; a metric whose keys differ (label set, average)
        overrides this."""
        from srrg.metrics.signature import compose, config_parts

        return compose(self.name, config_parts(getattr(self, "cfg", None)))


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make a metric available under its name."""
    _REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    return sorted(METRIC_MODULES)


def get_metric(name: str, **options: Any) -> Metric:
    """Instantiate a registered metric by name, importing its module on first use."""
    if name not in _REGISTRY:
        module = METRIC_MODULES.get(name)
        if module is None:
            raise KeyError(f"unknown metric {name!r}; available: {', '.join(available())}")
        importlib.import_module(module)
    return _REGISTRY[name](**options)


def hypothesis_rates(name: str, statuses: Sequence[str], extra: Sequence[str] = ()) -> dict[str, float]:
    """Shares of hypotheses per parse status (and per `extra` kind, e.g. free text), as
    `<name>_hyp_<status>` summary keys: a structured metric always shows how many outputs it could
    read, so an unparseable model never looks good."""
    n = len(statuses)
    return {
        f"{name}_hyp_{s}": (list(statuses).count(s) / n if n else math.nan)
        for s in (VALID, REPAIRED, UNPARSEABLE, *extra)
    }


def nanmean(values: Sequence[float]) -> float:
    """Mean over the non-NaN values; NaN when there are none (e.g. no matched finding anywhere)."""
    kept = [v for v in values if v == v]  # NaN is the one value unequal to itself (no call per value)
    return sum(kept) / len(kept) if kept else math.nan


def score_all(
    refs: Sequence[str],
    hyps: Sequence[str],
    metrics: Sequence[str],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    contexts: Sequence[Mapping[str, str]] | None = None,
) -> MetricResult:
    """Run each named metric once and merge their flat per-report and summary dicts.
    options: metric name -> keyword options of that metric; contexts: each pair's patient context
    (None: no pair has one), passed to every metric's compute_with_context."""
    if len(refs) != len(hyps):
        raise ValueError(f"refs and hyps differ in length: {len(refs)} vs {len(hyps)}")
    if contexts is not None and len(contexts) != len(refs):
        raise ValueError(f"contexts and refs differ in length: {len(contexts)} vs {len(refs)}")
    options = options or {}
    merged = MetricResult({}, {})
    for name in metrics:
        metric = get_metric(name, **options.get(name, {}))
        if contexts is None:
            result = metric.compute(list(refs), list(hyps))
        else:
            result = metric.compute_with_context(list(refs), list(hyps), list(contexts))
        merged.per_report.update(result.per_report)
        merged.summary.update(result.summary)
        merged.signatures.update({k: metric.signature(k) for k in (*result.per_report, *result.summary)})
    return merged


def evaluate(
    refs: Sequence[str],
    hyps: Sequence[str],
    metrics: Sequence[str],
    per_report: bool = False,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Score hyps against refs: a flat dict of corpus floats, or of per-report lists."""
    result = score_all(refs, hyps, metrics, options)
    return result.per_report if per_report else result.summary
