"""The resumable state of a run belongs to one dataset, and a broken one is named (issue 46: T1, T2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.config import stage_config
from srrg.errors import UserError
from srrg.model.file import dataset_digest
from srrg.model.train import LAST, checkpoint_dir, run_train
from srrg.settings.model import TrainConfig

torch.set_num_threads(1)


def _cfg(tmp: Path) -> TrainConfig:
    raw = tiny_train_config()
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    return stage_config(raw, TrainConfig, "train")


def test_t1_a_changed_dataset_trains_from_scratch(tmp_path: Path) -> None:
    """T1: the checkpoint folder was keyed by config and code only, so training the same run and
    config on another dataset "resumed" the first one's finished last.ckpt, trained 0 steps and wrote
    the first dataset's weights with resumed: true. Now the dataset's digest keys the folder."""
    cfg = _cfg(tmp_path)
    first = run_train(write_toy_dataset(tmp_path / "a", n_train=4), tmp_path / "a.pt", cfg, "r")
    other = write_toy_dataset(tmp_path / "b", n_train=6)  # another ingest.limit, say
    second = run_train(other, tmp_path / "b.pt", cfg, "r")
    assert not second["resumed"] and second["steps"] == 2 and second["train_studies"] == 6
    assert second["checkpoint_dir"] != first["checkpoint_dir"]
    again = run_train(other, tmp_path / "b2.pt", cfg, "r")  # the same dataset still resumes
    assert again["resumed"] and again["checkpoint_dir"] == second["checkpoint_dir"]


def test_t1_the_dataset_digest_follows_the_manifest_or_the_shards(tmp_path: Path) -> None:
    """T1: two datasets that differ in one shard byte, or in their manifest, must not share a key."""
    a = write_toy_dataset(tmp_path / "a")
    b = write_toy_dataset(tmp_path / "b")
    assert dataset_digest(a) == dataset_digest(b)
    write_toy_dataset(tmp_path / "b", n_test=2)
    assert dataset_digest(a) != dataset_digest(b)
    (a / "manifest.json").write_text('{"files": []}')
    before = dataset_digest(a)
    (a / "manifest.json").write_text('{"files": [], "rows": 1}')
    assert dataset_digest(a) != before
    cfg = _cfg(tmp_path)
    assert checkpoint_dir(cfg, "r", "c", dataset_digest(a)) != checkpoint_dir(cfg, "r", "c", dataset_digest(b))


@pytest.mark.parametrize("content", ["empty", "garbage", "truncated"])
def test_t2_a_broken_last_ckpt_is_one_line_naming_it(tmp_path: Path, content: str) -> None:
    """T2: a truncated, garbage or empty last.ckpt was Lightning's traceback naming no file; now
    one UserError line naming the file and the fix."""
    cfg = _cfg(tmp_path)
    ds = write_toy_dataset(tmp_path / "ds")
    if content == "truncated":
        summary = run_train(ds, tmp_path / "m.pt", cfg, "r")
        last = Path(summary["checkpoint_dir"]) / LAST
        last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])
    else:
        folder = checkpoint_dir(cfg, "r", dataset=dataset_digest(ds))
        folder.mkdir(parents=True)
        last = folder / LAST
        last.write_bytes(b"" if content == "empty" else b"not a checkpoint \x00\x01\x02" * 10)
    with pytest.raises(UserError) as err:
        run_train(ds, tmp_path / "again.pt", cfg, "r")
    message = str(err.value)
    assert str(last) in message and "\n" not in message and "from scratch" in message
    assert not (tmp_path / "again.pt").exists()
