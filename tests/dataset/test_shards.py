"""Shards are checked against manifest.json (rows, SHA-256) by the readers train and infer use, and a
shard job reads only its split's rows yet writes the same bytes as the whole-table path."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest
from model_fixtures import tiny_train_config
from test_dataset import normalized_frame

from srrg import dataset as D
from srrg.cli import main as srrg_main
from srrg.dataset import DatasetConfig, read_split
from srrg.errors import UserError
from srrg.shards import split_files


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "ds"
    D.write_dataset(normalized_frame(11), root, DatasetConfig(rows_per_shard=2), {}, progress=False)
    return root


def flip_byte(path, at: int = 200) -> None:
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0x01
    path.write_bytes(bytes(raw))


def test_manifest_records_rows_and_sha256_per_shard(dataset):
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert len(manifest["files"]) == 7  # train 5 rows -> 3 shards, test 3 -> 2, validate 3 -> 2
    for entry in manifest["files"]:
        path = dataset / entry["path"]
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert entry["rows"] == pl.read_parquet(path).height


def test_intact_dataset_reads_every_row(dataset):
    assert [p.name for p in split_files(dataset, "train")] == [
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
    ]
    assert read_split(dataset, "train")["study_id"].to_list() == ["CXR1", "CXR4", "CXR5", "CXR8", "CXR9"]


def test_flipped_byte_names_the_shard_and_how_to_rebuild_it(dataset):
    flip_byte(dataset / "train" / "part-00001.parquet")
    with pytest.raises(UserError) as err:
        read_split(dataset, "train")  # what train and infer read
    message = str(err.value)
    assert f"shard {dataset / 'train' / 'part-00001.parquet'} does not match manifest.json" in message
    assert (
        "snakemake data" in message
        and f"dataset-shard --in <normalized.parquet> --out-dir {dataset} train 1" in message
    )
    assert "\n" not in message
    assert read_split(dataset, "test").height == 3  # the other splits stay readable


def test_train_job_stops_on_a_flipped_shard_with_one_line(dataset, tmp_path, capsys):
    flip_byte(dataset / "train" / "part-00000.parquet")
    rc = srrg_main(
        [
            "train",
            "--dataset",
            str(dataset),
            "--out",
            str(tmp_path / "m.pt"),
            "--config",
            json.dumps(tiny_train_config()),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert any(f"shard {dataset / 'train' / 'part-00000.parquet'} does not match manifest.json" in line for line in err)


def test_truncated_missing_stray_and_miscounted_shards(dataset):
    shard = dataset / "test" / "part-00000.parquet"
    shard.write_bytes(shard.read_bytes()[:50])
    with pytest.raises(UserError, match="test/part-00000.parquet does not match manifest.json"):
        split_files(dataset, "test")
    shard.unlink()
    with pytest.raises(UserError, match=r"shard .*test/part-00000.parquet is missing; rerun `snakemake data`"):
        split_files(dataset, "test")
    (dataset / "validate" / "part-00000 copy.parquet").write_bytes(
        (dataset / "validate" / "part-00000.parquet").read_bytes()
    )
    with pytest.raises(UserError, match="part-00000 copy.parquet is not listed in .*manifest.json .*duplicate rows"):
        split_files(dataset, "validate")
    manifest = json.loads((dataset / "manifest.json").read_text())
    for entry in manifest["files"]:
        entry.pop("sha256")  # a manifest from before checksums: rows are still checked
        if entry["path"] == "train/part-00002.parquet":
            entry["rows"] = 5
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="train/part-00002.parquet holds 1 rows, manifest.json says 5"):
        split_files(dataset, "train")


def test_unreadable_manifest_is_named(dataset):
    (dataset / "manifest.json").write_text("{")
    with pytest.raises(UserError, match=r"manifest.json: not a dataset manifest .*rerun `snakemake data`"):
        split_files(dataset, "train")


def test_folder_without_manifest_is_read_by_glob(dataset):
    (dataset / "manifest.json").unlink()
    assert len(split_files(dataset, "train")) == 3


def test_shard_job_reads_its_split_and_writes_the_whole_table_bytes(dataset, tmp_path):
    normalized = tmp_path / "normalized.parquet"
    normalized_frame(11).write_parquet(normalized)
    whole = D.to_dataset_frame(normalized_frame(11))
    for split, index in (("test", 0), ("test", 1), ("train", 0), ("validate", 0)):
        assert D.read_shard(normalized, split, index, 2).equals(D.shard_frame(whole, split, index, 2))
    with pytest.raises(UserError, match="has 2 shard"):
        D.read_shard(normalized, "test", 2, 2)
    assert D.plan_input(normalized, DatasetConfig(rows_per_shard=2))[0] == 11
    assert D.count_rows(normalized) == 11
    jobs = tmp_path / "jobs"
    cfg = json.dumps({"rows_per_shard": 2})
    assert srrg_main(["dataset-plan", "--in", str(normalized), "--out-dir", str(jobs), "--config", cfg]) == 0
    plan = json.loads((jobs / "plan.json").read_text())
    for rel in plan["files"]:
        split, name = rel.split("/")
        assert (
            srrg_main(
                [
                    "dataset-shard",
                    "--in",
                    str(normalized),
                    "--out-dir",
                    str(jobs),
                    "--config",
                    cfg,
                    split,
                    str(int(name[5:10])),
                ]
            )
            == 0
        )
        assert (jobs / rel).read_bytes() == (dataset / rel).read_bytes()
    assert (
        srrg_main(
            [
                "dataset-manifest",
                "--in",
                str(normalized),
                "--out-dir",
                str(jobs),
                "--config",
                cfg,
                "--upstream-config",
                "{}",
            ]
        )
        == 0
    )
    assert (
        json.loads((jobs / "manifest.json").read_text())["files"]
        == json.loads((dataset / "manifest.json").read_text())["files"]
    )


def test_empty_split_shard_holds_the_schema(tmp_path):
    normalized = tmp_path / "normalized.parquet"
    normalized_frame(11).filter(pl.col("split") != "validate").write_parquet(normalized)
    out = tmp_path / "ds"
    assert srrg_main(["dataset-plan", "--in", str(normalized), "--out-dir", str(out)]) == 0
    assert srrg_main(["dataset-shard", "--in", str(normalized), "--out-dir", str(out), "validate", "0"]) == 0
    part = pl.read_parquet(out / "validate" / "part-00000.parquet")
    assert part.height == 0 and list(part.columns[: len(D.COLUMNS)]) == list(D.COLUMNS)


def test_read_split_columns_and_lazy(dataset):
    part = read_split(dataset, "test", ["structured"])
    assert part.columns == ["study_id", "structured"] and part["study_id"].to_list() == ["CXR10", "CXR2", "CXR6"]
    lazy = read_split(dataset, "train", ["split"], lazy=True)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.filter(pl.col("study_id") == "CXR4").collect()["split"].to_list() == ["train"]


@pytest.mark.parametrize("command", ["stats", "phantoms"])
def test_stats_and_phantoms_stop_on_a_flipped_shard_with_one_line(dataset, tmp_path, capsys, command):
    flip_byte(dataset / "train" / "part-00002.parquet")
    out = ["--out-dir", str(tmp_path / "stats")] if command == "stats" else ["--out", str(tmp_path / "p.png")]
    assert srrg_main([command, "--dataset", str(dataset), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"shard {dataset / 'train' / 'part-00002.parquet'} does not match manifest.json" in err
