"""The image cache (docs/model.md, "Image cache"): the cache stage decodes each image once, the
model reads the same tensors from it as from the files, every image has a status, a changed cache
file is refused naming it, and the workflow plans no cache for phantom runs."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from PIL import Image, ImageDraw

from srrg.dataset import shard_name, write_shard
from srrg.errors import UserError
from srrg.image_cache import ImageCache, build_shard, cache_root, decode, find_cache, pixels, run_image_cache
from srrg.model.datamodule import ReportDataset, open_cache, worker_count
from srrg.model.images import ImageError, load_image, normalize, study_image
from srrg.settings.dataset import DatasetConfig
from srrg.settings.fields import SettingsError
from srrg.settings.image_cache import cache_roots, cache_sizes, run_cache_size
from srrg.shards import file_sha256

torch.set_num_threads(1)


def xray(seed: int, width: int = 640, height: int = 768) -> Image.Image:
    """A gray film-like image with a sharp bright marker and a dark line (edges are where a draft
    decode and a full decode differ most)."""
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray((rng.random((10, 8)) * 150 + 50).astype(np.uint8), mode="L")
    arr = np.asarray(coarse.resize((width, height), Image.BICUBIC), dtype=np.float32)
    arr = np.clip(arr + rng.normal(0, 3, arr.shape), 0, 255).astype(np.uint8)
    img = Image.fromarray(arr, mode="L")
    draw = ImageDraw.Draw(img)
    draw.rectangle((40, 40, 200, 120), fill=255)
    draw.line((0, 400, width, 430), fill=0, width=7)
    return img


def write_dataset(root: Path, images: dict[str, list[str]]) -> Path:
    """A dataset folder as the workflow writes it: one train shard with its .sha256 and a
    manifest.json recording its SHA-256; `images` maps study id -> image_paths."""
    rows = [{"study_id": sid, "image_paths": paths, "split": "train"} for sid, paths in images.items()]
    shard = root / "train" / shard_name(0)
    write_shard(pl.DataFrame(rows), shard, DatasetConfig())
    files = [{"path": "train/part-00000.parquet", "split": "train", "rows": len(rows), "sha256": file_sha256(shard)}]
    (root / "manifest.json").write_text(json.dumps({"files": files}))
    return root


@pytest.fixture
def images_dir(tmp_path: Path) -> Path:
    """Two gray JPEGs (quality 95), a color JPEG and a gray PNG."""
    folder = tmp_path / "img"
    folder.mkdir()
    xray(0).save(folder / "a.jpg", quality=95)
    xray(1, 500, 620).save(folder / "b.jpg", quality=95)
    color = Image.merge("RGB", (xray(2), xray(3), xray(4)))
    color.save(folder / "c.jpg", quality=95)
    xray(5, 300, 260).save(folder / "d.png")
    return folder


def test_gray_pixels_equal_the_rgb_path_before_the_cache() -> None:
    """Catches a cache that stores gray images as one band but feeds the model other numbers than
    the code before it (RGB conversion, then resize): both must give the same tensor bit for bit."""
    img = xray(7, 300, 250)
    old = np.asarray(img.convert("RGB").resize((64, 64), Image.BILINEAR), dtype=np.float32) / 255.0
    mean, std = np.asarray((0.485, 0.456, 0.406), np.float32), np.asarray((0.229, 0.224, 0.225), np.float32)
    expected = torch.from_numpy(((old - mean) / std).transpose(2, 0, 1).copy())
    assert pixels(img, 64).shape == (64, 64)
    assert torch.equal(normalize(pixels(img, 64)), expected)


def test_cached_and_uncached_inputs_are_the_same_tensors(tmp_path: Path, images_dir: Path) -> None:
    """Catches a cache path that drifts from the file path (another resize, a channel mix-up, rows
    out of order): each study's tensor read from the cache equals the one decoded from its file
    exactly (tolerance 0; the issue allows 1/255: both paths decode a JPEG at the same reduced
    scale, so nothing differs), gray and color images in one shard."""
    studies = {"s1": [str(images_dir / "a.jpg")], "s2": [str(images_dir / "c.jpg")], "s3": ["d.png", "b.jpg"]}
    ds = write_dataset(tmp_path / "ds", studies)
    line = run_image_cache(ds, "train", 0, 32, str(images_dir), progress=False)
    assert "4 images (ok 4, missing 0, unreadable 0) at 32 px" in line
    cache = open_cache(ds, ["train"], 32)
    assert cache is not None and len(cache) == 4
    assert np.load(cache_root(ds, 32) / "train" / "part-00000.npy").shape == (4, 32, 32, 3)  # one color image
    for sid, paths in studies.items():
        row = {"study_id": sid, "image_paths": paths}
        uncached = study_image(row, "real", str(images_dir), 32)
        cached = study_image(row, "real", str(images_dir), 32, cache)
        assert cached.shape == (3, 32, 32) and torch.equal(cached, uncached), sid
    ds_rows = [{"study_id": "s1", "image_paths": studies["s1"], "structured": '{"positive": [], "negative": []}'}]
    with_cache = ReportDataset(ds_rows, "json", "real", None, 32, cache)[0]["image"]
    assert torch.equal(with_cache, load_image(images_dir / "a.jpg", 32))


def test_a_larger_cache_serves_a_smaller_input_within_one_level(tmp_path: Path, images_dir: Path) -> None:
    """Catches a cache built above the input size (image_cache.size) that is not resized, or
    resized badly: the model gets its input size, within 1/255 per pixel... of the direct decode
    on average, and never more than a few levels off (two bilinear steps instead of one)."""
    ds = write_dataset(tmp_path / "ds", {"s1": [str(images_dir / "a.jpg")]})
    run_image_cache(ds, "train", 0, 64, None, progress=False)
    assert find_cache(ds, 32) == cache_root(ds, 64) and find_cache(ds, 65) is None
    cache = open_cache(ds, ["train"], 32)
    row = {"study_id": "s1", "image_paths": [str(images_dir / "a.jpg")]}
    cached = study_image(row, "real", None, 32, cache)
    direct = study_image(row, "real", None, 32)
    levels = (cached - direct).abs() * 0.229 * 255  # back to gray levels (the smallest std)
    assert cached.shape == (3, 32, 32) and levels.mean() <= 1.0 and levels.max() <= 40


def test_draft_decode_tolerance(tmp_path: Path) -> None:
    """Catches a draft decode at the wrong scale (below the input size), or a broken one: against
    a full decode + bilinear resize the mean difference stays under 2/255 and the 99th percentile
    under 6/255. Not 1/255 per pixel: libjpeg's scaled IDCT averages 8x8 (4x4, 2x2) blocks while
    the bilinear resize of the full image weighs each source pixel by a triangle, so at sharp
    edges (the marker, the line) single pixels differ by up to ~25 levels; on smooth film <= 3."""
    path = tmp_path / "x.jpg"
    xray(11, 1250, 1500).save(path, quality=95)
    with Image.open(path) as img:
        img.draft("L", (224, 224))
        assert img.size == (313, 375)  # 1/4 scale: the smallest that still covers 224 x 224
    for size in (224, 64):
        diff = np.abs(decode(path, size).astype(int) - decode(path, size, draft=False).astype(int))
        assert diff.mean() <= 2 and np.percentile(diff, 99) <= 6, (size, diff.mean(), np.percentile(diff, 99))


def test_missing_and_unreadable_images_are_recorded_statuses(
    tmp_path: Path, images_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Catches a silent skip: a missing file and a garbage file each get a status, a zero row and
    one log line, the others are cached, and reading a failed one later names it and its status."""
    (images_dir / "bad.jpg").write_bytes(b"not a jpeg at all")
    studies = {"s1": ["a.jpg", "gone.jpg"], "s2": ["bad.jpg"]}
    ds = write_dataset(tmp_path / "ds", studies)
    with caplog.at_level(logging.WARNING, logger="srrg.image_cache"):
        line = run_image_cache(ds, "train", 0, 32, str(images_dir), progress=False)
    assert "3 images (ok 1, missing 1, unreadable 1)" in line
    index = json.loads((cache_root(ds, 32) / "train" / "part-00000.json").read_text())
    assert [(e["path"], e["status"]) for e in index["images"]] == [
        ("a.jpg", "ok"),
        ("gone.jpg", "missing"),
        ("bad.jpg", "unreadable"),
    ]
    assert index["counts"] == {"ok": 1, "missing": 1, "unreadable": 1}
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and "gone.jpg" in warned[0] and "bad.jpg" in warned[1]
    cache = open_cache(ds, ["train"], 32)
    assert not np.load(cache_root(ds, 32) / "train" / "part-00000.npy")[1:].any()
    with pytest.raises(ImageError, match=r"gone\.jpg was missing"):
        study_image({"study_id": "s1", "image_paths": ["gone.jpg"]}, "real", str(images_dir), 32, cache)
    with pytest.raises(ImageError, match=r"not in the image cache"):
        study_image({"study_id": "s9", "image_paths": ["b.jpg"]}, "real", str(images_dir), 32, cache)


def test_a_corrupted_or_stale_cache_file_is_refused_naming_it(tmp_path: Path, images_dir: Path) -> None:
    """Catches a reader that trusts cache bytes: a flipped byte in the array, a truncated index, an
    index entry without its keys and an index built from another dataset shard are each a
    UserError naming the file (never a traceback)."""
    ds = write_dataset(tmp_path / "ds", {"s1": [str(images_dir / "a.jpg")]})
    run_image_cache(ds, "train", 0, 32, None, progress=False)
    array = cache_root(ds, 32) / "train" / "part-00000.npy"
    index = array.with_suffix(".json")
    good = array.read_bytes()
    array.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(UserError, match=rf"image cache file {array} does not match its index"):
        ImageCache(cache_root(ds, 32), ds, ["train/part-00000.parquet"])
    array.write_bytes(good)
    text = index.read_text()
    index.write_text(text[:50])
    with pytest.raises(UserError, match=rf"image cache index {index} is not readable"):
        open_cache(ds, ["train"], 32)
    index.write_text(json.dumps({**json.loads(text), "images": [{"path": "a.jpg"}]}))
    with pytest.raises(UserError, match=rf"image cache index {index} is not readable \(KeyError\)"):
        open_cache(ds, ["train"], 32)
    index.write_text(text.replace(json.loads(text)["dataset_sha256"], "0" * 64))
    with pytest.raises(UserError, match=rf"{index} was built from another train/part-00000.parquet \(stale\)"):
        open_cache(ds, ["train"], 32)
    index.unlink()
    with pytest.raises(UserError, match=r"has no index for shard train/part-00000.parquet"):
        open_cache(ds, ["train"], 32)


def test_a_changed_dataset_shard_is_not_cached(tmp_path: Path, images_dir: Path) -> None:
    """Catches a cache built from shard bytes the shard job did not write (its .sha256 disagrees)."""
    ds = write_dataset(tmp_path / "ds", {"s1": [str(images_dir / "a.jpg")]})
    shard = ds / "train" / "part-00000.parquet"
    shard.write_bytes(shard.read_bytes() + b"\0")
    with pytest.raises(UserError, match=rf"shard {shard} changed since its shard job wrote it"):
        run_image_cache(ds, "train", 0, 32, None, progress=False)


def test_build_shard_writes_progress_lines(tmp_path: Path, images_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Catches a cache job that is silent in a SLURM log: plain progress lines at each tenth."""
    rows = [{"study_id": f"s{i}", "image_paths": [str(images_dir / "d.png")]} for i in range(10)]
    with caplog.at_level(logging.INFO, logger="srrg.progress"):
        build_shard(rows, "train/part-00000.parquet", "0" * 64, tmp_path / "c", 16, None)
    lines = [r.getMessage() for r in caplog.records if r.name == "srrg.progress"]
    assert lines[0].startswith("image-cache train/part-00000: 1/10 image (10%)") and len(lines) == 10


def test_a_shard_without_images_is_an_empty_cache_shard(tmp_path: Path) -> None:
    """Catches a cache job that fails on a split with no images (an empty split still has a shard):
    it writes a (0, size, size) array and an index that a reader accepts."""
    ds = write_dataset(tmp_path / "ds", {"s1": []})
    assert "0 images (ok 0, missing 0, unreadable 0)" in run_image_cache(ds, "train", 0, 16, None, progress=False)
    assert np.load(cache_root(ds, 16) / "train" / "part-00000.npy").shape == (0, 16, 16)
    assert len(ImageCache(cache_root(ds, 16), ds, ["train/part-00000.parquet"])) == 0


def test_worker_count_follows_the_job_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches a default that starts workers on the local profile (1 thread per job: 0 workers) or
    ignores the SLURM allocation (cpus_per_task 8: 7 workers), or an explicit setting overridden."""
    monkeypatch.delenv("SLURM_CPUS_PER_TASK", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert worker_count(None) == 0 and worker_count(3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert worker_count(None) == 0
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "8")
    assert worker_count(None) == 7 and worker_count(0) == 0
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "64")
    assert worker_count(None) == 8


def test_the_default_config_plans_no_cache_for_phantom_data() -> None:
    """Catches a cache planned for the embedded default (phantoms: the demo must not change) or
    not planned once ingest records real images; the size follows each run's encoder unless set."""
    from srrg.config_tree import check_workflow_config

    cfg = check_workflow_config(yaml_config(), [])
    assert cache_sizes(cfg) == {} and cache_roots(cfg) == {}
    real = copy.deepcopy(cfg)
    real["ingest"]["iu_xray"]["image_root"] = "/data/openi"
    sizes = cache_sizes(real)
    assert sizes and set(sizes.values()) == {64}  # the embedded encoders' 64 px
    assert cache_roots(real) == {64: None}  # ingest records absolute paths: no root needed
    real["image_cache"] = {"size": 256}
    assert set(cache_sizes(real).values()) == {256}
    real["image_cache"] = {"size": 32}
    with pytest.raises(SettingsError, match=r"image_cache.size.*32 is below run"):
        run_cache_size(real, "smollm2_json")
    real["image_cache"] = {"enabled": False}
    assert cache_sizes(real) == {}
    placeholder = copy.deepcopy(cfg)
    placeholder["image_cache"] = {"enabled": True}
    placeholder["train"]["data"] = {"images": "placeholder", "image_root": "/x"}
    assert cache_sizes(placeholder) == {}


def yaml_config() -> dict:
    from paths import REPO

    from srrg.text.decode import load_yaml

    return load_yaml((REPO / "config.yaml").read_text())


def real_image_dataset(root: Path, images: Path) -> Path:
    """The toy dataset of the model tests with a JPEG file behind every image path, each shard
    with its .sha256 and the manifest recording them (what the cache is checked against)."""
    from model_fixtures import write_toy_dataset

    write_toy_dataset(root, n_test=5)
    files = []
    for split in ("train", "validate", "test"):
        shard = root / split / shard_name(0)
        df = pl.read_parquet(shard).with_columns(
            pl.col("image_paths").list.eval(pl.element().str.replace(".png", ".jpg"))
        )
        write_shard(df, shard, DatasetConfig())
        files.append({"path": f"{split}/{shard.name}", "split": split, "rows": df.height, "sha256": file_sha256(shard)})
        for i, paths in enumerate(df["image_paths"].to_list()):
            (images / split).mkdir(parents=True, exist_ok=True)
            xray(100 * len(files) + i, 200, 240).save(images / paths[0], quality=95)
    (root / "manifest.json").write_text(json.dumps({"files": files}))
    return root


@pytest.mark.slow
def test_infer_with_workers_and_cache_predicts_the_same_bytes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Catches a DataLoader that reorders, drops or regroups samples, or workers that compute other
    tensors, and a cache that changes the model's input: `infer` with 2 workers and without, each
    with and without the image cache, writes byte-identical predictions (tiny model, CPU)."""
    from model_fixtures import tiny_train_config

    from srrg.config import stage_config
    from srrg.model.infer import run_infer
    from srrg.model.train import run_train
    from srrg.settings.model import InferConfig, TrainConfig

    images = tmp_path / "images"
    ds = real_image_dataset(tmp_path / "ds", images)
    for split in ("train", "validate", "test"):
        run_image_cache(ds, split, 0, 32, str(images), progress=False)
    raw = tiny_train_config()
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    raw["data"].update(images="real", image_root=str(images), num_workers=0)
    run_train(ds, tmp_path / "model.pt", stage_config(raw, TrainConfig, "train"), "json")
    outputs = {}
    for name, workers in (("cache_w0", 0), ("cache_w2", 2)):
        cfg = InferConfig(num_beams=2, max_new_tokens=48, batch_size=2, device="cpu", num_workers=workers)
        with caplog.at_level(logging.INFO, logger="srrg.model.datamodule"):
            run_infer(tmp_path / "model.pt", ds, tmp_path / f"{name}.parquet", None, cfg)
        assert "images: read from the image cache" in caplog.text  # the cache path ran
        outputs[name] = (tmp_path / f"{name}.parquet").read_bytes()
    import shutil

    shutil.rmtree(ds / "image_cache")
    cfg = InferConfig(num_beams=2, max_new_tokens=48, batch_size=2, device="cpu", num_workers=2)
    run_infer(tmp_path / "model.pt", ds, tmp_path / "files_w2.parquet", None, cfg)
    outputs["files_w2"] = (tmp_path / "files_w2.parquet").read_bytes()
    preds = pl.read_parquet(tmp_path / "cache_w0.parquet")
    assert preds.height == 5 and preds["images"].unique().to_list() == ["real"]
    assert preds.filter(pl.col("infer_status") == "ok")["raw"].null_count() == 0
    assert outputs["cache_w0"] == outputs["cache_w2"] == outputs["files_w2"]
