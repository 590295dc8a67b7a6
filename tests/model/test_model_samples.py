"""Per-image samples (`data.samples: image`) and `trainer.max_epochs` (docs/model.md), on a
fixture whose studies have several images, as MIMIC-CXR-JPG studies do."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.config import stage_config
from srrg.model.datamodule import image_samples
from srrg.model.train import epoch_steps, run_train
from srrg.settings.model import TrainConfig

torch.set_num_threads(1)

# per train study: (image views) in ingest's view order, frontal first
TRAIN_VIEWS = [["PA", "LATERAL", "AP"], ["AP"], ["PA", "LATERAL"], ["LATERAL"]]


def _multi_image_dataset(root: Path) -> Path:
    """The toy dataset with 3, 1, 2 and 1 images in its four train studies (7 images)."""
    write_toy_dataset(root)
    shard = root / "train" / "part-00000.parquet"
    df = pl.read_parquet(shard)
    paths = [[f"{sid}/{k}.jpg" for k in range(len(v))] for sid, v in zip(df["study_id"], TRAIN_VIEWS)]
    df = df.with_columns(
        pl.Series("image_paths", paths),
        pl.Series("image_views", TRAIN_VIEWS),
        pl.Series("view", [v[0] for v in TRAIN_VIEWS]),
    )
    df.write_parquet(shard)
    return root


def test_image_samples_one_row_per_image_with_its_own_view() -> None:
    """Each image its own sample with its own path and view; the view filter drops laterals.
    Fails if the study's first image were repeated, or views were taken from the study."""
    rows = [
        {"study_id": "s1", "image_paths": ["a", "b", "c"], "image_views": ["PA", "LATERAL", "AP"], "view": "PA"},
        {"study_id": "s2", "image_paths": ["d"], "image_views": None, "view": "AP"},
        {"study_id": "s3", "image_paths": [], "view": None},
    ]
    out = image_samples(rows, None)
    assert [(r["study_id"], r["image_paths"], r["view"]) for r in out] == [
        ("s1", ["a"], "PA"),
        ("s1", ["b"], "LATERAL"),
        ("s1", ["c"], "AP"),
        ("s2", ["d"], "AP"),
        ("s3", [], None),
    ]
    frontal = image_samples(rows, ("PA", "AP"))  # the study filter (select_rows) ran before
    assert [r["image_paths"] for r in frontal] == [["a"], ["c"], ["d"], []]


def test_epoch_steps_by_hand() -> None:
    """10 samples on 2 ranks = 5 each = 3 batches of 2; accumulating 2 -> 2 steps per epoch.
    Fails if the world size, the padded share, or the epoch-end step were ignored."""
    assert epoch_steps(10, 2, 2, 2, 3) == 6
    assert epoch_steps(7, 2, 1, 1, 1) == 4
    assert epoch_steps(7, 8, 1, 1, 2) == 2
    assert epoch_steps(9, 2, 2, 1, 1) == 3  # shares of 5 (one padded): 3 batches


def test_image_samples_and_epochs_train_over_every_image(tmp_path: Path) -> None:
    """One epoch of per-image samples under the view filter [PA, AP]: 4 studies -> 3 kept (the
    lateral-only study goes) -> 4 frontal images -> 2 steps of batch 2; the summary names both
    counts. Fails if samples were counted per study (3 -> 2 steps too, but 3 samples), laterals kept
    (5 samples, 3 steps) or max_epochs ignored (50 steps)."""
    raw = tiny_train_config(max_steps=50, max_epochs=1)
    raw["data"].update({"samples": "image", "views": ["PA", "AP"]})
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    out = tmp_path / "run" / "model.pt"
    summary = run_train(_multi_image_dataset(tmp_path / "ds"), out, stage_config(raw, TrainConfig, "train"), "r")
    assert summary["train_studies"] == 3 and summary["train_samples"] == 4 and summary["steps"] == 2
