"""The `stats` section: dataset statistics (S-RRG Fig. 5) as PNG + CSV (srrg stats), and the
extraction table the workflow measures beside them (docs/extraction.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from srrg.settings.fields import Settings, doc

# the halves of the fixed IU development split the extraction table is measured on
# (srrg.extract.evaluation; docs/extraction.md): dev, the reports the rules were tuned on; heldout, the others
HALVES = ("dev", "heldout", "all")


@dataclass(frozen=True)
class StatsConfig(Settings):
    """Dataset statistics (S-RRG Fig. 5) as PNG + CSV."""

    top_k: int = field(default=20, metadata=doc("Number of most frequent positive findings shown.", minimum=1))
    dpi: int = field(
        default=120,
        metadata=doc(
            "Resolution of the PNG figures (600 is print quality; more only costs memory).", minimum=50, maximum=600
        ),
    )
    # read by the workflow: its eval_extraction rule writes the table beside the statistics
    extraction_gold: str | None = field(
        default=None,
        metadata=doc(
            "NIH 14-label gold CSV of Open-i reports (docs/extraction.md); "
            "when set, the workflow measures the extractor on it with the extract settings "
            "and extraction_accuracy.csv joins the statistics; null = not measured."
        ),
    )
    extraction_half: str = field(
        default="heldout",
        metadata=doc(
            "Half of the fixed IU split the extraction table is measured on (heldout: the reports the rules were not "
            "tuned on).",
            enum=list(HALVES),
        ),
    )
