"""Ingest stage: seeded splits, statuses, MIMIC-CXR fixture and the IU X-ray default."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from fixtures.mimic_cxr_layout import build_mimic_fixture

from srrg import ingest as I
from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.settings.ingest import IngestConfig
from srrg.sources import common as C
from srrg.sources import iu_xray


@pytest.fixture(scope="module")
def mimic(tmp_path_factory):
    return build_mimic_fixture(tmp_path_factory.mktemp("mimic"))


def test_seeded_split_is_deterministic_and_follows_fractions():
    fr = {"train": 0.7, "validate": 0.1, "test": 0.2}
    keys = [f"id{i}" for i in range(4000)]
    a = [I.seeded_split(k, fr, 13) for k in keys]
    assert a == [I.seeded_split(k, fr, 13) for k in keys]
    counts = Counter(a)
    assert abs(counts["train"] / 4000 - 0.7) < 0.03
    assert abs(counts["validate"] / 4000 - 0.1) < 0.02
    assert a != [I.seeded_split(k, fr, 14) for k in keys]


def test_seeded_split_edge_fractions():
    assert {I.seeded_split(f"k{i}", {"train": 0, "validate": 0, "test": 1}, 0) for i in range(50)} == {"test"}
    # fractions are normalized: 2:2 is 50/50
    got = Counter(I.seeded_split(f"k{i}", {"train": 2, "validate": 0, "test": 2}, 0) for i in range(2000))
    assert set(got) == {"train", "test"} and abs(got["train"] - 1000) < 100
    with pytest.raises(ValueError, match="must not all be zero"):
        I.seeded_split("k", {"train": 0, "validate": 0, "test": 0}, 0)


def test_natural_key_orders_numbers():
    assert sorted(["CXR10", "CXR2", "CXR1"], key=C.natural_key) == ["CXR1", "CXR2", "CXR10"]


def test_statuses_priority():
    assert C.report_status(None, None, False) == C.NO_REPORT
    assert C.report_status(None, None, True) == C.NO_SECTIONS
    assert C.report_status("a", None, True) is None
    assert C.image_status(0, 0) == C.NO_IMAGES
    assert C.image_status(2, 1) == C.MISSING_IMAGES
    assert C.image_status(2, 0) is None


def test_iu_metadata_key():
    assert iu_xray.metadata_key("CXR1_1_IM-0001-3001") == "CXR1_IM-0001-3001"
    assert iu_xray.metadata_key("CXR3_IM-1384-1001") == "CXR3_IM-1384-1001"


def test_mimic_ingest_accounts_for_every_study(mimic):
    df = I.ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": mimic.config()}, IngestConfig, "ingest"), progress=False
    )
    assert df.columns == list(I.SCHEMA)
    rows = {r["study_id"]: r for r in df.to_dicts()}
    assert list(rows) == [f"5000000{i}" for i in range(1, 8)]
    status = {k: r["ingest_status"] for k, r in rows.items()}
    assert status == {
        "50000001": "ok",
        "50000002": "ok",
        "50000003": "ok",
        "50000004": "no_sections",
        "50000005": "missing_images",
        "50000006": "no_report",
        "50000007": "no_images",
    }
    first = rows["50000001"]
    assert first["findings"].startswith("There is a small right pleural effusion.")
    assert first["impression"] == "Small right pleural effusion. Possible atelectasis in the left lower lobe."
    assert first["view"] == "PA" and first["image_views"] == ["PA", "LATERAL"]
    assert first["image_paths"][0] == str(
        mimic.image_root / "files/p10/p10000001/s50000001/aaaaaaa1-00000000-00000000-00000000-00000002.jpg"
    )
    assert Path(first["image_paths"][0]).is_file()
    assert first["split"] == "train" and first["split_source"] == "official"
    assert rows["50000003"]["findings"] == "Moderate pulmonary edema. Large left pleural effusion."
    assert rows["50000003"]["impression"] is None
    assert rows["50000007"]["split_source"] == "seeded" and rows["50000007"]["split"] in I.SPLITS
    assert "\ufffd" in rows["50000005"]["findings"]
    assert set(df["source"]) == {"mimic_cxr"}


def test_mimic_zip_equals_folder_and_relative_paths_without_image_root(mimic):
    folder = I.ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": mimic.config()}, IngestConfig, "ingest"), progress=False
    )
    zipped = I.ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": mimic.config(use_zip=True)}, IngestConfig, "ingest"),
        progress=False,
    )
    assert folder.equals(zipped)
    rel = I.ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": mimic.config(images=False)}, IngestConfig, "ingest"),
        progress=False,
    )
    first = rel.filter(pl.col("study_id") == "50000001").row(0, named=True)
    assert first["image_paths"][0] == "files/p10/p10000001/s50000001/aaaaaaa1-00000000-00000000-00000000-00000002.jpg"
    # without an image root nothing can be missing
    assert "missing_images" not in set(rel["ingest_status"])


def test_limit_keeps_first_studies(mimic):
    df = I.ingest(
        stage_config({"source": "mimic_cxr", "limit": 2, "mimic_cxr": mimic.config()}, IngestConfig, "ingest"),
        progress=False,
    )
    assert df["study_id"].to_list() == ["50000001", "50000002"]


def test_cli_writes_parquet_and_summary(mimic, tmp_path, capsys):
    out = tmp_path / "studies.parquet"
    cfg = json.dumps({"mimic_cxr": mimic.config()})
    assert srrg_main(["ingest", "--source", "mimic_cxr", "--config", cfg, "--out", str(out), "--no-progress"]) == 0
    assert pl.read_parquet(out).height == 7
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("ingest: studies=7 out=7")
    # 6 studies have text: findings in 3 (50000001, 03, 05), impression in 4 (01, 02, 05, 07)
    assert "findings found in 50.0% impression in 66.7% of reports" in line


def test_cli_rejects_bad_config(tmp_path, capsys):
    rc = srrg_main(["ingest", "--config", '{"limt": 3}', "--out", str(tmp_path / "x.parquet")])
    assert rc == 2 and "unknown key ingest.limt" in capsys.readouterr().err


def test_iu_default_ingest_offline_slice():
    df = I.ingest(stage_config({"limit": 40}, IngestConfig, "ingest"), progress=False)
    assert df.height == 40 and df.columns == list(I.SCHEMA)
    assert df["study_id"][:3].to_list() == ["CXR1", "CXR2", "CXR3"]
    assert set(df["split_source"]) == {"seeded"} and set(df["split"]) <= set(I.SPLITS)
    assert (df["subject_id"] == df["study_id"]).all()
    first = df.row(0, named=True)
    assert first["image_paths"] == ["CXR1_1_IM-0001-3001", "CXR1_1_IM-0001-4001"]
    assert first["findings"].startswith("The cardiac silhouette and mediastinum size are within normal limits.")
    assert first["impression"] == "Normal chest x-XXXX."
    assert first["ingest_status"] == "ok"
    # same seed, same splits; the split of a study does not depend on the limit
    again = I.ingest(stage_config({"limit": 10}, IngestConfig, "ingest"), progress=False)
    assert again["split"].to_list() == df["split"][:10].to_list()


@pytest.mark.slow
def test_iu_full_archive_accounts_for_every_report():
    df = I.ingest(IngestConfig(), progress=False)
    assert df.height == 3955 and df["study_id"].n_unique() == 3955
    # 3,851 reports have images (SOURCE.md); a report without sections reports that first
    assert (df["image_paths"].list.len() == 0).sum() == 3955 - 3851
    assert Counter(df["ingest_status"].to_list()) == {"ok": 3826, "no_images": 101, "no_sections": 28}


def test_iu_image_root_resolves_both_spellings(tmp_path, shared_data):
    images = shared_data("iu_xray_images")
    df = I.ingest(
        stage_config({"limit": 7, "iu_xray": {"image_root": str(images)}}, IngestConfig, "ingest"), progress=False
    )
    rows = {r["study_id"]: r for r in df.to_dicts()}
    # CXR7 has two images in the shared folder, named without the image number
    assert [Path(p).name for p in rows["CXR7"]["image_paths"]] == ["CXR7_IM-2263-1001.png", "CXR7_IM-2263-2001.png"]
    assert rows["CXR7"]["ingest_status"] == "ok"
    assert rows["CXR1"]["ingest_status"] == "missing_images"
