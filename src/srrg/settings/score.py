"""The `score` section: the metrics of every run's predictions (srrg score; docs/metrics.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from srrg.settings.fields import Settings, doc, hook

# what `score.section` may cut (srrg.metrics.section; docs/metrics.md, "Which section is scored")
ScoredSection = Literal["findings", "impression", "both"]
WHOLE_REPORT = "both"  # the section value that scores the whole text (the default)


@dataclass(frozen=True)
class ScoreSection(Settings):
    """Metrics of every run's predictions (srrg score); Sentence-Direct runs skip s_score."""

    metrics: tuple[str, ...] = field(
        default=("bleu", "meteor", "rouge_l", "cider", "s_score"),
        metadata={
            **hook("metric_names", "Metrics scored on every run's predictions (at least one)."),
            "schema": {"minItems": 1},
        },
    )
    options: dict[str, Any] = field(
        default_factory=dict, metadata=hook("metric_options", "Options per metric (docs/metrics.md).")
    )
    section: ScoredSection = field(
        default=WHOLE_REPORT,
        metadata=doc(
            "Report section scored, for references and hypotheses alike; both = the whole text (docs/metrics.md)."
        ),
    )
