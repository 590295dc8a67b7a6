"""SRRG (StanfordAIMI/srrg_findings and srrg_impression) in its published file layout -> one record
per study (docs/inputs.md, "SRRG").

Each dataset is a Hugging Face dataset repository whose parquet files sit at `data/<split>-*.parquet`
for the splits train, validate, test and test_reviewed, with the columns of its dataset card
(original_report, structured_report, findings_section, impression_section, history_section,
technique_section, comparison_section, exam_type_section, image_paths, id). A study is an `id`: its
findings come from srrg_findings' findings_section (organ headers with `- ` bullets, kept as
written), its impression from srrg_impression's impression_section (a numbered list), joined by id
where both datasets hold it. test_reviewed rows are test studies (srrg's splits are train / validate /
test); a study in both test and test_reviewed takes the reviewed text. Every row read is accounted
for: a study row, a row merged into the same study, or a row without an id (logged, and counted by
`read_srrg`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import list_files, parquet_schema, read_parquet
from srrg.settings.ingest import SrrgConfig
from srrg.sources.common import OK, image_status, report_status

log = logging.getLogger("srrg.ingest")

PUBLISHED_SPLITS = ("train", "validate", "test", "test_reviewed")  # the dataset cards' splits, in order
SPLIT_OF = {"train": "train", "validate": "validate", "test": "test", "test_reviewed": "test"}
CARD_COLUMNS = (
    "original_report",
    "structured_report",
    "findings_section",
    "impression_section",
    "history_section",
    "technique_section",
    "comparison_section",
    "exam_type_section",
    "image_paths",
    "id",
)
# what the reader needs of each dataset: the id, the images and the section it contributes
NEEDED = {
    "findings": ("id", "image_paths", "findings_section"),
    "impression": ("id", "image_paths", "impression_section"),
}
# the subject of a MIMIC-CXR-JPG path (files/pXX/pSUBJECT/sSTUDY/<dicom>.jpg) or a CheXpert Plus one (patientNNNNN)
_SUBJECT = (re.compile(r"(?:^|/)p\d{2}/p(\d+)/s\d+/"), re.compile(r"(?:^|/)(patient\d+)/"))


@dataclass
class SrrgStudy:
    """One id as the two datasets describe it."""

    study_id: str
    split: str
    published_split: str
    image_paths: list[str] = field(default_factory=list)
    findings: str | None = None
    impression: str | None = None


@dataclass(frozen=True)
class SrrgRead:
    """The studies and the accounting of every row read: per dataset and published split, the rows
    read; rows merged into a study already read; rows without an id."""

    studies: list[SrrgStudy]
    rows: dict[str, Counter[str]]
    merged: int
    no_id: int


def split_files(root: str | Path, dataset: str) -> dict[str, list[Path]]:
    """Published split -> its parquet files under `root`/data; refuses a folder without the layout."""
    data = Path(root) / "data"
    found = {s: list_files(data, suffix=".parquet", prefix=f"{s}-") for s in PUBLISHED_SPLITS}
    if not data.is_dir() or not any(found.values()):
        raise UserError(
            f"ingest.srrg.{dataset} {root}: no data/<split>-*.parquet files (the published layout of "
            f"StanfordAIMI/srrg_{dataset}, splits {', '.join(PUBLISHED_SPLITS)})"
        )
    return {s: files for s, files in found.items() if files}


def read_split_file(path: Path, dataset: str) -> pl.DataFrame:
    """The columns srrg reads of one split file; refuses a file that lacks any of them."""
    try:
        schema = parquet_schema(path)
    except Exception as exc:  # noqa: BLE001 - polars raises several kinds for a file that is no parquet
        raise UserError(f"{path}: not a readable parquet file ({type(exc).__name__})") from None
    missing = [c for c in NEEDED[dataset] if c not in schema]
    if missing:
        raise UserError(f"{path}: not an SRRG {dataset} split file: missing column(s) {', '.join(missing)}")
    if schema["image_paths"] != pl.List(pl.String):
        raise UserError(
            f"{path}: not an SRRG {dataset} split file: image_paths is {schema['image_paths']}, not a list of strings"
        )
    return read_parquet(path, columns=list(NEEDED[dataset]))


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def read_srrg(cfg: SrrgConfig) -> SrrgRead:
    """Every id of the configured datasets, in the order first read (findings before impression)."""
    if not (cfg.findings or cfg.impression):
        raise UserError("ingest.srrg needs at least one of findings, impression (local copies of the datasets)")
    studies: dict[str, SrrgStudy] = {}
    rows: dict[str, Counter[str]] = {}
    merged = no_id = 0
    for dataset, root in (("findings", cfg.findings), ("impression", cfg.impression)):
        if not root:
            continue
        rows[dataset] = Counter()
        seen: set[str] = set()
        column = f"{dataset}_section"
        for published, files in split_files(root, dataset).items():
            for path in files:
                df = read_split_file(path, dataset)
                rows[dataset][published] += df.height
                for sid, paths, text in df.select("id", "image_paths", column).iter_rows():
                    sid = str(sid).strip() if sid is not None else ""
                    if not sid:
                        no_id += 1
                        continue
                    study = studies.setdefault(sid, SrrgStudy(sid, SPLIT_OF[published], published))
                    if sid in seen:  # the same study again in this dataset: only a reviewed text replaces it
                        merged += 1
                        if published != "test_reviewed":
                            continue
                    seen.add(sid)
                    if published == "test_reviewed":
                        study.split, study.published_split = "test", published
                    setattr(study, dataset, _text(text))
                    study.image_paths.extend(p for p in (paths or []) if p and p not in study.image_paths)
    if no_id:
        log.warning("srrg: %d row(s) without an id are not studies and were left out", no_id)
    return SrrgRead(list(studies.values()), rows, merged, no_id)


def subject_of(study_id: str, image_paths: list[str]) -> str:
    """The patient of a study when its image paths name one (MIMIC-CXR-JPG or CheXpert Plus tree),
    else the study id itself (the splits are official, so the subject only groups a patient's studies)."""
    for path in image_paths:
        for pattern in _SUBJECT:
            m = pattern.search(path.replace("\\", "/"))
            if m:
                return m.group(1)
    return study_id


def study_rows(cfg: SrrgConfig) -> list[dict[str, Any]]:
    """Ingest's rows for SRRG; image paths resolved like MIMIC-CXR's: absolute under image_root (a
    missing file is a missing_images status), else as the dataset writes them."""
    read = read_srrg(cfg)
    root = Path(cfg.image_root) if cfg.image_root else None
    out = []
    for s in read.studies:
        paths = [str(root / p.lstrip("/")) for p in s.image_paths] if root else list(s.image_paths)
        missing = sum(not Path(p).is_file() for p in paths) if root else 0
        status = report_status(s.findings, s.impression, True) or image_status(len(paths), missing) or OK
        out.append(
            {
                "study_id": s.study_id,
                "subject_id": subject_of(s.study_id, s.image_paths),
                "split": s.split,
                "image_paths": paths,
                "image_views": [None] * len(paths),
                "findings": s.findings,
                "impression": s.impression,
                "ingest_status": status,
            }
        )
    counts = "; ".join(f"{d}: " + " ".join(f"{k}={v}" for k, v in c.items()) for d, c in read.rows.items())
    log.info("srrg rows read: %s; merged into a study read before: %d; without id: %d", counts, read.merged, read.no_id)
    return out
