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
from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.settings.dataset import DatasetConfig
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


def test_folder_of_hand_written_shards_is_listed(dataset):
    """A folder with neither plan.json nor manifest.json (shards written by hand) gives its split's
    Parquet files, listed (not globbed), checksum files left out."""
    (dataset / "manifest.json").unlink()
    (dataset / "plan.json").unlink()
    assert [p.name for p in split_files(dataset, "train")] == [f"part-0000{i}.parquet" for i in range(3)]


def test_plan_without_manifest_is_an_unfinished_build_not_a_glob_read(dataset):
    """Bug (issue 39): a build killed before its manifest left plan.json and some shards, and the
    readers took whatever shards were there (40 of 211 rows, no error)."""
    (dataset / "manifest.json").unlink()
    (dataset / "train" / "part-00002.parquet").unlink()
    with pytest.raises(UserError, match=r"holds plan.json but no manifest.json, so its build did not finish"):
        read_split(dataset, "train")


def test_more_rows_than_an_old_checksumless_manifest_records_are_refused(dataset):
    """Bug (issue 38): with a manifest of an older version (no sha256 entries) only the hash check
    guarded the shards; a shard holding more rows than the manifest records must still be refused."""
    manifest = json.loads((dataset / "manifest.json").read_text())
    for entry in manifest["files"]:
        del entry["sha256"]
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    shard = dataset / "train" / "part-00000.parquet"
    grown = pl.concat([pl.read_parquet(shard), pl.read_parquet(dataset / "train" / "part-00001.parquet")])
    grown.write_parquet(shard)
    with pytest.raises(UserError, match=r"part-00000.parquet holds 4 rows, manifest.json says 2"):
        read_split(dataset, "train")


def test_shard_jobs_record_their_sha256_beside_the_shard(dataset):
    """Bug: no record of the bytes a shard job wrote, so the manifest can only hash what is on disk."""
    shard = dataset / "train" / "part-00001.parquet"
    digest = hashlib.sha256(shard.read_bytes()).hexdigest()
    assert (dataset / "train" / "part-00001.parquet.sha256").read_text() == f"{digest}  part-00001.parquet\n"


def test_manifest_refuses_a_shard_changed_after_its_job(dataset, tmp_path, capsys):
    """Bug (issue 39): the manifest job hashed the shards it found and recorded a replaced shard's
    bytes as correct (exit 0; train then had 211 rows for 171 ids). It must stop with one line
    naming the shard, and keep the old manifest."""
    normalized = tmp_path / "normalized.parquet"
    normalized_frame(11).write_parquet(normalized)
    before = (dataset / "manifest.json").read_bytes()
    shard = dataset / "train" / "part-00001.parquet"
    pl.concat([pl.read_parquet(shard)] * 2).write_parquet(shard)
    argv = ["dataset-manifest", "--in", str(normalized), "--out-dir", str(dataset)]
    assert srrg_main([*argv, "--config", json.dumps({"rows_per_shard": 2})]) == 2
    err = capsys.readouterr().err.strip()
    assert f"shard {shard} changed since its shard job wrote it" in err and "\n" not in err
    assert (dataset / "manifest.json").read_bytes() == before
    (dataset / "train" / "part-00001.parquet.sha256").unlink()
    assert srrg_main([*argv, "--config", json.dumps({"rows_per_shard": 2})]) == 2
    assert "part-00001.parquet.sha256 is missing, so shard" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"rows_per_shard": 2, "splits": {"train": {"rows"', "not a readable plan (JSONDecodeError"),
        ('{"rows_per_shard": 2}', "not a dataset plan (missing or wrong 'splits')"),
        ("", "not a readable plan"),
    ],
    ids=["truncated", "no-splits", "empty"],
)
def test_damaged_plan_is_one_line(dataset, tmp_path, capsys, text, message):
    """Bug (issue 39): a truncated plan.json gave a JSONDecodeError traceback out of dataset-manifest."""
    normalized = tmp_path / "normalized.parquet"
    normalized_frame(11).write_parquet(normalized)
    (dataset / "plan.json").write_text(text)
    assert srrg_main(["dataset-manifest", "--in", str(normalized), "--out-dir", str(dataset)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "plan.json" in err


def test_plan_whose_files_disagree_with_its_counts_is_refused(dataset):
    """Bug: a hand-edited plan naming a path outside the split folders is followed."""
    plan = json.loads((dataset / "plan.json").read_text())
    plan["files"][0] = "../elsewhere/part-00000.parquet"
    (dataset / "plan.json").write_text(json.dumps(plan))
    with pytest.raises(UserError, match="its files do not match its shard counts"):
        D.read_plan(dataset)


def test_stale_checksum_files_go_with_their_shards(dataset):
    """Bug: a smaller plan removes part-00002.parquet but leaves its .sha256 behind."""
    removed = D.remove_stale_shards(dataset, D.make_plan(normalized_frame(11), DatasetConfig(rows_per_shard=4)))
    assert sorted(p.relative_to(dataset).as_posix() for p in removed) == [
        "test/part-00001.parquet",
        "test/part-00001.parquet.sha256",
        "train/part-00002.parquet",
        "train/part-00002.parquet.sha256",
        "validate/part-00001.parquet",
        "validate/part-00001.parquet.sha256",
    ]


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


def test_a_truncated_hand_written_shard_is_one_line(dataset):
    """Bug: without a manifest the listed shards were handed to polars unchecked; a cut-off file
    raised a ComputeError traceback where the split was collected."""
    (dataset / "manifest.json").unlink()
    (dataset / "plan.json").unlink()
    shard = dataset / "train" / "part-00001.parquet"
    shard.write_bytes(shard.read_bytes()[:100])
    with pytest.raises(UserError, match=rf"^shard {shard} is not readable Parquet .*write it again"):
        read_split(dataset, "train")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda files: files.append(dict(files[0])), "shard train/part-00000.parquet is listed twice"),
        (lambda files: files[0].update(path="../elsewhere/part-00000.parquet"), "is not a shard of split train"),
        (lambda files: files[0].update(path="test/part-00000.parquet"), "is not a shard of split train"),
    ],
    ids=["listed-twice", "leaves-the-folder", "other-split"],
)
def test_repeated_or_escaping_manifest_paths_are_refused(dataset, edit, message):
    """Bug (issue 39): a path listed twice was read twice (its rows duplicated), and a path with
    `..` or of another split's folder was followed."""
    manifest = json.loads((dataset / "manifest.json").read_text())
    train = [f for f in manifest["files"] if f["split"] == "train"]
    edit(train)
    manifest["files"] = [*train, *(f for f in manifest["files"] if f["split"] != "train")]
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=message):
        read_split(dataset, "train")
