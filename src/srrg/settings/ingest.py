"""The `ingest` section: which report collection to read and how to split it (srrg ingest;
docs/inputs.md), with each source's paths (`ingest.iu_xray`, `ingest.mimic_cxr`, `ingest.srrg`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from srrg.settings.fields import Settings, SettingsError, doc
from srrg.settings.splits import SPLITS

# one share per split: keywords of the generated schema that srrg.settings.fields does not check
# field by field; SplitConfig.__post_init__ holds the same rule for a class built without the schema
_SHARE = {"type": "number", "minimum": 0, "maximum": 1}


@dataclass(frozen=True)
class SplitConfig(Settings):
    """Fractions of train/validate/test (normalized to sum 1) and the seed of the id hash."""

    fractions: dict[str, float] = field(
        default_factory=lambda: {"train": 0.7, "validate": 0.1, "test": 0.2},
        metadata={
            "doc": "Shares of train/validate/test (normalized to sum 1).",
            "schema": {
                "required": list(SPLITS),
                "additionalProperties": False,
                "properties": {s: {**_SHARE, "description": f"Share of the {s} split."} for s in SPLITS},
            },
        },
    )
    seed: int = field(default=13, metadata=doc("Seed of the id hash.", minimum=0))

    def __post_init__(self) -> None:
        super().__post_init__()
        # the shares together: one per split, each in [0, 1], not all zero
        names = set(self.fractions)
        if names != set(SPLITS):
            raise SettingsError("fractions", f"must give exactly the splits {', '.join(SPLITS)}, got {sorted(names)}")
        for name, share in self.fractions.items():
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
                raise SettingsError(f"fractions.{name}", f"must be a share between 0 and 1, got {share!r}")
        if not any(self.fractions.values()):
            raise SettingsError("fractions", "must not all be zero")


@dataclass(frozen=True)
class IUConfig(Settings):
    """Open-i archive and optional image folder; None = the copies torchxrayvision ships."""

    archive: str | None = field(
        default=None, metadata=doc("Open-i NLMCXR_reports.tgz; null = the copy shipped by torchxrayvision.")
    )
    metadata: str | None = field(
        default=None,
        metadata=doc("nlmcxr_dicom_metadata.csv.gz with the View Position per image; null = the torchxrayvision copy."),
    )
    image_root: str | None = field(
        default=None, metadata=doc("Folder of Open-i PNGs named <image id><image_ext>; null = record image ids only.")
    )
    image_ext: str = field(default=".png", metadata=doc("File name extension of the Open-i images under image_root."))


@dataclass(frozen=True)
class MimicConfig(Settings):
    """Paths of the published MIMIC-CXR files; see the `ingest.mimic_cxr` config section."""

    reports: str | None = field(
        default=None,
        metadata=doc("mimic-cxr-reports folder (holding files/pXX/...) or the official mimic-cxr-reports.zip."),
    )
    split_csv: str | None = field(default=None, metadata=doc("mimic-cxr-2.0.0-split.csv.gz"))
    metadata_csv: str | None = field(
        default=None, metadata=doc("mimic-cxr-2.0.0-metadata.csv.gz (ViewPosition per image).")
    )
    image_root: str | None = field(
        default=None,
        metadata=doc(
            "MIMIC-CXR-JPG root holding files/pXX/pXXXXXXXX/sXXXXXXXX/<dicom_id>.jpg; null = record relative paths."
        ),
    )


@dataclass(frozen=True)
class SrrgConfig(Settings):
    """Local copies of the SRRG datasets (docs/inputs.md, "SRRG"); see the `ingest.srrg` config section."""

    findings: str | None = field(
        default=None,
        metadata=doc("Copy of StanfordAIMI/srrg_findings: the folder holding data/<split>-*.parquet; null = not read."),
    )
    impression: str | None = field(
        default=None,
        metadata=doc(
            "Copy of StanfordAIMI/srrg_impression: the folder holding data/<split>-*.parquet; null = not read."
        ),
    )
    image_root: str | None = field(
        default=None,
        metadata=doc("Folder the datasets' image_paths are relative to; null = record the paths as written."),
    )


@dataclass(frozen=True)
class IngestConfig(Settings):
    """Which report collection to read and how to split it (srrg ingest)."""

    source: Literal["iu_xray", "mimic_cxr", "srrg"] = field(
        default="iu_xray",
        metadata=doc("Report collection to read: iu_xray (Open-i), mimic_cxr or srrg (docs/inputs.md)."),
    )
    limit: int | None = field(
        default=None, metadata=doc("Keep only the first N studies (by study id), for demos and tests.", minimum=1)
    )
    split: SplitConfig = field(
        default_factory=SplitConfig,
        metadata=doc("Shares of train/validate/test (normalized to sum 1) and the seed of the id hash."),
    )
    n_process: int = field(
        default=1,
        metadata=doc("Worker processes that split MIMIC-CXR reports into sections (the rule's threads).", minimum=1),
    )
    iu_xray: IUConfig = field(
        default_factory=IUConfig,
        metadata=doc(
            "Open-i archive, metadata and image folder (source iu_xray); a null archive or metadata = "
            "the torchxrayvision copy."
        ),
    )
    mimic_cxr: MimicConfig = field(
        default_factory=MimicConfig, metadata=doc("Paths of the published MIMIC-CXR files (source mimic_cxr).")
    )
    srrg: SrrgConfig = field(
        default_factory=SrrgConfig,
        metadata=doc("Local copies of the SRRG findings and impression datasets and their image folder (source srrg)."),
    )
