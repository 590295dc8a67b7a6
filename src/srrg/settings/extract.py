"""The `extract` section: free text -> structured reports (srrg extract; docs/extraction.md), and
the constants its keys allow."""

from __future__ import annotations

from dataclasses import dataclass, field

from srrg.settings.fields import Settings, doc

# every section a report can be cut into: the canonical names of srrg/vocab/sections.yaml, in its
# order, and the text before any header (srrg.text.sections.PREAMBLE); a test checks it against both
SECTION_NAMES: tuple[str, ...] = (
    "findings",
    "impression",
    "comparison",
    "indication",
    "technique",
    "recommendation",
    "notification",
    "wet_read",
    "preamble",
)
# what a nodular opacity or density reports, default first (srrg.extract.mentions)
NODULAR_READINGS = ("lung opacity", "nodule")


@dataclass(frozen=True)
class ExtractConfig(Settings):
    """The `extract` config section (free text -> structured reports; docs/extraction.md)."""

    sections: tuple[str, ...] = field(
        default=("findings", "impression"),
        metadata=doc(
            "Report sections that feed extraction (merged).",
            minItems=1,
            uniqueItems=True,
            items={"enum": list(SECTION_NAMES)},
        ),
    )
    spacy_model: str | None = field(
        default=None,
        metadata=doc("An installed spaCy/scispaCy pipeline to tokenize and split sentences; null = blank English."),
    )
    batch_size: int = field(default=512, metadata=doc("Texts per nlp.pipe batch.", minimum=1))
    n_process: int = field(default=1, metadata=doc("Worker processes for a table.", minimum=1))
    max_chars: int = field(
        default=100_000, metadata=doc("A longer section text is cut (status `truncated`).", minimum=1)
    )
    # labelling conventions where expert golds disagree (docs/extraction.md, "Conventions")
    borderline_probability: int = field(
        default=3,
        metadata=doc(
            'Probability of a finding stated with a borderline level ("borderline cardiomegaly"): 3 = stated, as NIH '
            "labels and the IU MeSH codes count it; 1 = uncertain, as the CheXpert labeler marks it.",
            minimum=1,
            maximum=3,
        ),
    )
    versus_probability: int = field(
        default=3,
        metadata=doc(
            'Probability of the findings a "versus" alternative names ("atelectasis versus infiltrate"): '
            "3 = stated, as NIH labels and the IU MeSH codes count them; "
            "1 = uncertain, as the CheXpert labeler marks them.",
            minimum=1,
            maximum=3,
        ),
    )
    nodular_opacity: str = field(
        default=NODULAR_READINGS[0],
        metadata=doc(
            "What a nodular opacity or density reports: `lung opacity` (NIH labels: no nodule) or `nodule` "
            "(IU MeSH codes: a round opacity; the CheXpert labeler: a lung lesion).",
            enum=list(NODULAR_READINGS),
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        # a list would make the config unhashable (extractors are cached per config)
        object.__setattr__(self, "sections", tuple(self.sections))
