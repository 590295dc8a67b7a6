"""User paths are literal: `[1]`, `?` and `*` in a file or folder name are plain characters
(docs/inputs.md, "Paths are literal"). Each test sets a decoy beside the named file, the file a
pattern reading of the name would pick, holding different values."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from srrg import io

# (the name given, a decoy the name matches as a glob pattern)
NAMES = [("lr[1]", "lr1"), ("lr?", "lrx"), ("lr*", "lr_all")]


def _write(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df = pl.DataFrame({"study_id": [value], "report": [f"report {value}"]})
    fmt = path.suffix
    if fmt == ".parquet":
        df.write_parquet(path)
    elif fmt == ".csv":
        df.write_csv(path)
    else:
        df.write_ndjson(path)


@pytest.mark.parametrize("reader", [io.read_table, io.read_reports], ids=["read_table", "read_reports"])
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
@pytest.mark.parametrize(("name", "decoy"), NAMES, ids=[n for n, _ in NAMES])
@pytest.mark.parametrize("where", ["file", "folder"])
def test_table_readers_read_the_named_file_not_a_pattern_match(tmp_path, reader, suffix, name, decoy, where):
    """Bug: the path goes to polars with its glob expansion on, so `lr[1].parquet` reads `lr1.parquet`
    (the scored run is another run) or `lr*` reads several files at once."""
    if where == "file":
        named, other = tmp_path / f"{name}{suffix}", tmp_path / f"{decoy}{suffix}"
    else:
        named, other = tmp_path / name / f"preds{suffix}", tmp_path / decoy / f"preds{suffix}"
    _write(named, "named")
    _write(other, "decoy")
    assert reader(named)["study_id"].to_list() == ["named"]


@pytest.mark.parametrize(("name", "decoy"), NAMES, ids=[n for n, _ in NAMES])
def test_each_polars_door_is_literal(tmp_path, name, decoy):
    """Bug: one of the helpers forgets glob=False (or the open file) and reads the decoy."""
    for suffix in (".parquet", ".csv", ".jsonl"):
        _write(tmp_path / f"{name}{suffix}", "named")
        _write(tmp_path / f"{decoy}{suffix}", "decoy")
    (tmp_path / f"{decoy}.parquet").unlink()
    pl.DataFrame({"other": [1]}).write_parquet(tmp_path / f"{decoy}.parquet")
    named = tmp_path / name
    assert io.read_parquet(f"{named}.parquet")["study_id"].to_list() == ["named"]
    assert io.scan_parquet(f"{named}.parquet").collect()["study_id"].to_list() == ["named"]
    assert list(io.parquet_schema(f"{named}.parquet")) == ["study_id", "report"]
    assert io.read_csv(f"{named}.csv")["study_id"].to_list() == ["named"]
    assert io.read_ndjson(f"{named}.jsonl")["study_id"].to_list() == ["named"]


def test_list_files_lists_the_named_folder_by_prefix_and_suffix(tmp_path):
    """Bug: the folder is globbed (`ds[1]` lists `ds1`), a name filter is a pattern (`a?.csv`
    matching `ab.csv`), or subfolders and non-files are returned."""
    named, decoy = tmp_path / "ds[1]", tmp_path / "ds1"
    for folder in (named, decoy):
        (folder / "sub").mkdir(parents=True)
    for rel in ("rate_[x].csv", "rate_a.csv", "other.csv", "rate_b.txt", "sub/rate_c.csv"):
        (named / rel).write_text("x\n")
    (named / "rate_dir.csv").mkdir()
    (decoy / "rate_decoy.csv").write_text("x\n")
    assert [p.name for p in io.list_files(named, suffix=".csv", prefix="rate_")] == ["rate_[x].csv", "rate_a.csv"]
    assert [p.relative_to(named).as_posix() for p in io.list_files(named, suffix=".csv", recursive=True)] == [
        "other.csv",
        "rate_[x].csv",
        "rate_a.csv",
        "sub/rate_c.csv",
    ]
    assert io.list_files(tmp_path / "missing", suffix=".csv") == []
