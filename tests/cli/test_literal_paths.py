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


def _dataset(root: Path, value: str) -> None:
    from srrg.dataset import write_dataset
    from srrg.settings.dataset import DatasetConfig

    frame = pl.DataFrame(
        {
            "study_id": [value],
            "subject_id": ["p"],
            "split": ["train"],
            "image_paths": [["x.png"]],
            "view": ["PA"],
            "findings": ["f"],
            "impression": ["i"],
            "structured": [None],
            "provenance": ["rules"],
        },
        schema_overrides={"structured": pl.String},
    )
    write_dataset(frame, root, DatasetConfig(), {}, progress=False)


def _hand_shards(root: Path, value: str) -> None:
    _write(root / "train" / "part-00000.parquet", value)


def _csv(path: Path, value: str, header: str = "study_id,report") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{header}\n{value},x\n")


def _read_cases(path: Path) -> list[str]:
    from srrg.cases.build import read_parquet

    return read_parquet(path, "--scores", ["study_id"])["study_id"].to_list()


def _read_mimic_ids(path: Path) -> list[str]:
    from srrg.sources.mimic_cxr import _read_ids_csv

    return _read_ids_csv(path, {"study_id": "study_id"})["study_id"].to_list()


def _read_views(path: Path) -> list[str]:
    from srrg.sources.iu_xray import read_views

    return sorted(read_views(path))


def _read_rating_csv(path: Path) -> list[str]:
    from srrg.metaeval.readers.common import read_rating_csv

    return [str(v) for v in read_rating_csv(path)["study_id"]]


def _read_signatures(path: Path) -> list[str]:
    from srrg.metrics.signature_files import read_signatures

    return sorted(read_signatures(path))


def _read_split(root: Path) -> list[str]:
    from srrg.dataset import read_split

    return read_split(root, "train")["study_id"].to_list()


def _read_hand_shards(root: Path) -> list[str]:
    from srrg.shards import split_files

    return [v for p in split_files(root, "train") for v in io.read_parquet(p)["study_id"]]


def _mimic_folder(root: Path, value: str) -> None:
    folder = root / "files" / "p10" / "p10000001"
    folder.mkdir(parents=True)
    (folder / f"s{value}.txt").write_text("FINDINGS: clear.")


def _read_mimic_folder(root: Path) -> list[str]:
    from srrg.sources.mimic_cxr import iter_report_files

    return [study for _, study, _ in iter_report_files(root)]


def _models(root: Path, value: str) -> None:
    (root / "snap").mkdir(parents=True)
    (root / "snap" / f"{value}.bin").write_bytes(b"w")


def _list_models(root: Path) -> list[str]:
    return [p.stem for p in io.list_files(root / "snap", recursive=True)]


# reader -> (what the named path is, writer of a path holding `value`, the reader giving the values back)
READERS = {
    "read_split": ("folder", _dataset, _read_split),
    "split_files (hand-written shards)": ("folder", _hand_shards, _read_hand_shards),
    "mimic reports folder": ("folder", _mimic_folder, _read_mimic_folder),
    "models folder listing": ("folder", _models, _list_models),
    "cases --scores": ("parquet", lambda p, v: _write(p, v), _read_cases),
    "mimic split/metadata CSV": ("csv", _csv, _read_mimic_ids),
    "iu_xray metadata CSV": ("csv", lambda p, v: _csv(p, v, "imageid,View Position"), _read_views),
    "metaeval rating CSV": ("csv", _csv, _read_rating_csv),
    "signatures.csv": ("signatures", lambda p, v: _csv(p, v, "key,signature"), _read_signatures),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize(("name", "decoy"), NAMES, ids=[n for n, _ in NAMES])
def test_every_reader_reads_the_named_path_not_a_pattern_match(tmp_path, reader, name, decoy):
    """Bug (issue 39): `read_split('ds[1]')` read ds1's shards; each reader of a user path (dataset
    folders, the case page's tables, the sources' CSVs and report folders, rating files, signatures,
    the models folder) must read exactly the path given, with the decoy a pattern would pick beside it."""
    kind, write, read = READERS[reader]
    values = {"named": "50000001", "decoy": "50000002"}
    paths = {}
    for label, stem in (("named", name), ("decoy", decoy)):
        if kind == "folder":
            paths[label] = tmp_path / stem
        elif kind == "signatures":
            paths[label] = tmp_path / stem / "signatures.csv"
        else:
            paths[label] = tmp_path / f"{stem}.{kind}"
        write(paths[label], values[label])
    assert read(paths["named"]) == [values["named"]]


def test_score_reads_the_named_predictions_of_a_sweep(tmp_path, capsys):
    """Bug (issue 39): `srrg score --hyps 'sweep/lr[1]/preds.parquet'` scored sweep/lr1's file
    (BLEU-4 1.0 where the named file scores 0)."""
    from srrg.cli import main

    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"study_id": "1", "report": "small left pleural effusion with basal atelectasis"}\n')
    for folder, text in (("lr[1]", "no acute cardiopulmonary process seen today"), ("lr1", None)):
        hyps = pl.DataFrame({"study_id": ["1"], "report": [text or pl.read_ndjson(refs)["report"][0]]})
        (tmp_path / "sweep" / folder).mkdir(parents=True)
        hyps.write_parquet(tmp_path / "sweep" / folder / "preds.parquet")
    out = tmp_path / "out"
    argv = ["score", "--refs", str(refs), "--hyps", str(tmp_path / "sweep" / "lr[1]" / "preds.parquet")]
    assert main([*argv, "--metrics", "bleu", "--out", str(out)]) == 0, capsys.readouterr().err
    assert pl.read_parquet(out / "per_report.parquet")["hypothesis"].to_list() == [
        "no acute cardiopulmonary process seen today"
    ]


# polars readers that expand patterns in a path, and pathlib's pattern listings
_PATTERN_READERS = {"read_parquet", "scan_parquet", "read_csv", "scan_csv", "read_ndjson", "scan_ndjson"}
_PATTERN_READERS |= {"read_parquet_schema", "read_ipc", "scan_ipc"}
_OWN_SOURCE = {"srrg/codedeps.py"}  # lists the package's own modules and data, never a user path


def test_no_module_opens_a_path_around_the_literal_helpers():
    """Bug: a new call site (`pl.read_parquet(path)`, `folder.glob("*.csv")`) brings pattern expansion
    back for its path; every module opens paths through srrg.io (docs/inputs.md, "Paths are literal")."""
    import ast

    from paths import REPO

    src = REPO / "src"
    found = []
    for path in sorted((src / "srrg").rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel in {"srrg/io.py", *_OWN_SOURCE}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            owner = node.func.value
            is_polars = isinstance(owner, ast.Name) and owner.id == "pl" and node.func.attr in _PATTERN_READERS
            if is_polars or node.func.attr in {"glob", "rglob", "iglob"}:
                found.append(f"{rel}:{node.lineno} {node.func.attr}")
    assert found == []
