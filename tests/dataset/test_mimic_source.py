"""MIMIC-CXR layout reader on an invented-text fixture in the published file layout."""

from __future__ import annotations

import polars as pl
import pytest
from fixtures.mimic_cxr_layout import build_mimic_fixture

from srrg.config import stage_config
from srrg.errors import UserError
from srrg.settings.ingest import MimicConfig
from srrg.sources import mimic_cxr


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return build_mimic_fixture(tmp_path_factory.mktemp("mimic"))


def test_findings_impression_variants():
    assert mimic_cxr.findings_impression(" FINDINGS: a.\n IMPRESSION: b.") == ("a.", "b.")
    assert mimic_cxr.findings_impression(" FINDINGS AND IMPRESSION: c.") == ("c.", None)
    assert mimic_cxr.findings_impression(" CONCLUSION: d.") == (None, "d.")
    assert mimic_cxr.findings_impression("no headers at all.") == (None, None)
    # an empty section counts as absent
    assert mimic_cxr.findings_impression(" FINDINGS:\n IMPRESSION: e.") == (None, "e.")


def test_unknown_words_with_colon_stay_in_the_section():
    assert mimic_cxr.findings_impression(" FINDINGS: heart size: normal.\n  lines\n wrap.") == (
        "heart size: normal. lines wrap.",
        None,
    )


def test_decode_replaces_invalid_bytes():
    assert mimic_cxr.decode_report(b"a\xffb") == "a\ufffdb"


def test_image_relpath():
    assert mimic_cxr.image_relpath("10000032", "50414267", "abc") == "files/p10/p10000032/s50414267/abc.jpg"


def test_view_rank_puts_frontal_first():
    assert sorted(["LATERAL", None, "AP", "PA"], key=mimic_cxr.view_rank) == ["PA", "AP", "LATERAL", None]


@pytest.mark.parametrize("use_zip", [False, True])
def test_read_studies_accounts_for_every_study(fixture, use_zip):
    studies = mimic_cxr.read_studies(MimicConfig(**fixture.config(use_zip=use_zip)), progress=False)
    by_id = {s.study_id: s for s in studies}
    assert sorted(by_id) == [f"5000000{i}" for i in range(1, 8)]
    first = by_id["50000001"]
    assert first.subject_id == "10000001" and first.split == "train"
    assert first.views == ("PA", "LATERAL")  # frontal first
    assert first.dicom_ids[0].endswith("00000002")
    assert by_id["50000006"].text is None  # listed, no report
    assert by_id["50000007"].split is None and by_id["50000007"].dicom_ids == ()  # report only
    assert "\ufffd" in by_id["50000005"].text


def test_read_studies_needs_some_input():
    with pytest.raises(ValueError, match="needs at least one"):
        mimic_cxr.read_studies(MimicConfig())


def test_missing_reports_path_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="ingest.mimic_cxr.reports"):
        list(mimic_cxr.iter_report_files(tmp_path / "nope"))


def _ingest(cfg: dict, **over):
    from srrg.ingest import ingest
    from srrg.settings.ingest import IngestConfig

    return ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": cfg, **over}, IngestConfig, "ingest"), progress=False
    )


def test_study_missing_from_the_split_file_takes_its_patients_split(tmp_path):
    """issue 25 item 6: a study absent from the split file got the seeded split of the id hash even
    when its patient's other studies are in the split file (27 of 65,379 patients in two splits)."""
    from fixtures.mimic_cxr_layout import STUDIES

    from srrg.ingest import seeded_split
    from srrg.settings.ingest import SplitConfig

    fx = build_mimic_fixture(tmp_path)
    default = SplitConfig()
    official = {subject: dicoms[0][2] for subject, _, _, dicoms in STUDIES if dicoms}
    # patients whose seeded split differs from their official one: the old rule put them in two splits
    movers = [s for s, split in official.items() if seeded_split(s, default.fractions, default.seed) != split]
    assert movers, "the fixture needs a patient whose hash split differs from its official split"
    extra = {}
    for n, subject in enumerate(movers):
        study = f"5100000{n}"  # two more studies of that patient, reports only (no split, no metadata row)
        for k in range(2):
            path = fx.reports_dir / f"files/p{subject[:2]}/p{subject}/s{study}{k}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b" FINAL REPORT\n IMPRESSION: No acute process.\n")
            extra[f"{study}{k}"] = subject
    df = _ingest(fx.config())
    rows = {r["study_id"]: r for r in df.to_dicts()}
    for study, subject in extra.items():
        assert rows[study]["split"] == official[subject] and rows[study]["split_source"] == "patient"
    per_patient = df.group_by("subject_id").agg(pl.col("split").n_unique().alias("n"))
    assert per_patient["n"].max() == 1  # no patient spans two splits
    assert rows["50000007"]["split_source"] == "seeded"  # a patient with no official split: the id hash


@pytest.mark.parametrize("which", ["split_csv", "metadata_csv"])
def test_official_csv_without_its_columns_is_one_line_naming_it(tmp_path, which):
    """issue 25 (Low): a split CSV without its columns raised polars' ColumnNotFoundError."""
    import gzip

    fx = build_mimic_fixture(tmp_path)
    bad = tmp_path / f"bad-{which}.csv.gz"
    bad.write_bytes(gzip.compress(b"a,b\n1,2\n"))
    with pytest.raises(UserError, match=r"bad-.*missing column\(s\).*found \['a', 'b'\]"):
        _ingest({**fx.config(), which: str(bad)})


def test_zip_members_read_from_their_local_headers_match_zipfile(tmp_path):
    import zipfile

    path = tmp_path / "mimic-cxr-reports.zip"
    texts = {"files/p10/p10000001/s50000001.txt": b"FINDINGS: clear.", "files/p10/p10000001/s50000002.txt": b"x" * 500}
    with zipfile.ZipFile(path, "w") as zf:
        for (name, data), method in zip(texts.items(), (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)):
            zf.writestr(name, data, compress_type=method)
        zf.writestr("files/p10/p10000001/s50000003.txt", b"IMPRESSION: none.", compress_type=zipfile.ZIP_BZIP2)
    got = list(mimic_cxr.iter_report_files(path))
    assert got == [("10000001", "5000000" + n, data) for n, data in zip("123", [*texts.values(), b"IMPRESSION: none."])]
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("files/p10/p10000001/s50000001.txt")
    at = info.header_offset + 30 + len(info.filename) + 2  # a byte inside the stored member's text
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(UserError, match=r"the zip is truncated or damaged \(bad CRC-32"):  # one line, no traceback
        list(mimic_cxr.iter_report_files(path))
