"""The dataset shard writer (srrg.dataset) at its edges: plan arithmetic, shard slicing, column order,
compression settings, manifest counts and refusals (docs/workflow.md, DESIGN §5.4)."""

from __future__ import annotations

import json
import logging

import polars as pl
import pyarrow.parquet as pq
import pytest

from srrg import dataset as D
from srrg.errors import UserError
from srrg.settings.dataset import DatasetConfig


def frame(ids: list[str], splits: list[str], statuses: list[str | None] | None = None) -> pl.DataFrame:
    n = len(ids)
    rep = json.dumps(
        {"positive": [{"name": "edema", "probability": 2, "level": None, "location": None}], "negative": []}
    )
    return pl.DataFrame(
        {
            "study_id": ids,
            "subject_id": [f"p{i}" for i in ids],
            "split": splits,
            "image_paths": [[f"{i}.png"] for i in ids],
            "view": ["PA"] * n,
            "findings": ["f"] * n,
            "impression": [None] * n,
            "structured": [rep] * n,
            "provenance": ["{}"] * n,
            "zeta_status": statuses or ["ok"] * n,
            "alpha_status": ["ok"] * n,
            "structured_raw": [rep] * n,
            "unrelated": [1] * n,
        },
        schema_overrides={"impression": pl.Utf8},
    )


def test_plan_arithmetic():
    assert D.plan_shards({"train": 1}, 1) == {"train": 1, "validate": 1, "test": 1}
    assert D.plan_shards({"train": 3, "test": 7}, 3) == {"train": 1, "validate": 1, "test": 3}
    with pytest.raises(UserError, match="rows_per_shard must be >= 1"):
        D.plan_shards({"train": 3}, 0)
    assert D.shard_name(0) == "part-00000.parquet" and D.shard_name(123) == "part-00123.parquet"


def test_make_plan_names_every_file_split_by_split():
    df = D.to_dataset_frame(frame([f"s{i}" for i in range(7)], ["train"] * 5 + ["test"] * 2))
    plan = D.make_plan(df, DatasetConfig(rows_per_shard=2))
    assert plan == {
        "rows_per_shard": 2,
        "splits": {
            "train": {"rows": 5, "shards": 3},
            "validate": {"rows": 0, "shards": 1},
            "test": {"rows": 2, "shards": 1},
        },
        "files": [
            "train/part-00000.parquet",
            "train/part-00001.parquet",
            "train/part-00002.parquet",
            "validate/part-00000.parquet",
            "test/part-00000.parquet",
        ],
    }
    assert D.shard_paths("out", plan)[0].as_posix() == "out/train/part-00000.parquet"


def test_dataset_frame_orders_ids_naturally_and_keeps_only_known_columns():
    df = D.to_dataset_frame(frame(["s10", "s2", "s1"], ["train", "train", "test"]))
    assert df["study_id"].to_list() == ["s1", "s2", "s10"]
    expected = [c for c in D.COLUMNS if c != "sentences"] + [
        "image_views",
        "structured_raw",
        "alpha_status",
        "zeta_status",
    ]
    assert df.columns == [c for c in expected if c != "image_views"]  # image_views absent from this input
    with pytest.raises(UserError, match="no rows"):
        D.to_dataset_frame(frame([], []))


def test_shards_slice_in_order_and_add_sentences_at_their_place():
    df = D.to_dataset_frame(frame([f"s{i}" for i in range(1, 6)], ["train"] * 5))
    parts = [D.shard_frame(df, "train", i, 2)["study_id"].to_list() for i in range(3)]
    assert parts == [["s1", "s2"], ["s3", "s4"], ["s5"]]
    shard = D.shard_frame(df, "train", 0, 2)
    assert shard.columns[: len(D.COLUMNS)] == list(D.COLUMNS)
    assert shard["sentences"].to_list() == ["there may be edema."] * 2
    empty = D.shard_frame(df, "test", 0, 2)  # an empty split still has its one shard
    assert empty.height == 0 and empty.columns[: len(D.COLUMNS)] == list(D.COLUMNS)
    for bad in (-1, 3):
        with pytest.raises(UserError, match=f"index {bad} does not exist"):
            D.shard_frame(df, "train", bad, 2)


@pytest.mark.parametrize(
    ("compression", "level", "codec"),
    [("zstd", 9, "ZSTD"), ("gzip", 1, "GZIP"), ("snappy", 3, "SNAPPY"), ("uncompressed", None, "UNCOMPRESSED")],
)
def test_write_shard_compression_and_row_groups(tmp_path, compression, level, codec):
    df = D.shard_frame(D.to_dataset_frame(frame([f"s{i}" for i in range(5)], ["train"] * 5)), "train", 0, 10)
    path = tmp_path / "train" / "part-00000.parquet"
    D.write_shard(df, path, DatasetConfig(row_group_size=2, compression=compression, compression_level=level))
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 3 and meta.row_group(0).column(0).compression == codec
    assert meta.row_group(0).column(0).statistics is not None
    assert pl.read_parquet(path).equals(df)
    # no temporary file left, the checksum beside the shard
    assert sorted(p.name for p in path.parent.iterdir()) == ["part-00000.parquet", "part-00000.parquet.sha256"]


def test_manifest_counts_statuses_and_refuses_mismatches(tmp_path):
    df = frame(["a1", "a2", "a3"], ["train", "train", "validate"], statuses=["ok", None, "empty"])
    cfg = DatasetConfig(rows_per_shard=1)
    manifest = D.write_dataset(df, tmp_path, cfg, {"ingest": {"limit": 3}}, progress=False)
    assert manifest["rows"] == 3 and manifest["schema_version"] == D.SCHEMA_VERSION
    assert manifest["splits"] == {
        "train": {"rows": 2, "shards": 2},
        "validate": {"rows": 1, "shards": 1},
        "test": {"rows": 0, "shards": 1},
    }
    assert [f["path"] for f in manifest["files"]] == [
        "train/part-00000.parquet",
        "train/part-00001.parquet",
        "validate/part-00000.parquet",
        "test/part-00000.parquet",
    ]
    assert [f["rows"] for f in manifest["files"]] == [1, 1, 1, 0]
    assert manifest["statuses"] == {"alpha_status": {"ok": 3}, "zeta_status": {"empty": 1, "null": 1, "ok": 1}}
    assert list(manifest["statuses"]) == ["alpha_status", "zeta_status"]
    assert manifest["config"]["rows_per_shard"] == 1 and manifest["upstream_config"] == {"ingest": {"limit": 3}}
    assert manifest["columns"]["study_id"] == "String"
    other = D.build_manifest(tmp_path, json.loads((tmp_path / "plan.json").read_text()), cfg, {"ingest": {"limit": 4}})
    assert other["config_hash"] != manifest["config_hash"]
    written = (tmp_path / "manifest.json").read_text()
    assert written.endswith("}\n") and json.loads(written) == manifest
    plan = json.loads((tmp_path / "plan.json").read_text())
    plan["splits"]["train"]["rows"] = 5
    with pytest.raises(UserError, match="split train: shards hold 2 rows, the plan says 5"):
        D.build_manifest(tmp_path, plan, cfg, {})


def test_a_new_plan_removes_only_stale_shards(tmp_path):
    df = frame([f"s{i}" for i in range(4)], ["train"] * 4)
    D.write_dataset(df, tmp_path, DatasetConfig(rows_per_shard=1), {}, progress=False)
    (tmp_path / "train" / "notes.txt").write_text("kept")
    D.write_dataset(df, tmp_path, DatasetConfig(rows_per_shard=3), {}, progress=False)
    assert sorted(p.name for p in (tmp_path / "train").iterdir()) == [
        "notes.txt",
        "part-00000.parquet",
        "part-00000.parquet.sha256",
        "part-00001.parquet",
        "part-00001.parquet.sha256",
    ]
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert D.remove_stale_shards(tmp_path, plan) == []


def test_manifest_is_readable_json_naming_its_writer_and_progress_is_labelled(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        manifest = D.write_dataset(frame(["s1"], ["train"]), tmp_path, DatasetConfig(), {}, progress=True)
    assert manifest["created_by"].startswith("srrg ")
    text = (tmp_path / "manifest.json").read_text()
    assert text.startswith('{\n  "schema_version": ')  # indented, keys in writing order
    # the progress line (a plain log line without a terminal, srrg.progress) says what it counts
    assert any(r.getMessage().startswith("shards: ") for r in caplog.records)


@pytest.mark.parametrize("compression", ["zstd", "gzip"])
def test_compression_level_reaches_the_writer(tmp_path, compression):
    """The level is not stored in Parquet metadata; two levels give two different files."""
    df = D.shard_frame(D.to_dataset_frame(frame([f"s{i}" for i in range(300)], ["train"] * 300)), "train", 0, 1000)
    sizes = set()
    for level in (1, 19 if compression == "zstd" else 9):
        path = tmp_path / f"{level}.parquet"
        D.write_shard(df, path, DatasetConfig(compression=compression, compression_level=level))
        sizes.add(path.stat().st_size)
    assert len(sizes) == 2
