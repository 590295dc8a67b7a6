"""The SRRG datasets as an ingest source (srrg.sources.srrg; docs/inputs.md "SRRG"), on a synthetic
copy in the published layout (tests/fixtures/srrg_layout.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from fixtures.srrg_layout import FINDINGS, MISSING_IMAGE, STUDY_IDS, build_srrg_fixture

from srrg.errors import UserError
from srrg.ingest import ingest
from srrg.settings.ingest import IngestConfig, SrrgConfig
from srrg.sources.srrg import read_srrg


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return build_srrg_fixture(tmp_path_factory.mktemp("srrg"))


def _ingest(fixture, **srrg) -> pl.DataFrame:
    return ingest(IngestConfig(source="srrg", srrg=SrrgConfig(**(fixture.config() | srrg))), progress=False)


def test_every_row_of_all_four_splits_is_accounted_for(fixture) -> None:
    """Catches a split file left unread (test_reviewed in particular), a row silently dropped, or a
    study counted twice: rows read = studies + rows merged into one + rows without an id."""
    read = read_srrg(SrrgConfig(**fixture.config()))
    assert dict(read.rows["findings"]) == {"train": 4, "validate": 1, "test": 2, "test_reviewed": 1}
    assert dict(read.rows["impression"]) == {"train": 3, "validate": 1, "test": 2, "test_reviewed": 1}
    assert read.no_id == 1 and read.merged == 2
    ids_per_dataset = {"findings": 6, "impression": 6}  # distinct ids each dataset holds
    assert sum(sum(c.values()) for c in read.rows.values()) == sum(ids_per_dataset.values()) + read.merged + read.no_id
    assert sorted(s.study_id for s in read.studies) == list(STUDY_IDS)


def test_studies_join_findings_and_impression_by_id(fixture) -> None:
    """Catches the two datasets not joined by study, the organ sections flattened, the reviewed
    text not preferred, test_reviewed left as a split srrg does not know, or a wrong status."""
    df = _ingest(fixture)
    assert df["study_id"].to_list() == list(STUDY_IDS)
    row = {r["study_id"]: r for r in df.to_dicts()}
    assert row["s0000001"]["findings"] == FINDINGS["lungs"] + "\n\n" + FINDINGS["pleura"]
    assert row["s0000001"]["impression"].startswith("1. Small left pleural effusion.\n2.")
    assert row["s0000003"]["impression"] is None and row["s0000007"]["findings"] is None
    assert row["s0000005"]["findings"] == FINDINGS["pleura"]  # test_reviewed replaces test
    assert row["s0000006"]["impression"] == "1. Moderate cardiomegaly."
    assert {r["split"] for r in row.values()} <= {"train", "validate", "test"}
    assert row["s0000005"]["split"] == "test" and row["s0000004"]["split"] == "validate"
    assert row["s0000003"]["ingest_status"] == "missing_images"
    assert {r["ingest_status"] for k, r in row.items() if k != "s0000003"} == {"ok"}
    assert df["source"].unique().to_list() == ["srrg"]


def test_image_paths_resolve_like_mimic_cxr(fixture) -> None:
    """Catches image paths not placed under image_root (or checked there), the patient not read
    from a MIMIC-CXR-JPG path, or paths rewritten when no root is set."""
    df = _ingest(fixture)
    first = df.filter(pl.col("study_id") == "s0000001").row(0, named=True)
    assert len(first["image_paths"]) == 2 and all(Path(p).is_file() for p in first["image_paths"])
    assert first["image_paths"][0].startswith(str(fixture.image_root))
    assert first["subject_id"] == "10000001"
    bare = _ingest(fixture, image_root=None)
    assert MISSING_IMAGE in bare.filter(pl.col("study_id") == "s0000003")["image_paths"][0].to_list()
    assert set(bare["ingest_status"]) == {"ok"}


def test_one_dataset_alone_is_read(fixture) -> None:
    """Catches a reader that needs both datasets (a user may hold only the findings)."""
    df = _ingest(fixture, impression=None)
    assert df.height == 6 and df["impression"].is_null().all()


def test_a_copy_without_the_layout_is_refused(tmp_path, fixture) -> None:
    """Catches a reader that guesses: a folder without data/<split>-*.parquet, or a file without
    the card's columns, is one line naming the file and what is missing."""
    with pytest.raises(UserError, match=r"ingest.srrg.findings .*no data/<split>-\*.parquet"):
        _ingest(fixture, findings=str(tmp_path))
    damaged = build_srrg_fixture(tmp_path / "damaged", drop_column="findings_section")
    with pytest.raises(
        UserError, match=r"train-00000-of-00001.parquet: not an SRRG findings split file: missing column"
    ):
        _ingest(fixture, findings=str(damaged.findings))
    flat = tmp_path / "flat" / "data"
    flat.mkdir(parents=True)
    pl.DataFrame({"id": ["s1"], "image_paths": ["a.jpg"], "findings_section": ["x"]}).write_parquet(
        flat / "test-0.parquet"
    )
    with pytest.raises(UserError, match=r"test-0.parquet: not an SRRG findings split file: image_paths is String"):
        _ingest(fixture, findings=str(flat.parent))
    (tmp_path / "bad" / "data").mkdir(parents=True)
    (tmp_path / "bad" / "data" / "train-0.parquet").write_text("not parquet")
    with pytest.raises(UserError, match=r"train-0.parquet: not a readable parquet file"):
        _ingest(fixture, impression=str(tmp_path / "bad"))
    with pytest.raises(UserError, match="needs at least one of findings, impression"):
        ingest(IngestConfig(source="srrg"), progress=False)
