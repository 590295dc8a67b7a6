"""The IU X-ray (Open-i) report archive: NLMCXR_reports.tgz -> one record per XML report.

Each `ecgen-radiology/<n>.xml` holds AbstractText sections (COMPARISON, INDICATION, FINDINGS,
IMPRESSION), expert MeSH major codes with qualifiers ("Opacity/lung/base/left/mild"), automatic
MTI terms and the ids of its images (parentImage). Every XML member becomes a record; one that
does not parse is kept with status `invalid_xml`, so no study disappears silently. `study_rows`
turns the records into ingest's study rows (`ingest.iu_xray` config: IUConfig), with the images in
view order (DICOM metadata) and their files under an optional image folder.
"""

from __future__ import annotations

import gzip
import re
import tarfile
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_csv
from srrg.progress import tracked
from srrg.settings.ingest import IUConfig
from srrg.sources.common import OK, context_columns, image_status, natural_key, packaged_file, report_status
from srrg.sources.mimic_cxr import view_rank

INVALID_XML = "invalid_xml"
ARCHIVE_NAME = "NLMCXR_reports.tgz"


@dataclass(frozen=True)
class IUReport:
    """One Open-i report; text fields are None when the section is absent or empty."""

    study_id: str
    file: str
    findings: str | None
    impression: str | None
    comparison: str | None
    indication: str | None
    mesh_major: tuple[str, ...]
    mesh_automatic: tuple[str, ...]
    image_ids: tuple[str, ...]
    status: str = OK

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        for key in ("mesh_major", "mesh_automatic", "image_ids"):
            row[key] = list(row[key])
        return row


def torchxrayvision_archive() -> Path:
    """The copy of the archive that the torchxrayvision wheel ships (found without importing it)."""
    return packaged_file("torchxrayvision", f"data/{ARCHIVE_NAME}")


def default_metadata() -> Path:
    """torchxrayvision's copy of the DICOM metadata (View Position per image)."""
    return packaged_file("torchxrayvision", "data/nlmcxr_dicom_metadata.csv.gz")


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def parse_report_xml(data: bytes, file: str) -> IUReport:
    """One XML document -> IUReport (status invalid_xml when it does not parse)."""
    stem = Path(file).stem
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return IUReport(f"CXR{stem}", file, None, None, None, None, (), (), (), INVALID_XML)
    uid = root.find("uId")
    study_id = (uid.get("id") if uid is not None else None) or f"CXR{stem}"
    sections = {(a.get("Label") or "").upper(): _text(a.text) for a in root.iter("AbstractText")}
    major = tuple(t for t in (_text(m.text) for m in root.findall("./MeSH/major")) if t)
    automatic = tuple(t for t in (_text(m.text) for m in root.findall("./MeSH/automatic")) if t)
    images = tuple(i.get("id") for i in root.findall("parentImage") if i.get("id"))
    return IUReport(
        study_id,
        file,
        sections.get("FINDINGS"),
        sections.get("IMPRESSION"),
        sections.get("COMPARISON"),
        sections.get("INDICATION"),
        major,
        automatic,
        images,
    )


def read_reports(archive: str | Path | None = None, progress: bool = False) -> Iterator[IUReport]:
    """Every XML report of the archive (default: the torchxrayvision copy), in archive order."""
    path = Path(archive) if archive else torchxrayvision_archive()
    if not path.is_file():
        raise FileNotFoundError(f"IU X-ray archive not found: {path}")
    try:
        tar = tarfile.open(path, "r:*")
    except tarfile.ReadError as err:
        raise UserError(f"{path}: not a readable tar archive ({err}); expected the Open-i NLMCXR_reports.tgz") from None
    try:  # read as the caller iterates: a cut-off or damaged archive fails here, for every caller
        with tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.lower().endswith(".xml")]
            for member in tracked(members, desc="iu_xray", unit="report", disable=not progress):
                handle = tar.extractfile(member)
                data = handle.read() if handle is not None else b""
                yield parse_report_xml(data, member.name)
    except (EOFError, tarfile.TarError, zlib.error, gzip.BadGzipFile) as err:
        raise UserError(f"{path}: the archive is truncated or damaged ({err}); download it again") from None


def read_iu_xray(archive_path: str | Path | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """All reports as plain dicts (study_id, file, findings, impression, comparison, indication,
    mesh_major, mesh_automatic, image_ids, status)."""
    return [r.to_dict() for r in read_reports(archive_path, progress)]


def metadata_key(image_id: str) -> str:
    """Open-i image ids carry the image number ("CXR1_1_IM-0001-3001"); the DICOM metadata and
    some image distributions drop it ("CXR1_IM-0001-3001")."""
    return re.sub(r"^(CXR\d+)_\d+_", r"\1_", image_id)


def read_views(path: str | Path) -> dict[str, str]:
    """Image id (metadata spelling) -> View Position, for the images that have one."""
    try:
        df = read_csv(path, columns=["imageid", "View Position"], infer_schema_length=0)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(
            f"{path}: not the IU X-ray image metadata (a CSV with columns imageid and View Position: {first})"
        ) from None
    return {k: v for k, v in df.iter_rows() if v}


def resolve_image(root: Path, image_id: str, ext: str) -> Path:
    """The existing file for an image id (either spelling), else the canonical expected path."""
    for name in (image_id, metadata_key(image_id)):
        candidate = root / f"{name}{ext}"
        if candidate.is_file():
            return candidate
    return root / f"{image_id}{ext}"


def study_rows(cfg: IUConfig, progress: bool = True) -> list[dict[str, Any]]:
    """Ingest's rows for IU X-ray (no official split: `split` None, seeded by ingest); without an
    image root the image ids are recorded (placeholders later)."""
    views = read_views(cfg.metadata or default_metadata())
    root = Path(cfg.image_root) if cfg.image_root else None
    rows = []
    for rec in read_reports(cfg.archive, progress=progress):  # a damaged archive: read_reports' UserError
        ids = sorted(rec.image_ids, key=lambda i: (view_rank(views.get(metadata_key(i))), natural_key(i)))
        if root:
            paths = [str(resolve_image(root, i, cfg.image_ext)) for i in ids]
            missing = sum(not Path(p).is_file() for p in paths)
        else:
            paths, missing = list(ids), 0
        status = (
            (rec.status if rec.status != OK else None)
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
                "image_views": [views.get(metadata_key(i)) for i in ids],
                "findings": rec.findings or None,
                "impression": rec.impression or None,
                **context_columns(
                    {"indication": rec.indication, "comparison": rec.comparison}, rec.status != INVALID_XML
                ),
                "study_datetime": None,  # Open-i publishes no study dates
                "ingest_status": status,
            }
        )
    return rows
