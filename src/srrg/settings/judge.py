"""The `judge` section: LLM judges on a subset of one run's predictions (docs/judges.md)."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, doc, hook

JudgeMetric = Literal["green", "vert", "gema", "proxy_rating", "crimson"]
LLM_JUDGES: tuple[str, ...] = typing.get_args(JudgeMetric)  # the metrics that ask an LLM


@dataclass(frozen=True)
class JudgeSection(Settings):
    """LLM judges on a subset of one run's predictions (docs/judges.md). The embedded default uses
    the local SmolLM2-135M model: it exercises the pipeline, it is not a meaningful judge."""

    run: str | None = field(default=None, metadata=doc("Run whose predictions are judged; null = the first run."))
    limit: int = field(default=2, metadata=doc("Pairs judged (first N by study id); 0 = all.", minimum=0))
    max_tokens: int | None = field(
        default=None, metadata=doc("Answer length per judge request; null = each judge's own default.", minimum=1)
    )
    metrics: tuple[JudgeMetric, ...] = field(
        default=("green", "vert", "gema", "proxy_rating"),
        metadata=doc("LLM judges run on the pairs: green, vert, gema, proxy_rating, crimson."),
    )
    extra_metrics: tuple[str, ...] = field(
        default=("bleu", "meteor", "rouge_l", "s_score", "s_score_text"),
        metadata=hook(
            "metric_names",
            "Non-LLM metrics scored on the same pairs (s_score only when the judged run is Structured-First).",
        ),
    )
    llm: dict[str, Any] = field(
        default_factory=lambda: {"backend": "local", "max_new_tokens": 256, "batch_size": 4},
        metadata=hook("llm_overrides", "Merged over the top-level llm section for the judges."),
    )
    options: dict[str, Any] = field(default_factory=dict, metadata=hook("metric_options", "Options per judge metric."))
