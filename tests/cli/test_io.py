"""srrg.io: reading input tables (docs/inputs.md) and atomic writes."""

from __future__ import annotations

import json
import os

import polars as pl
import pytest

from srrg.errors import UserError
from srrg.io import atomic_path, current_umask, id_text, read_reports, read_table, report_text


def test_id_columns_are_text_in_every_format(tmp_path):
    (tmp_path / "t.csv").write_text("study_id,subject_id,score\n007,0012,1.5\n", encoding="utf-8")
    df = read_table(tmp_path / "t.csv")
    assert df.row(0) == ("007", "0012", 1.5)  # other columns keep their inferred types
    (tmp_path / "t.jsonl").write_text(
        '{"study_id": 7.0, "pair_id": 12}\n{"study_id": 1e3, "pair_id": 3}\n', encoding="utf-8"
    )
    assert read_table(tmp_path / "t.jsonl").rows() == [("7", "12"), ("1000", "3")]
    pl.DataFrame({"study_id": [7.0, None]}).write_parquet(tmp_path / "t.parquet")
    assert read_table(tmp_path / "t.parquet")["study_id"].to_list() == ["7", None]


def test_id_text_refuses_values_that_are_no_id():
    assert [id_text(v, "x") for v in ("007", 7, 7.0, 2**70)] == ["007", "7", "7", str(2**70)]
    for value in (7.5, float("nan"), True, None, "", "  ", [1], {"a": 1}):
        with pytest.raises(UserError, match=r"^here: id .* is not usable"):
            id_text(value, "here")


def test_report_text_keeps_every_key_of_an_object():
    obj = {"negative": ["pneumothorax"], "positive": [], "size": "3 cm"}
    assert json.loads(report_text(obj, "x")) == obj
    assert report_text(None, "x") == "" and report_text("free text", "x") == "free text"
    with pytest.raises(UserError, match="report is a number"):
        report_text(3.5, "x")


def test_json_array_and_column_object(tmp_path):
    (tmp_path / "rows.json").write_text(
        '[{"study_id": 1, "report": "a"}, {"study_id": "2", "report": {"positive": [], "negative": []}}]'
    )
    (tmp_path / "cols.json").write_text('{"study_id": [1, 2], "report": ["a", "b"]}')
    assert read_reports(tmp_path / "rows.json").to_dicts() == [
        {"study_id": "1", "report": "a"},
        {"study_id": "2", "report": '{"positive": [], "negative": []}'},
    ]
    assert read_reports(tmp_path / "cols.json")["study_id"].to_list() == ["1", "2"]


def test_txt_blank_lines_are_empty_reports(tmp_path):
    (tmp_path / "h.txt").write_text("\ufefffirst\n\nthird", encoding="utf-8")  # BOM, no final newline
    assert read_reports(tmp_path / "h.txt").rows() == [("1", "first"), ("2", ""), ("3", "third")]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.csv", None, "no such file"),
        ("folder.csv", "DIR", "is a folder"),
        ("t.xlsx", "x", "unknown table format '.xlsx'"),
        ("t.csv", "", "no reports|not a readable csv"),
        ("t.csv", "study_id,report\n", "no reports"),
        ("t.csv", "id,text\n1,a\n", r"missing column\(s\) \['study_id', 'report'\]; found \['id', 'text'\]"),
        ("t.csv", "study_id,report\n,a\n", "row 1: empty study_id"),
        ("t.csv", "study_id,report\ns1,a\ns1,b\n", r"duplicate study ids \['s1'\]"),
        ("t.parquet", "not parquet at all", "not a readable parquet table"),
        ("t.jsonl", '{"study_id": "a", "report": "x"}\n\n{"study_id": "b", "report": \n', "line 3 is not valid JSON"),
        ("t.jsonl", "[1, 2]\n", "line 1 is not a JSON object"),
        ("t.json", '{"study_id": "a"}', "expected a JSON array"),
        ("t.json", '{"study_id": [1, 2], "report": ["a"]}', "columns of different lengths"),
        ("t.csv", b"study_id,report\ns1,ok\ns2,caf\xe9\n", r"line 3 is not UTF-8"),
        ("t.txt", b"ok\n\xff\n", r"line 2 is not UTF-8"),
    ],
)
def test_unusable_report_files_are_user_errors_naming_the_file(tmp_path, name, content, message):
    path = tmp_path / name
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=message) as err:
        read_reports(path)
    assert str(err.value).startswith(str(path))


def test_read_table_errors_are_user_errors(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(os.urandom(64))
    (tmp_path / "empty.csv").write_text("")
    for path in (tmp_path / "bad.parquet", tmp_path / "empty.csv", tmp_path / "none.jsonl", tmp_path):
        with pytest.raises(UserError, match=str(path)):
            read_table(path)


def test_atomic_path_leaves_nothing_behind_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_current_umask_reads_without_changing_it():
    previous = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        assert current_umask() == 0o027  # unchanged by reading it
    finally:
        os.umask(previous)


def test_parquet_report_columns_of_other_text_types(tmp_path):
    df = pl.DataFrame(
        {"study_id": ["a", "b"], "cat": ["x", None], "raw": [b"caf\xc3\xa9", b"ok"], "bad": [b"\xff", b"ok"]}
    )
    df.with_columns(pl.col("cat").cast(pl.Categorical)).write_parquet(tmp_path / "t.parquet")
    assert read_reports(tmp_path / "t.parquet", text_col="cat")["report"].to_list() == ["x", ""]
    assert read_reports(tmp_path / "t.parquet", text_col="raw")["report"].to_list() == ["café", "ok"]
    with pytest.raises(UserError, match=r"row 1 \(study_id 'a'\): report bytes are not UTF-8"):
        read_reports(tmp_path / "t.parquet", text_col="bad")
