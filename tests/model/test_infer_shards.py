"""Sharded inference (docs/model.md, "Sharded inference"): N parts merged == one worker, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.errors import UserError
from srrg.model.infer import shard_span
from srrg.model.train import run_train
from srrg.settings.model import TrainConfig

torch.set_num_threads(1)


@pytest.mark.parametrize(
    "n, batch, shards, spans",
    [
        (10, 3, 2, [(0, 6), (6, 10)]),  # 4 batches: 2 + 2, the last one short
        (10, 3, 3, [(0, 3), (3, 6), (6, 10)]),  # 4 batches: 1 + 1 + 2
        (2, 4, 3, [(0, 0), (0, 0), (0, 2)]),  # fewer batches than shards: empty shards
        (7, 1, 2, [(0, 3), (3, 7)]),
    ],
)
def test_shards_are_runs_of_whole_batches(n: int, batch: int, shards: int, spans: list[tuple[int, int]]) -> None:
    """Cut at batch boundaries and covering 0..n once (a cut inside a batch would change that
    batch, and so its beam search; a gap or overlap loses or repeats studies)."""
    got = [shard_span(n, batch, shards, k) for k in range(shards)]
    assert [(r.start, r.stop) for r in got] == spans


def test_a_shard_outside_the_count_is_refused() -> None:
    with pytest.raises(UserError, match=r"--shard 2 is not one of the 2 shards"):
        shard_span(10, 3, 2, 2)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shards")
    ds = write_toy_dataset(root / "ds", n_test=9)
    raw = tiny_train_config()
    raw["checkpoint_dir"] = str(root / "ckpt")
    raw["data"]["views"] = ["PA"]  # every third test study is view_filtered
    run_train(ds, root / "model.pt", stage_config(raw, TrainConfig, "train"), "json")
    return ds, root / "model.pt"


def infer(model: Path, ds: Path, out: Path, cfg: dict, *extra: str) -> int:
    args = ["infer", "--model", str(model), "--dataset", str(ds), "--out", str(out), "--config", json.dumps(cfg)]
    return srrg_main([*args, *extra])


@pytest.mark.slow
@pytest.mark.parametrize("shards", [2, 3])
def test_merged_shards_equal_one_worker_byte_for_byte(trained: tuple[Path, Path], tmp_path: Path, shards: int) -> None:
    """Predictions and pairs of N workers merged (parts passed in reverse order) are the bytes
    one worker writes: a shard that splits a batch, a lost view-filtered row, another row order
    or a leftover position column fails."""
    ds, model = trained
    cfg = {"num_beams": 3, "max_new_tokens": 48, "batch_size": 2}
    one = tmp_path / "one.parquet"
    assert infer(model, ds, one, cfg, "--pairs", str(tmp_path / "one_pairs.parquet")) == 0
    parts = [tmp_path / f"part-{k}.parquet" for k in range(shards)]
    for k, part in enumerate(parts):
        assert infer(model, ds, part, {**cfg, "shards": shards}, "--shard", str(k)) == 0
    merged, pairs = tmp_path / "merged.parquet", tmp_path / "merged_pairs.parquet"
    rc = srrg_main(["infer-merge", "--parts", *map(str, parts[::-1]), "--out", str(merged), "--pairs", str(pairs)])
    assert rc == 0
    assert merged.read_bytes() == one.read_bytes()
    assert pairs.read_bytes() == (tmp_path / "one_pairs.parquet").read_bytes()


@pytest.mark.slow
def test_a_missing_part_is_one_line_exit_2(
    trained: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Merging without every shard would write a predictions file short of studies."""
    ds, model = trained
    part = tmp_path / "part-0.parquet"
    assert infer(model, ds, part, {"max_new_tokens": 48, "batch_size": 2, "shards": 2}, "--shard", "0") == 0
    capsys.readouterr()
    assert srrg_main(["infer-merge", "--parts", str(part), "--out", str(tmp_path / "m.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert "shard(s) 1 of 2 missing" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "m.parquet").exists()
