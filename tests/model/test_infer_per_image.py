"""Per-image test sets (infer.samples: image, docs/model.md "Per-image test sets"): every image of a
test study is predicted, each prediction a row with its sample_id, image path and view, scored
against its study's reference; the tables count images and studies."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import torch
from model_fixtures import REPORTS, tiny_train_config, toy_row
from PIL import Image

from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.model.infer import infer_samples
from srrg.model.train import run_train
from srrg.run_tables import PER_IMAGE_NOTE, RunEntry, run_tables
from srrg.settings.model import TrainConfig

torch.set_num_threads(1)

# test studies: (study id, [(image name, view)]); the lateral images fall outside the model's view filter
TEST = [
    ("te000", [("a", "PA"), ("b", "LATERAL")]),
    ("te001", [("c", "AP")]),
    ("te002", [("d", "PA"), ("e", "LATERAL"), ("f", "PA")]),
]
VIEWS = ["PA", "AP"]


def _write_split(root: Path, split: str, studies: list[tuple[str, list[tuple[str, str]]]]) -> None:
    rows = []
    for i, (sid, images) in enumerate(studies):
        paths = []
        for name, _ in images:
            path = root / "images" / f"{sid}-{name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("L", (16, 16), color=40 * i + 10).save(path)
            paths.append(str(path))
        row = toy_row(sid, f"p{sid}", split, REPORTS[i % len(REPORTS)], paths, images[0][1])
        rows.append({**row, "image_views": [v for _, v in images]})
    (root / split).mkdir(parents=True, exist_ok=True)
    pl.DataFrame(rows).write_parquet(root / split / "part-00000.parquet")


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> tuple[Path, Path]:
    """A one-step tiny model on real images (absolute paths: images auto = real), views PA and AP."""
    tmp = tmp_path_factory.mktemp("per-image")
    ds = tmp / "ds"
    _write_split(ds, "train", [(f"tr{i:03d}", [(f"x{i}", "PA")]) for i in range(4)])
    _write_split(ds, "test", TEST)
    raw = tiny_train_config(max_steps=1)
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    raw["data"]["views"] = VIEWS
    run_train(ds, tmp / "model.pt", stage_config(raw, TrainConfig, "train"), "json")
    return ds, tmp / "model.pt"


def _infer(model: tuple[Path, Path], out: Path, samples: str, **extra) -> tuple[pl.DataFrame, pl.DataFrame]:
    ds, path = model
    cfg = {"num_beams": 2, "max_new_tokens": 48, "batch_size": 2, "samples": samples, **extra}
    args = ["infer", "--model", str(path), "--dataset", str(ds), "--config", json.dumps(cfg)]
    assert srrg_main([*args, "--out", str(out / "predictions.parquet"), "--pairs", str(out / "pairs.parquet")]) == 0
    return pl.read_parquet(out / "predictions.parquet"), pl.read_parquet(out / "pairs.parquet")


def _score(out: Path, id_col: str) -> dict:
    pairs = str(out / "pairs.parquet")
    args = ["score", "--refs", pairs, "--ref-col", "reference", "--hyps", pairs, "--hyp-col", "raw"]
    assert srrg_main([*args, "--id-col", id_col, "--metrics", "bleu,s_score", "--out", str(out / "score")]) == 0
    return pl.read_csv(out / "score" / "summary.csv").row(0, named=True)


def test_infer_samples_one_per_image_every_image_accounted_for() -> None:
    """Each recorded image is a sample with its own id, path and view; images outside the view
    filter stay (not kept); a study without images is one sample keyed by its study id; study mode
    is one sample per study. Fails if a lateral image were dropped instead of recorded, or ids
    repeated within a study."""
    rows = [
        {"study_id": "s1", "image_paths": ["a", "b"], "image_views": ["PA", "LATERAL"], "view": "PA"},
        {"study_id": "s2", "image_paths": [], "view": "AP"},
    ]
    got = [(s["sample_id"], s["image_path"], s["view"], s["_keep"]) for s in infer_samples(rows, VIEWS, "image")]
    assert got == [("s1/0", "a", "PA", True), ("s1/1", "b", "LATERAL", False), ("s2", None, "AP", True)]
    studies = infer_samples(rows, VIEWS, "study")
    assert [(s["study_id"], s["_keep"]) for s in studies] == [("s1", True), ("s2", True)]
    assert "sample_id" not in studies[0]


def test_per_image_inference_end_to_end(model, tmp_path: Path) -> None:
    """6 test images in 3 studies -> 6 prediction rows (image count = predictions), each with its
    path and view and its study's reference; the 2 laterals are view_filtered, so 4 pairs are
    scored by sample_id. Sharded per-image inference merges to the same file. Fails if per-image
    predictions collapsed onto study ids, lost an image, or took another study's reference."""
    out = tmp_path / "image"
    preds, pairs = _infer(model, out, "image")
    n_images = sum(len(images) for _, images in TEST)
    assert preds.height == n_images == 6
    assert preds["sample_id"].to_list() == ["te000/0", "te000/1", "te001/0", "te002/0", "te002/1", "te002/2"]
    assert preds["study_id"].to_list() == ["te000", "te000", "te001", "te002", "te002", "te002"]
    assert [Path(p).name for p in preds["image_path"]] == [f"{s}-{n}.png" for s, ims in TEST for n, _ in ims]
    assert preds["view"].to_list() == [v for _, ims in TEST for _, v in ims]
    assert preds["infer_status"].to_list() == ["ok", "view_filtered", "ok", "ok", "view_filtered", "ok"]
    by_study = dict(preds.group_by("study_id").agg(pl.col("reference").n_unique()).iter_rows())
    assert by_study == {"te000": 1, "te001": 1, "te002": 1}  # each image is scored against its study's report
    assert pairs.columns == ["sample_id", "study_id", "reference", "report", "raw"]
    assert pairs["sample_id"].to_list() == ["te000/0", "te001/0", "te002/0", "te002/2"]
    assert preds.filter(pl.col("infer_status") == "ok")["raw"].null_count() == 0
    # two shards of per-image inference merge to the one-worker file
    parts = []
    for k in range(2):
        part = tmp_path / f"part-{k}.parquet"
        ds, path = model
        cfg = json.dumps({"num_beams": 2, "max_new_tokens": 48, "batch_size": 2, "samples": "image", "shards": 2})
        args = ["infer", "--model", str(path), "--dataset", str(ds), "--out", str(part), "--shard", str(k)]
        assert srrg_main([*args, "--config", cfg]) == 0
        parts.append(str(part))
    merged = tmp_path / "merged.parquet"
    assert srrg_main(["infer-merge", "--parts", *parts, "--out", str(merged)]) == 0
    assert pl.read_parquet(merged).equals(preds)


def test_scores_and_tables_per_image_vs_per_study(model, tmp_path: Path) -> None:
    """The same model scored per image (4 pairs: the frontal images of 3 studies) and per study (3
    pairs): Table 1 of the per-image run has an Images column (4) beside Studies (3) and says so
    in the caption; the per-study table has neither. Fails if per-image pairs were joined by
    study id (duplicates), or the tables counted images as studies."""
    image, study = tmp_path / "image", tmp_path / "study"
    _infer(model, image, "image")
    study_preds, study_pairs = _infer(model, study, "study")
    assert study_preds.height == 3 and "sample_id" not in study_preds.columns
    assert study_pairs.columns == ["study_id", "reference", "report", "raw"]
    assert _score(image, "sample_id")["n_pairs"] == 4
    assert _score(study, "study_id")["n_pairs"] == 3
    tables = {}
    for name, out in (("image", image), ("study", study)):
        entry = RunEntry(name, "Tiny", "json", str(out / "score" / "summary.csv"), str(out / "predictions.parquet"))
        tables[name] = run_tables([entry], out / "tables")["table1"]
    assert tables["image"].select("Studies", "Images").row(0) == (3, 4)
    assert "Images" not in tables["study"].columns and tables["study"]["Studies"].to_list() == [3]
    assert PER_IMAGE_NOTE in (image / "tables" / "table1.md").read_text()
    assert PER_IMAGE_NOTE not in (study / "tables" / "table1.md").read_text()
