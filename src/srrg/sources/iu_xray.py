"""The IU X-ray (Open-i) report archive: NLMCXR_reports.tgz -> one record per XML report.

Each `ecgen-radiology/<n>.xml` holds AbstractText sections (COMPARISON, INDICATION, FINDINGS,
IMPRESSION), expert MeSH major codes with qualifiers ("Opacity/lung/base/left/mild"), automatic
MTI terms and the ids of its images (parentImage). Every XML member becomes a record; one that
does not parse is kept with status `invalid_xml`, so no study disappears silently.
"""

from __future__ import annotations

import importlib.util
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from srrg.errors import UserError
from srrg.progress import tracked

OK, INVALID_XML = "ok", "invalid_xml"
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
    spec = importlib.util.find_spec("torchxrayvision")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("torchxrayvision is not installed; pass the path of NLMCXR_reports.tgz")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / ARCHIVE_NAME
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found in the torchxrayvision package")
    return path


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
    with tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.lower().endswith(".xml")]
        for member in tracked(members, desc="iu_xray", unit="report", disable=not progress):
            handle = tar.extractfile(member)
            data = handle.read() if handle is not None else b""
            yield parse_report_xml(data, member.name)


def read_iu_xray(archive_path: str | Path | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """All reports as plain dicts (study_id, file, findings, impression, comparison, indication,
    mesh_major, mesh_automatic, image_ids, status)."""
    return [r.to_dict() for r in read_reports(archive_path, progress)]
