"""Ingest's small rules with exact expectations: the seeded split against an independent rebuild of
its hash, status priorities, id spellings and image lookup, the view table, the split assignment of
a patient's studies, the paths a source reads, refusals and the summary line."""

from __future__ import annotations

import hashlib
import logging

import polars as pl
import pytest

from srrg import ingest as I
from srrg.config import stage_config
from srrg.errors import UserError
from srrg.settings.ingest import IngestConfig, IUConfig, SplitConfig
from srrg.sources import common as C
from srrg.sources import iu_xray, mimic_cxr


def expected_split(key: str, fractions: dict[str, float], seed: int) -> str:
    """docs/inputs.md: sha256 of "<seed>:<id>", its first 8 bytes as a number in [0, 1), against the
    cumulative normalized fractions in the order train, validate, test."""
    u = int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big") / 2**64
    total = sum(fractions.values())
    edge = 0.0
    for name in ("train", "validate", "test"):
        edge += fractions.get(name, 0.0) / total
        if u < edge:
            return name
    raise AssertionError("u < 1 always falls inside the last edge")


@pytest.mark.parametrize(
    "fractions",
    [
        {"train": 0.7, "validate": 0.1, "test": 0.2},
        {"train": 1, "validate": 1, "test": 2},
        {"validate": 0.5, "test": 0.5},
        {"train": 3.0},
    ],
)
def test_seeded_split_is_the_documented_hash(fractions):
    keys = [f"p{i}" for i in range(300)]
    got = [I.seeded_split(k, fractions, 13) for k in keys]
    assert got == [expected_split(k, fractions, 13) for k in keys]
    assert set(got) == {s for s in I.SPLITS if fractions.get(s, 0) > 0}


def test_seeded_split_examples():
    # u(13, "p0") = 0.94998, u(13, "p5") = 0.54186, u(13, "p1") = 0.03446
    fr = {"train": 0.7, "validate": 0.1, "test": 0.2}
    assert [I.seeded_split(k, fr, 13) for k in ("p0", "p5", "p1")] == ["test", "train", "train"]
    # on either side of p0's 0.94998
    assert I.seeded_split("p0", {"train": 0.9499, "validate": 0.0, "test": 0.0501}, 13) == "test"
    assert I.seeded_split("p0", {"train": 0.9500, "validate": 0.0, "test": 0.0500}, 13) == "train"


def test_seeded_split_refuses_all_zero_fractions_with_one_line():
    with pytest.raises(UserError, match=r"^ingest.split.fractions must not all be zero$"):
        I.seeded_split("k", {"train": 0.0}, 0)


def test_natural_key_parts():
    assert C.natural_key("CXR10_2") == ("CXR", 10, "_", 2, "")
    assert C.natural_key("abc") == ("abc",)
    assert sorted(["s10", "s9", "s100", "s09x"], key=C.natural_key) == ["s9", "s09x", "s10", "s100"]


def test_report_and_image_status_rules():
    assert C.report_status("findings", None, True) is None
    assert C.report_status(None, "impression", True) is None
    assert C.report_status("", "", True) == C.NO_SECTIONS
    assert C.report_status("findings", "impression", False) == C.NO_REPORT
    assert C.image_status(0, 3) == C.NO_IMAGES
    assert C.image_status(1, 1) == C.MISSING_IMAGES
    assert (C.OK, C.NO_REPORT, C.NO_SECTIONS, C.NO_IMAGES, C.MISSING_IMAGES) == (
        "ok",
        "no_report",
        "no_sections",
        "no_images",
        "missing_images",
    )


def test_iu_metadata_key_drops_only_the_leading_image_number():
    assert iu_xray.metadata_key("CXR12_3_IM-0001-1001") == "CXR12_IM-0001-1001"
    assert iu_xray.metadata_key("xCXR1_1_IM-0001") == "xCXR1_1_IM-0001"
    assert iu_xray.metadata_key("CXR1_1_2_IM") == "CXR1_2_IM"


def test_read_iu_views_keeps_images_with_a_view(tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text("imageid,View Position,Other\nCXR1_IM-1,PA,x\nCXR1_IM-2,,y\nCXR2_IM-3,LATERAL,z\n")
    assert iu_xray.read_views(path) == {"CXR1_IM-1": "PA", "CXR2_IM-3": "LATERAL"}


def test_resolve_iu_image_prefers_an_existing_file(tmp_path):
    (tmp_path / "CXR1_IM-1.png").write_bytes(b"x")
    (tmp_path / "CXR2_1_IM-2.png").write_bytes(b"x")
    assert iu_xray.resolve_image(tmp_path, "CXR1_1_IM-1", ".png") == tmp_path / "CXR1_IM-1.png"
    assert iu_xray.resolve_image(tmp_path, "CXR2_1_IM-2", ".png") == tmp_path / "CXR2_1_IM-2.png"
    assert iu_xray.resolve_image(tmp_path, "CXR3_1_IM-3", ".jpg") == tmp_path / "CXR3_1_IM-3.jpg"  # expected path


def test_packaged_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="package 'no_such_package_srrg' is not installed"):
        C.packaged_file("no_such_package_srrg", "x")
    with pytest.raises(FileNotFoundError, match="missing from the installed 'srrg' package"):
        C.packaged_file("srrg", "no/such/file.txt")
    assert C.packaged_file("srrg", "ingest.py").name == "ingest.py"


def test_a_studys_missing_split_comes_from_its_patient_or_the_seed():
    rows = [
        {"subject_id": "p1", "study_id": "s1", "split": None},
        {"subject_id": "p1", "study_id": "s2", "split": "test"},
        {"subject_id": "p1", "study_id": "s3", "split": "train"},  # the file disagrees: the first wins
        {"subject_id": "p2", "study_id": "s4", "split": "unknown"},  # not a split: treated as missing
        {"subject_id": "p3", "study_id": "s5", "split": "validate"},
    ]
    split = SplitConfig(fractions={"train": 0.2, "validate": 0.3, "test": 0.5}, seed=7)
    I.assign_splits(rows, split)
    assert [(r["split"], r["split_source"]) for r in rows] == [
        ("test", "patient"),
        ("test", "official"),
        ("train", "official"),
        (expected_split("p2", split.fractions, 7), "seeded"),
        ("validate", "official"),
    ]


def test_input_paths_name_every_file_of_the_configured_source():
    iu = stage_config({"iu_xray": {"archive": "a.tgz", "image_root": "img"}}, IngestConfig, "ingest")
    assert I.input_paths(iu) == {
        "ingest.iu_xray.archive": "a.tgz",
        "ingest.iu_xray.metadata": None,
        "ingest.iu_xray.image_root": "img",
    }
    mimic = stage_config(
        {"source": "mimic_cxr", "mimic_cxr": {"reports": "r", "split_csv": "s.csv.gz"}}, IngestConfig, "ingest"
    )
    paths = I.input_paths(mimic)
    assert paths["ingest.mimic_cxr.reports"] == "r" and paths["ingest.mimic_cxr.split_csv"] == "s.csv.gz"
    assert all(k.startswith("ingest.mimic_cxr.") for k in paths) and "ingest.mimic_cxr.image_ext" not in paths


def test_ingest_refuses_an_unknown_source_and_an_empty_collection(monkeypatch):
    with pytest.raises(ValueError, match=r"^source must be one of iu_xray, mimic_cxr, srrg, got 'dicom'$"):
        IngestConfig(source="dicom")  # type: ignore[arg-type]
    monkeypatch.setattr(iu_xray, "study_rows", lambda cfg, progress: [])
    with pytest.raises(
        UserError,
        match=r"^ingest.source iu_xray: the configured files hold no study; "
        r"check the paths in ingest.iu_xray$",
    ):
        I.ingest(IngestConfig(), progress=False)


def test_ingest_sorts_naturally_splits_before_the_limit_and_sets_the_view(monkeypatch):
    def row(study, subject, split, views):
        return {
            "study_id": study,
            "subject_id": subject,
            "split": split,
            "image_paths": [f"{study}.png"] * len(views),
            "image_views": views,
            "findings": "f",
            "impression": None,
            "ingest_status": "ok",
        }

    rows = [row("s10", "p1", "train", ["LATERAL", "PA"]), row("s9", "p1", None, []), row("s2", "p2", None, ["PA"])]
    monkeypatch.setattr(iu_xray, "study_rows", lambda cfg, progress: [dict(r) for r in rows])
    df = I.ingest(IngestConfig(limit=2), progress=False)
    assert df.columns == list(I.SCHEMA)
    # s9 comes before s10 and is cut by the limit only after it took s10's official split
    assert df.select("study_id", "split", "split_source", "view", "source").rows() == [
        ("s2", I.seeded_split("p2", SplitConfig().fractions, 13), "seeded", "PA", "iu_xray"),
        ("s9", "train", "patient", None, "iu_xray"),
    ]


def test_summary_line():
    df = pl.DataFrame(
        {
            "ingest_status": ["ok", "ok", "no_report", "no_sections"],
            "split": ["train", "test", "train", "train"],
            "findings": ["a", None, None, None],
            "impression": ["b", "c", None, None],
        },
    )
    # 3 reports with text: findings in 1, impression in 2
    assert I.summarize(df, 1.25) == (
        "ingest: studies=4 out=4 no_report=1 no_sections=1 ok=2 | findings found in 33.3% impression in 66.7% of "
        "reports | train=3 validate=0 test=1 | 1.2s"
    )
    none = pl.DataFrame({"ingest_status": ["no_report"], "split": ["test"], "findings": [None], "impression": [None]})
    assert "findings found in n/a impression in n/a" in I.summarize(none, 0.0)


def test_seeded_split_intervals_are_closed_below_and_open_above():
    # p0 hashes to u = 0.94998... (< 1/2 would make 1 - u inexact); a train share of exactly u puts
    # p0 on the edge, which belongs to the next split
    u = int.from_bytes(hashlib.sha256(b"13:p0").digest()[:8], "big") / 2**64
    assert u + (1 - u) == 1.0
    assert I.seeded_split("p0", {"train": u, "validate": 0.0, "test": 1 - u}, 13) == "test"
    assert I.seeded_split("p0", {"train": u, "validate": 1 - u, "test": 0.0}, 13) == "validate"


IU_XML = """<?xml version="1.0" encoding="utf-8"?>
<eCitation><uId id="{sid}"/>
<MedlineCitation><Article><Abstract>
<AbstractText Label="FINDINGS">{findings}</AbstractText>
<AbstractText Label="IMPRESSION">No acute disease.</AbstractText>
</Abstract></Article></MedlineCitation>
{images}
</eCitation>"""


def iu_archive(tmp_path):
    from archive_helpers import write_tgz

    def xml(sid: str, findings: str, images: list[str]) -> bytes:
        parents = "".join(
            f'<parentImage id="{i}"><figureId>F{k}</figureId></parentImage>' for k, i in enumerate(images)
        )
        return IU_XML.format(sid=sid, findings=findings, images=parents).encode()

    archive = write_tgz(
        tmp_path,
        {
            "ecgen-radiology/10.xml": xml("CXR10", "Heart is normal.", []),
            # in natural order the lateral image comes first; the PA view ranks before it
            "ecgen-radiology/2.xml": xml("CXR2", "Small effusion.", ["CXR2_1_IM-0001-4001", "CXR2_2_IM-0001-3001"]),
        },
    )
    meta = tmp_path / "meta.csv"
    meta.write_text("imageid,View Position\nCXR2_IM-0001-4001,LATERAL\nCXR2_IM-0001-3001,PA\n")
    return archive, meta


def test_iu_rows_read_the_configured_archive_and_order_images_by_view(tmp_path):
    archive, meta = iu_archive(tmp_path)
    df = I.ingest(
        stage_config({"iu_xray": {"archive": str(archive), "metadata": str(meta)}}, IngestConfig, "ingest"),
        progress=False,
    )
    rows = {r["study_id"]: r for r in df.to_dicts()}
    assert list(rows) == ["CXR2", "CXR10"]
    assert rows["CXR2"]["image_paths"] == ["CXR2_2_IM-0001-3001", "CXR2_1_IM-0001-4001"]
    assert rows["CXR2"]["image_views"] == ["PA", "LATERAL"] and rows["CXR2"]["view"] == "PA"
    assert rows["CXR2"]["findings"] == "Small effusion." and rows["CXR2"]["ingest_status"] == "ok"
    assert rows["CXR10"]["ingest_status"] == "no_images" and rows["CXR10"]["image_paths"] == []


def test_iu_rows_resolve_each_image_under_the_image_root(tmp_path):
    archive, meta = iu_archive(tmp_path)
    root = tmp_path / "images"
    root.mkdir()
    (root / "CXR2_IM-0001-3001.png").write_bytes(b"png")  # the PA image, in the metadata spelling
    cfg = stage_config(
        {"iu_xray": {"archive": str(archive), "metadata": str(meta), "image_root": str(root)}}, IngestConfig, "ingest"
    )
    row = I.ingest(cfg, progress=False).filter(pl.col("study_id") == "CXR2").row(0, named=True)
    assert row["image_paths"] == [str(root / "CXR2_IM-0001-3001.png"), str(root / "CXR2_1_IM-0001-4001.png")]
    assert row["ingest_status"] == "missing_images"


def test_a_damaged_default_archive_is_named_in_one_line(tmp_path, monkeypatch):
    """The default archive (torchxrayvision's copy) cut off: one line naming the file read."""
    from srrg.sources import iu_xray

    archive, meta = iu_archive(tmp_path)
    cut = tmp_path / "cut" / "NLMCXR_reports.tgz"
    cut.parent.mkdir()
    cut.write_bytes(archive.read_bytes()[:-40])
    monkeypatch.setattr(iu_xray, "torchxrayvision_archive", lambda: cut)
    with pytest.raises(
        UserError,
        match=rf"^{cut}: the archive is truncated or damaged \(Compressed file ended .*\); download it again$",
    ):
        iu_xray.study_rows(IUConfig(metadata=str(meta)), progress=False)


def test_mimic_rows_report_progress_only_when_asked(tmp_path, caplog):
    from fixtures.mimic_cxr_layout import build_mimic_fixture

    cfg = stage_config(
        {"source": "mimic_cxr", "mimic_cxr": build_mimic_fixture(tmp_path).config()}, IngestConfig, "ingest"
    ).mimic_cxr
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        assert len(mimic_cxr.study_rows(cfg, 1, progress=False)) == 7
        assert not caplog.records
        mimic_cxr.study_rows(cfg, 1, progress=True)  # without a terminal: plain progress lines through logging
        assert any(r.getMessage().startswith("mimic reports: ") for r in caplog.records)


def test_sections_of_a_missing_report_are_none():
    texts = [f"FINDINGS: Lungs {i}\n clear.\nIMPRESSION:  No acute {i}." if i % 3 else None for i in range(9)]
    texts[4] = "no headers at all"
    pairs = mimic_cxr.sections_of(texts)
    # sections_of gives the texts of SECTION_NAMES: findings, impression, indication, technique, comparison
    assert pairs[0] == (None,) * 5 and pairs[1] == ("Lungs 1 clear.", "No acute 1.", None, None, None)


def test_sections_split_while_reading_equal_one_process(monkeypatch):
    texts = [f"FINDINGS: Lungs {i}\n clear.\nIMPRESSION:  No acute {i}.".encode() for i in range(9)]
    texts[4] = b"no headers at all"
    reports = [(f"1{i}", f"5{i}", raw) for i, raw in enumerate(texts)]
    monkeypatch.setattr(mimic_cxr, "_CHUNK", 2)  # the first chunk here, 4 more over 2 workers
    for n_process in (1, 2):
        got = list(mimic_cxr.split_while_reading(iter(reports), n_process))
        assert [(s, t, x) for s, t, x, _ in got] == [(s, t, raw.decode()) for s, t, raw in reports]
        assert [pair for *_, pair in got] == mimic_cxr.sections_of([raw.decode() for raw in texts])
    assert got[1][3] == ("Lungs 1 clear.", "No acute 1.", None, None, None) and got[4][3] == (None,) * 5
