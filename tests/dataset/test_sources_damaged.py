"""Damaged source files are one line naming them (issue 39): a truncated NLMCXR_reports.tgz read by
eval-extraction (ingest already said so; the other readers of the archive raised EOFError), a
MIMIC-CXR reports zip with a damaged member (BadZipFile / zlib.error), and an IU X-ray metadata CSV
that does not parse or lacks its columns (a polars traceback)."""

from __future__ import annotations

import json
import zipfile

import pytest
from archive_helpers import truncated_iu_archive
from fixtures.mimic_cxr_layout import build_mimic_fixture

from srrg.cli import main
from srrg.errors import UserError
from srrg.sources import iu_xray, mimic_cxr


def test_a_truncated_archive_is_one_line_for_every_reader_of_it(tmp_path, capsys):
    """Bug: only ingest's loop caught the EOFError of a cut-off archive; eval-extraction (and any
    other caller of read_reports) gave a traceback."""
    cut = truncated_iu_archive(tmp_path)
    with pytest.raises(UserError, match=rf"^{cut}: the archive is truncated or damaged"):
        list(iu_xray.read_reports(cut))
    assert main(["eval-extraction", "--archive", str(cut), "--gold", "mesh"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"srrg eval-extraction: error: {cut}: the archive is truncated") and "\n" not in err


def test_a_damaged_member_of_the_mimic_zip_is_one_line(tmp_path):
    """Bug: a member whose bytes were damaged raised zlib.error (or BadZipFile) out of ingest."""
    fixture = build_mimic_fixture(tmp_path / "mimic")
    raw = bytearray(fixture.reports_zip.read_bytes())
    with zipfile.ZipFile(fixture.reports_zip) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith(".txt"))
    at = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 2
    raw[at : at + 4] = b"\xff\xff\xff\xff"
    fixture.reports_zip.write_bytes(bytes(raw))
    with pytest.raises(UserError, match=r"mimic-cxr-reports\.zip: the zip is truncated or damaged"):
        list(mimic_cxr.iter_report_files(fixture.reports_zip))


@pytest.mark.parametrize(
    ("text", "message"),
    [('imageid,View Position\n"CXR1,PA\n', "could not parse"), ("x,y\n1,2\n", 'unable to find column "imageid"')],
    ids=["unterminated-quote", "other-columns"],
)
def test_a_bad_metadata_csv_is_one_line_naming_it(tmp_path, capsys, text, message):
    """Bug: read_views handed polars' ComputeError/ColumnNotFoundError out of ingest as a traceback."""
    meta = tmp_path / "meta.csv"
    meta.write_text(text)
    rc = main(["ingest", "--config", json.dumps({"iu_xray": {"metadata": str(meta)}}), "--out", str(tmp_path / "s.pq")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and f"{meta}: not the IU X-ray image metadata" in err and message in err and "\n" not in err
