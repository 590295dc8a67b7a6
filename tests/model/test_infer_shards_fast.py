"""Sharded inference and its merge with a pairs file, fast (issue 53): the merge of hand-written parts
(pairs written exactly when a path is given, rows in position order, refusals), and one real shard
run of a one-step tiny model merged into the one-worker bytes, beside the slow byte-for-byte test of
test_infer_shards.py. Each test's docstring names the bug it catches."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.config import stage_config
from srrg.errors import UserError
from srrg.io import write_parquet
from srrg.model.infer import run_infer, shard_span
from srrg.model.infer_parts import PART_KEY, POSITION, run_infer_merge, scoring_pairs
from srrg.model.train import run_train
from srrg.settings.model import InferConfig, TrainConfig

torch.set_num_threads(1)


def rows(positions: list[int], filtered: tuple[int, ...] = ()) -> pl.DataFrame:
    """Prediction rows at the given one-worker positions (view-filtered ones have no prediction)."""
    return pl.DataFrame(
        {
            "study_id": [f"s{p}" for p in positions],
            "infer_status": ["view_filtered" if p in filtered else "ok" for p in positions],
            "reference": [f"ref {p}" for p in positions],
            "report": [None if p in filtered else f"rep {p}" for p in positions],
            "raw": [None if p in filtered else f"raw {p}" for p in positions],
            POSITION: positions,
        },
        schema_overrides={"report": pl.String, "raw": pl.String},
    )


def part(path: Path, frame: pl.DataFrame, shard: int, shards: int = 2, total: int = 5, run: str = "r1") -> str:
    meta = {"run": run, "rows": total, "shard": shard, "shards": shards}
    write_parquet(frame, path, metadata={PART_KEY: json.dumps(meta)})
    return str(path)


def test_merge_writes_predictions_in_position_order_and_the_pairs_when_asked(tmp_path):
    """Bugs: the pairs file written only when no path is given (or never), rows in part order, the
    position column left in, a view-filtered row scored."""
    a = part(tmp_path / "a.parquet", rows([0, 1, 2], filtered=(1,)), 0)
    b = part(tmp_path / "b.parquet", rows([3, 4]), 1)
    summary = run_infer_merge([b, a], tmp_path / "m.parquet", tmp_path / "pairs.parquet")
    assert summary == {"studies": 5, "parts": 2}
    merged = pl.read_parquet(tmp_path / "m.parquet")
    assert merged["study_id"].to_list() == ["s0", "s1", "s2", "s3", "s4"] and POSITION not in merged.columns
    pairs = pl.read_parquet(tmp_path / "pairs.parquet")
    assert pairs.equals(scoring_pairs(merged))
    assert pairs["study_id"].to_list() == ["s0", "s2", "s3", "s4"] and pairs.columns == ["study_id", "reference",
                                                                                         "report", "raw"]  # fmt: skip
    run_infer_merge([a, b], tmp_path / "m2.parquet", None)
    assert (tmp_path / "m2.parquet").read_bytes() == (tmp_path / "m.parquet").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "b.parquet", "m.parquet", "m2.parquet",
                                                          "pairs.parquet"]  # fmt: skip


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([("a", [0, 1, 2], 0, 2, "r1"), ("b", [3, 4], 1, 2, "r2")], "another infer run"),
        ([("a", [0, 1, 2], 0, 2, "r1"), ("b", [3, 4], 0, 2, "r1")], "both shard 0"),
        ([("a", [0, 1, 2], 0, 2, "r1")], r"shard\(s\) 1 of 2 missing"),
        ([("a", [0, 1, 2], 0, 2, "r1"), ("b", [3], 1, 2, "r1")], "do not hold each of the run's 5 rows once"),
        ([("a", [0, 1, 2], 0, 2, "r1"), ("b", [2, 3, 4], 1, 2, "r1")], "do not hold each"),
        ([("a", [0, 1, 2], 0, 2, "r1"), ("b", [3, 4], 2, 2, "r1")], "shard 2 is not one of the run's 2 shards"),
    ],
)
def test_merge_refuses_parts_that_do_not_make_one_run(tmp_path, parts, message):
    """Bugs: parts of two runs mixed, a shard given twice or missing, a part short of its rows (the
    rest of a shard dropped) merged into a silently smaller test set."""
    paths = [part(tmp_path / f"{n}.parquet", rows(pos), k, shards, run=run) for n, pos, k, shards, run in parts]
    with pytest.raises(UserError, match=message):
        run_infer_merge(paths, tmp_path / "m.parquet", tmp_path / "p.parquet")
    assert not (tmp_path / "m.parquet").exists() and not (tmp_path / "p.parquet").exists()


def test_a_file_without_part_metadata_is_refused(tmp_path):
    """Bug: a one-worker predictions file (no identity, no position) taken as a part."""
    plain = tmp_path / "plain.parquet"
    rows([0, 1]).drop(POSITION).write_parquet(plain)
    with pytest.raises(UserError, match="not a part written by `srrg infer --shard`"):
        run_infer_merge([str(plain)], tmp_path / "m.parquet", None)
    no_position = part(tmp_path / "np.parquet", rows([0, 1]).drop(POSITION), 0, shards=1, total=2)
    with pytest.raises(UserError, match=f"no integer {POSITION} column"):
        run_infer_merge([no_position], tmp_path / "m.parquet", None)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A one-step tiny model and a 9-study test split, every third study outside the view filter."""
    root = tmp_path_factory.mktemp("shards_fast")
    ds = write_toy_dataset(root / "ds", n_train=2, n_val=1, n_test=9)
    raw = tiny_train_config(max_steps=1)
    raw["checkpoint_dir"] = str(root / "ckpt")
    raw["data"]["views"] = ["PA"]
    raw["model"]["max_target_tokens"] = 12  # a short budget: infer decodes 12 tokens, quickly
    run_train(ds, root / "model.pt", stage_config(raw, TrainConfig, "train"), "json")
    return ds, root / "model.pt"


def test_three_shards_merged_with_pairs_equal_one_worker(tiny, tmp_path):
    """Bugs: a shard that drops the rest of its rows after its first batch, a batch cut in two,
    a view-filtered row lost or repeated, the pairs file not written beside a merge: the parts of
    3 workers merged (in reverse order) are the one-worker predictions and pairs, byte for byte."""
    ds, model = tiny
    cfg = {"num_beams": 1, "max_new_tokens": 12, "batch_size": 2}
    one, one_pairs = tmp_path / "one.parquet", tmp_path / "one_pairs.parquet"
    run_infer(model, ds, one, one_pairs, InferConfig(**cfg))
    parts = [tmp_path / f"part-{k}.parquet" for k in range(3)]
    sizes = []
    for k, path in enumerate(parts):
        summary = run_infer(model, ds, path, None, InferConfig(**cfg, shards=3), shard=k)
        sizes.append(summary["predicted"])
    kept = pl.read_parquet(one).filter(pl.col("infer_status") == "ok").height
    assert sizes == [len(shard_span(kept, 2, 3, k)) for k in range(3)] and sum(sizes) == kept
    merged, pairs = tmp_path / "merged.parquet", tmp_path / "merged_pairs.parquet"
    run_infer_merge([str(p) for p in parts[::-1]], merged, pairs)
    assert merged.read_bytes() == one.read_bytes()
    assert pairs.read_bytes() == one_pairs.read_bytes()
    # 4 shards of 3 batches: shard 0 holds no batch, only the view-filtered rows (no prediction at
    # all), so its generated columns keep their types only by PREDICTION_TYPES (bug: a Null column
    # whose part no longer merges with the others)
    four = [tmp_path / f"four-{k}.parquet" for k in range(4)]
    for k, path in enumerate(four):
        run_infer(model, ds, path, None, InferConfig(**cfg, shards=4), shard=k)
    assert pl.read_parquet(four[0])["raw"].null_count() == pl.read_parquet(four[0]).height > 0
    run_infer_merge([str(p) for p in four], tmp_path / "m5.parquet", None)
    assert (tmp_path / "m5.parquet").read_bytes() == one.read_bytes()


def test_more_shards_than_batches_merge_to_one_worker(tiny, tmp_path):
    """Bug: a shard other than 0 that gets no batch wrote a frame without columns, and the part
    ended in a ColumnNotFoundError traceback ('parse_status'); 5 shards of 3 batches leave two
    shards empty, and every part still has the whole schema and the merge is the one-worker file."""
    ds, model = tiny
    cfg = {"num_beams": 1, "max_new_tokens": 12, "batch_size": 2}
    one = tmp_path / "one.parquet"
    run_infer(model, ds, one, None, InferConfig(**cfg))
    parts = [tmp_path / f"five-{k}.parquet" for k in range(5)]
    for k, path in enumerate(parts):
        run_infer(model, ds, path, None, InferConfig(**cfg, shards=5), shard=k)
    empty = [p for p in parts if pl.read_parquet(p).height == 0]
    assert len(empty) >= 1 and all(pl.read_parquet(p).columns == pl.read_parquet(parts[0]).columns for p in empty)
    run_infer_merge([str(p) for p in parts], tmp_path / "m.parquet", None)
    assert (tmp_path / "m.parquet").read_bytes() == one.read_bytes()
