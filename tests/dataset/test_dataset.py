"""Dataset shards, manifest and the Fig. 5 statistics."""

from __future__ import annotations

import json

import polars as pl
import pytest

from srrg import dataset as D
from srrg import stats as S
from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.report import Finding, StructuredReport
from srrg.settings.dataset import DatasetConfig
from srrg.settings.stats import StatsConfig

EFFUSION = {"name": "pleural effusion", "probability": 2, "level": "small", "location": "at the right lung base"}


def _structured(i: int) -> str | None:
    if i % 5 == 4:
        return None
    pos = [EFFUSION] if i % 2 == 0 else [{"name": "cardiomegaly", "probability": 3, "level": None, "location": None}]
    return json.dumps({"positive": pos, "negative": ["pneumothorax"]})


def normalized_frame(n: int = 11) -> pl.DataFrame:
    splits = ["train", "train", "test", "validate"]
    return pl.DataFrame(
        {
            "study_id": [f"CXR{i}" for i in range(n, 0, -1)],  # reversed: the stage must order them
            "subject_id": [f"CXR{i}" for i in range(n, 0, -1)],
            "split": [splits[i % 4] for i in range(n, 0, -1)],
            "split_source": ["seeded"] * n,
            "source": ["iu_xray"] * n,
            "image_paths": [[f"CXR{i}_IM-1"] for i in range(n, 0, -1)],
            "image_views": [["PA"] for _ in range(n)],
            "view": ["PA"] * n,
            "findings": [f"text {i}" for i in range(n, 0, -1)],
            "impression": [None] * n,
            "ingest_status": ["ok"] * n,
            "structured": [_structured(i) for i in range(n, 0, -1)],
            "provenance": ["{}"] * n,
            "extract_status": ["ok"] * n,
            "structured_raw": [_structured(i) for i in range(n, 0, -1)],
            "normalize_status": ["ok"] * n,
        },
        schema_overrides={"impression": pl.Utf8},
    )


def test_plan_shards_rounds_up_and_keeps_empty_splits():
    assert D.plan_shards({"train": 5, "validate": 0, "test": 4}, 2) == {"train": 3, "validate": 1, "test": 2}
    assert D.plan_shards({"train": 4}, 4) == {"train": 1, "validate": 1, "test": 1}
    with pytest.raises(ValueError):
        D.plan_shards({}, 0)


def test_sentences_of():
    assert D.sentences_of(json.dumps({"positive": [EFFUSION], "negative": ["pneumothorax"]})) == (
        "there may be small pleural effusion at the right lung base. no evidence of pneumothorax."
    )
    assert D.sentences_of(None) == "" and D.sentences_of("") == ""


def test_write_dataset_shards_manifest(tmp_path):
    df = normalized_frame(11)  # train: 1, 4, 5, 8, 9; test: 2, 6, 10; validate: 3, 7, 11
    cfg = DatasetConfig(rows_per_shard=2, row_group_size=1)
    manifest = D.write_dataset(df, tmp_path, cfg, {"ingest": {"source": "iu_xray"}}, progress=False)
    counts = df.group_by("split").len()
    expected = dict(counts.iter_rows())
    assert {s: v["rows"] for s, v in manifest["splits"].items()} == {s: expected.get(s, 0) for s in D.SPLITS}
    assert manifest["rows"] == 11
    assert manifest["splits"]["train"]["shards"] == -(-expected["train"] // 2)
    for f in manifest["files"]:
        part = pl.read_parquet(tmp_path / f["path"])
        assert part.height == f["rows"] <= 2
        assert set(part["split"]) <= {f["split"]}
        assert list(part.columns[: len(D.COLUMNS)]) == list(D.COLUMNS)
        assert {"image_views", "structured_raw", "ingest_status", "extract_status", "normalize_status"} <= set(
            part.columns
        )
        assert "split_source" not in part.columns
    allrows = pl.concat([pl.read_parquet(tmp_path / f["path"]) for f in manifest["files"]])
    assert sorted(allrows["study_id"]) == sorted(df["study_id"])
    train = allrows.filter(pl.col("split") == "train")["study_id"].to_list()
    assert train == sorted(train, key=D.natural_key)
    row = allrows.filter(pl.col("study_id") == "CXR2").row(0, named=True)
    assert (
        row["sentences"] == "there may be small pleural effusion at the right lung base. no evidence of pneumothorax."
    )
    assert allrows.filter(pl.col("study_id") == "CXR4")["sentences"][0] == ""
    assert manifest["statuses"]["ingest_status"] == {"ok": 11}
    assert manifest["columns"]["image_paths"].startswith("List")
    assert json.loads((tmp_path / "manifest.json").read_text()) == manifest
    assert (tmp_path / "plan.json").exists()


def test_row_groups_and_compression(tmp_path):
    import pyarrow.parquet as pq

    D.write_dataset(
        normalized_frame(11), tmp_path, DatasetConfig(rows_per_shard=100, row_group_size=2), {}, progress=False
    )
    meta = pq.ParquetFile(tmp_path / "train" / "part-00000.parquet").metadata
    assert meta.num_rows == 5 and meta.num_row_groups == 3  # train = ids 1, 4, 5, 8, 9
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_single_shard_rewrite_is_byte_identical(tmp_path):
    df = normalized_frame(11)
    cfg = DatasetConfig(rows_per_shard=2)
    D.write_dataset(df, tmp_path, cfg, {}, progress=False)
    path = tmp_path / "train" / "part-00001.parquet"
    before = path.read_bytes()
    path.unlink()
    (tmp_path / "input").mkdir()  # an output folder may not hold its input (issue 25 item 7)
    assert (
        srrg_main(
            [
                "dataset-shard",
                "--in",
                str(_save(df, tmp_path / "input")),
                "--out-dir",
                str(tmp_path),
                "--config",
                '{"rows_per_shard": 2}',
                "train",
                "1",
            ]
        )
        == 0
    )
    assert path.read_bytes() == before


def _save(df: pl.DataFrame, tmp_path) -> object:
    path = tmp_path / "normalized.parquet"
    df.write_parquet(path)
    return path


def test_cli_plan_shard_manifest_equals_one_shot(tmp_path):
    df = normalized_frame(11)
    src = _save(df, tmp_path)
    one, steps = tmp_path / "one", tmp_path / "steps"
    cfg = '{"rows_per_shard": 3}'
    assert srrg_main(["dataset", "--in", str(src), "--out-dir", str(one), "--config", cfg, "--no-progress"]) == 0
    assert srrg_main(["dataset-plan", "--in", str(src), "--out-dir", str(steps), "--config", cfg]) == 0
    plan = json.loads((steps / "plan.json").read_text())
    for f in plan["files"]:
        split, name = f.split("/")
        assert (
            srrg_main(["dataset-shard", "--in", str(src), "--out-dir", str(steps), "--config", cfg, split, name[5:10]])
            == 0
        )
    assert srrg_main(["dataset-manifest", "--in", str(src), "--out-dir", str(steps), "--config", cfg]) == 0
    assert json.loads((one / "manifest.json").read_text()) == json.loads((steps / "manifest.json").read_text())
    for f in plan["files"]:
        assert (one / f).read_bytes() == (steps / f).read_bytes()


def test_manifest_refuses_missing_shard_and_plan_removes_stale(tmp_path, capsys):
    df = normalized_frame(11)
    src = _save(df, tmp_path)
    D.write_dataset(df, tmp_path / "d", DatasetConfig(rows_per_shard=1), {}, progress=False)
    (tmp_path / "d" / "train" / "part-00002.parquet").unlink()
    rc = srrg_main(
        ["dataset-manifest", "--in", str(src), "--out-dir", str(tmp_path / "d"), "--config", '{"rows_per_shard": 1}']
    )
    assert rc == 2 and "part-00002" in capsys.readouterr().err
    assert (
        srrg_main(
            ["dataset-plan", "--in", str(src), "--out-dir", str(tmp_path / "d"), "--config", '{"rows_per_shard": 100}']
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "d" / "train").glob("*.parquet")) == ["part-00000.parquet"]


def test_shard_index_out_of_range(tmp_path):
    with pytest.raises(ValueError, match="index 9 does not exist"):
        D.shard_frame(D.to_dataset_frame(normalized_frame(4)), "train", 9, 2)


def test_missing_columns_and_bad_split_are_clear_errors():
    with pytest.raises(ValueError, match="structured"):
        D.to_dataset_frame(normalized_frame(3).drop("structured"))
    with pytest.raises(ValueError, match="unknown split"):
        D.to_dataset_frame(normalized_frame(3).with_columns(pl.lit("dev").alias("split")))


def test_distributions_hand_counted():
    reports = [
        StructuredReport((Finding("effusion", 3, "small"), Finding("edema", 2, None)), ("pneumothorax",)),
        StructuredReport((Finding("effusion", 1, "large"),)),
        StructuredReport((), ("effusion",)),
        StructuredReport((Finding("atelectasis", None, "small"),)),
    ]
    t = S.distributions(reports, top_k=2)
    assert t["findings"].to_dicts() == [
        {"finding": "effusion", "count": 2, "share": 0.5},
        {"finding": "atelectasis", "count": 1, "share": 0.25},  # tie with edema: by name
    ]
    assert t["probability"].select("probability", "count").rows() == [("3", 1), ("2", 1), ("1", 1), ("None", 1)]
    assert t["probability"]["share"].to_list() == [0.25] * 4
    assert t["severity"].select("level", "count").rows() == [("small", 2), ("(none)", 1), ("large", 1)]


def test_distributions_empty():
    t = S.distributions([], top_k=5)
    assert t["findings"].height == 0
    assert t["probability"]["count"].to_list() == [0, 0, 0]


def test_stats_cli_writes_csv_and_png(tmp_path, capsys):
    D.write_dataset(normalized_frame(11), tmp_path / "d", DatasetConfig(rows_per_shard=4), {}, progress=False)
    assert (
        srrg_main(
            [
                "stats",
                "--dataset",
                str(tmp_path / "d"),
                "--out-dir",
                str(tmp_path / "s"),
                "--config",
                '{"top_k": 5, "dpi": 60}',
            ]
        )
        == 0
    )
    for name in S.TABLES:
        assert (tmp_path / "s" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    findings = pl.read_csv(tmp_path / "s" / "findings.csv")
    # ids 1..11; None for i % 5 == 4 (4, 9); even -> effusion (2, 6, 8, 10), odd -> cardiomegaly (1, 3, 5, 7, 11)
    assert findings.rows() == [("cardiomegaly", 5, 5 / 11), ("pleural effusion", 4, 4 / 11)]
    assert "stats: studies=11 positive findings=9" in capsys.readouterr().err
    assert stage_config(None, StatsConfig, "stats") == StatsConfig()


def test_each_chart_names_what_its_counts_count(tmp_path, monkeypatch):
    """findings count studies (one entry per name per study); probability and severity count positive findings."""
    import matplotlib.pyplot as plt

    axes: dict[str, str] = {}
    close = plt.close

    def record(fig):
        ax = fig.axes[0]
        axes[ax.get_title().split()[0]] = ax.get_xlabel() or ax.get_ylabel()
        close(fig)

    monkeypatch.setattr(plt, "close", record)
    D.write_dataset(normalized_frame(11), tmp_path / "d", DatasetConfig(rows_per_shard=4), {}, progress=False)
    S.write_stats(S.read_dataset(tmp_path / "d"), tmp_path / "s", StatsConfig(top_k=5, dpi=50))
    assert axes == {"Most": "studies", "Probability": "positive findings", "Severity": "positive findings"}


def test_natural_order_is_a_stable_natural_key_sort():
    # digit ids (the polars path): by number, the repeated "9" keeps its order
    assert D.natural_order(pl.Series(["10", "9", "100", "9", "11"])) == [1, 3, 0, 4, 2]
    # any other id set (the Python path): "007" and "7" tie on natural_key and keep their order
    assert D.natural_order(pl.Series(["CXR10", "7", "CXR2", "007"])) == [1, 3, 2, 0]
    assert D.natural_order(pl.Series([], dtype=pl.String)) == []


@pytest.mark.parametrize("row_group_size", [1, 3, 100])
def test_read_shard_equals_shard_frame_whatever_the_row_groups(tmp_path, row_group_size):
    """read_shard decodes only the stretch of the file between a shard's first and last row; with
    rows stored against id order (normalized_frame is reversed) that stretch spans row groups."""
    df = normalized_frame(11)
    path = tmp_path / "normalized.parquet"
    df.write_parquet(path, row_group_size=row_group_size)
    ordered = D.to_dataset_frame(df)
    for split, shards in D.make_plan(df, DatasetConfig(rows_per_shard=2))["splits"].items():
        got = [D.read_shard(path, split, index, 2) for index in range(shards["shards"])]
        assert all(g.equals(D.shard_frame(ordered, split, i, 2)) for i, g in enumerate(got))
        assert sum(g.height for g in got) == df.filter(pl.col("split") == split).height > 1
