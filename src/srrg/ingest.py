"""Ingest stage: a source collection -> studies.parquet, one row per study (docs/workflow.md).

Every study a source names is a row; `ingest_status` says why a study has no usable report
(no_report, no_sections, invalid_xml) or no images (no_images, missing_images). Collections without an official
split (IU X-ray) get a seeded split computed from the patient id, so it does not depend on the
order of files or on `limit`; a MIMIC-CXR study missing from its split file takes its patient's
official split, and only a patient missing from it altogether gets the seeded one.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import importlib.util
import re
import tarfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

import polars as pl

from srrg.config import doc, from_dict, load_section
from srrg.errors import UserError
from srrg.sources import mimic_cxr
from srrg.sources.mimic_cxr import MimicConfig

SPLITS = ("train", "validate", "test")
OK, NO_REPORT, NO_SECTIONS, NO_IMAGES, MISSING_IMAGES = "ok", "no_report", "no_sections", "no_images", "missing_images"
OFFICIAL, PATIENT, SEEDED = "official", "patient", "seeded"

SCHEMA: dict[str, Any] = {
    "study_id": pl.Utf8,
    "subject_id": pl.Utf8,
    "split": pl.Utf8,
    "split_source": pl.Utf8,
    "source": pl.Utf8,
    "image_paths": pl.List(pl.Utf8),
    "image_views": pl.List(pl.Utf8),
    "view": pl.Utf8,
    "findings": pl.Utf8,
    "impression": pl.Utf8,
    "ingest_status": pl.Utf8,
}


@dataclass(frozen=True)
class SplitConfig:
    """Fractions of train/validate/test (normalized to sum 1) and the seed of the id hash."""

    fractions: dict[str, float] = field(
        default_factory=lambda: {"train": 0.7, "validate": 0.1, "test": 0.2},
        metadata=doc(
            "Shares of train/validate/test (normalized to sum 1).",
            required=list(SPLITS),
            additionalProperties=False,
            properties={s: {"type": "number", "minimum": 0, "maximum": 1} for s in SPLITS},
        ),
    )
    seed: int = field(default=13, metadata=doc("Seed of the id hash."))


@dataclass(frozen=True)
class IUConfig:
    """Open-i archive and optional image folder; None = the copies torchxrayvision ships."""

    archive: str | None = field(default=None, metadata=doc("Open-i NLMCXR_reports.tgz; null = the copy shipped by torchxrayvision."))
    metadata: str | None = field(
        default=None, metadata=doc("nlmcxr_dicom_metadata.csv.gz with the View Position per image; null = the torchxrayvision copy.")
    )
    image_root: str | None = field(
        default=None, metadata=doc("Folder of Open-i PNGs named <image id><image_ext>; null = record image ids only.")
    )
    image_ext: str = ".png"


@dataclass(frozen=True)
class IngestConfig:
    """Which report collection to read and how to split it (srrg ingest)."""

    source: Literal["iu_xray", "mimic_cxr"] = "iu_xray"
    limit: int | None = field(default=None, metadata=doc("Keep only the first N studies (by study id), for demos and tests.", minimum=1))
    split: SplitConfig = field(default_factory=SplitConfig)
    iu_xray: IUConfig = field(default_factory=IUConfig)
    mimic_cxr: MimicConfig = field(default_factory=MimicConfig)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str | None) -> IngestConfig:
        """Validate against the `ingest` schema section (defaults filled), then type it."""
        return from_dict(cls, load_section(data, "ingest"), "ingest")


def seeded_split(key: str, fractions: Mapping[str, float], seed: int) -> str:
    """Deterministic split of one id: a hash of (seed, key) as a uniform number in [0, 1)."""
    total = sum(fractions.get(s, 0.0) for s in SPLITS)
    if total <= 0:
        raise UserError("ingest.split.fractions must not all be zero")
    digest = hashlib.sha256(f"{seed}:{key}".encode("utf-8")).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    edge = 0.0
    for name in SPLITS:
        edge += fractions.get(name, 0.0) / total
        if u < edge:
            return name
    return next(s for s in reversed(SPLITS) if fractions.get(s, 0.0) > 0)


def natural_key(value: str) -> tuple[Any, ...]:
    """Sort "CXR2" before "CXR10" and "9" before "10"."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", value))


def report_status(findings: str | None, impression: str | None, has_text: bool) -> str | None:
    """The report part of the status, or None when the report is usable."""
    if not has_text:
        return NO_REPORT
    if not findings and not impression:
        return NO_SECTIONS
    return None


def image_status(n_images: int, n_missing: int) -> str | None:
    if n_images == 0:
        return NO_IMAGES
    if n_missing:
        return MISSING_IMAGES
    return None


def mimic_rows(cfg: MimicConfig, progress: bool = True) -> list[dict[str, Any]]:
    """Rows for MIMIC-CXR; image paths are absolute under image_root, else relative to the JPG tree."""
    root = Path(cfg.image_root) if cfg.image_root else None
    rows = []
    for s in mimic_cxr.read_studies(cfg, progress=progress):
        findings, impression = mimic_cxr.findings_impression(s.text) if s.text is not None else (None, None)
        rel = [mimic_cxr.image_relpath(s.subject_id, s.study_id, d) for d in s.dicom_ids]
        paths = [str(root / r) for r in rel] if root else rel
        missing = sum(not Path(p).is_file() for p in paths) if root else 0
        status = report_status(findings, impression, s.text is not None) or image_status(len(paths), missing) or OK
        rows.append(
            {
                "study_id": s.study_id,
                "subject_id": s.subject_id,
                "split": s.split,
                "image_paths": paths,
                "image_views": list(s.views),
                "findings": findings,
                "impression": impression,
                "ingest_status": status,
            }
        )
    return rows


def packaged_file(package: str, relative: str) -> Path:
    """A data file shipped inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed; set the path in the config instead")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the installed {package!r} package")
    return path


def default_iu_metadata() -> Path:
    return packaged_file("torchxrayvision", "data/nlmcxr_dicom_metadata.csv.gz")


def iu_metadata_key(image_id: str) -> str:
    """Open-i image ids carry the image number ("CXR1_1_IM-0001-3001"); the DICOM metadata and
    some image distributions drop it ("CXR1_IM-0001-3001")."""
    return re.sub(r"^(CXR\d+)_\d+_", r"\1_", image_id)


def read_iu_views(path: str | Path) -> dict[str, str]:
    """Image id (metadata spelling) -> View Position, for the images that have one."""
    df = pl.read_csv(path, columns=["imageid", "View Position"], infer_schema_length=0)
    return {k: v for k, v in df.iter_rows() if v}


def resolve_iu_image(root: Path, image_id: str, ext: str) -> Path:
    """The existing file for an image id (either spelling), else the canonical expected path."""
    for name in (image_id, iu_metadata_key(image_id)):
        candidate = root / f"{name}{ext}"
        if candidate.is_file():
            return candidate
    return root / f"{image_id}{ext}"


def iu_rows(cfg: IUConfig, progress: bool = True) -> list[dict[str, Any]]:
    """Rows for IU X-ray; without an image root the image ids are recorded (placeholders later)."""
    from srrg.sources import iu_xray

    views = read_iu_views(cfg.metadata or default_iu_metadata())
    root = Path(cfg.image_root) if cfg.image_root else None
    rows = []
    try:  # the archive is read as the loop runs: a cut-off or damaged one fails here
        for rec in iu_xray.read_reports(cfg.archive, progress=progress):
            ids = sorted(rec.image_ids,
                         key=lambda i: (mimic_cxr.view_rank(views.get(iu_metadata_key(i))), natural_key(i)))
            if root:
                paths = [str(resolve_iu_image(root, i, cfg.image_ext)) for i in ids]
                missing = sum(not Path(p).is_file() for p in paths)
            else:
                paths, missing = list(ids), 0
            status = (
                (rec.status if rec.status != iu_xray.OK else None)
                or report_status(rec.findings, rec.impression, True)
                or image_status(len(paths), missing)
                or OK
            )
            rows.append(
                {
                    "study_id": rec.study_id,
                    "subject_id": rec.study_id,
                    "split": None,
                    "image_paths": paths,
                    "image_views": [views.get(iu_metadata_key(i)) for i in ids],
                    "findings": rec.findings or None,
                    "impression": rec.impression or None,
                    "ingest_status": status,
                }
            )
    except (EOFError, tarfile.TarError, zlib.error, gzip.BadGzipFile) as err:
        where = cfg.archive or "the torchxrayvision copy of NLMCXR_reports.tgz"
        raise UserError(f"{where}: the archive is truncated or damaged ({err}); download it again") from None
    return rows


def assign_splits(rows: Iterable[dict[str, Any]], split: SplitConfig) -> None:
    """Fill missing splits so that a patient never spans two splits: a study missing from the split
    file takes the official split of its patient's other studies (split_source `patient`; the first
    in study order, should the file itself disagree); a patient with no official split at all gets a
    seeded hash of the subject id (`seeded`)."""
    official: dict[str, str] = {}
    for row in rows:
        if row["split"] in SPLITS:
            official.setdefault(row["subject_id"], row["split"])
    for row in rows:
        if row["split"] in SPLITS:
            row["split_source"] = OFFICIAL
        elif row["subject_id"] in official:
            row["split"] = official[row["subject_id"]]
            row["split_source"] = PATIENT
        else:
            row["split"] = seeded_split(row["subject_id"], split.fractions, split.seed)
            row["split_source"] = SEEDED


def input_paths(cfg: IngestConfig) -> dict[str, str | None]:
    """Config key -> path of every file or folder the configured source reads (the outputs of
    ingest must be none of them)."""
    section = cfg.iu_xray if cfg.source == "iu_xray" else cfg.mimic_cxr
    return {f"ingest.{cfg.source}.{f.name}": getattr(section, f.name) for f in dataclasses.fields(section)
            if f.name != "image_ext"}


def ingest(cfg: IngestConfig, progress: bool = True) -> pl.DataFrame:
    """Read the configured source into the studies table (sorted by study id, `limit` applied)."""
    if cfg.source == "mimic_cxr":
        rows = mimic_rows(cfg.mimic_cxr, progress)
    elif cfg.source == "iu_xray":
        rows = iu_rows(cfg.iu_xray, progress)
    else:
        raise UserError(f"unknown ingest.source {cfg.source!r} (use iu_xray or mimic_cxr)")
    if not rows:
        raise UserError(f"ingest.source {cfg.source}: the configured files hold no study; check the paths in ingest.{cfg.source}")
    rows.sort(key=lambda r: natural_key(r["study_id"]))
    assign_splits(rows, cfg.split)  # before the limit: a patient's studies beyond it still lend their split
    if cfg.limit is not None:
        rows = rows[: cfg.limit]
    for row in rows:
        row["source"] = cfg.source
        row["view"] = row["image_views"][0] if row["image_views"] else None
    return pl.DataFrame(rows, schema=SCHEMA)


def summarize(df: pl.DataFrame, seconds: float) -> str:
    """The stage's one summary line: rows, statuses, section coverage, split sizes, time."""
    n = df.height
    with_text = df.filter(pl.col("ingest_status") != NO_REPORT).height
    statuses = Counter(df["ingest_status"].to_list())
    splits = Counter(df["split"].to_list())

    def share(col: str) -> str:
        found = df.filter(pl.col(col).is_not_null()).height
        return f"{100 * found / with_text:.1f}%" if with_text else "n/a"

    return (
        f"ingest: studies={n} out={n} "
        + " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        + f" | findings found in {share('findings')} impression in {share('impression')} of reports"
        + " | " + " ".join(f"{s}={splits.get(s, 0)}" for s in SPLITS)
        + f" | {seconds:.1f}s"
    )
