"""Images per second per core of the model's input pipeline on MIMIC-CXR-JPG-sized images
(docs/model.md, "Image cache").

Writes synthetic grayscale chest-X-ray-like JPEGs (default 2500 x 3000 px, quality 95: MIMIC-CXR-JPG's
size and quality; smooth anatomy-like shading, rib-like bands and film noise, so the JPEG holds
realistic detail) and measures, for one model input of --size px:

  (a) full decode + resize      the path before the cache: every step decodes the whole JPEG
  (b) draft decode + resize     libjpeg decodes at 1/2, 1/4 or 1/8 scale (what the cache stage does)
  (c) cache read                a row of the memory-mapped uint8 array (no decode)

each as CPU seconds per image (time.process_time, one thread: less load-sensitive than wall time),
with the cache stage's own throughput (decode, stack, write, hash) and the cores that keep one GPU
fed at --steps-per-s steps of --batch images. The load average is printed with the table.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/image_pipeline.py [--images 12] [--size 224]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from srrg.image_cache import ImageCache, build_shard, decode, shard_files
from srrg.model.images import cached_image, normalize

SHARD = "train/part-00000.parquet"


def synthetic_xray(seed: int, width: int, height: int, noise: float = 2.0) -> Image.Image:
    """A gray image with chest-film-like content: low-frequency shading, rib-like bands, film noise
    (its standard deviation in gray levels sets the JPEG's size: 2 gives about 1.5 MB at quality 95,
    MIMIC-CXR-JPG's average file size)."""
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray((rng.random((12, 10)) * 120 + 60).astype(np.uint8), mode="L")
    base = np.asarray(coarse.resize((width, height), Image.BICUBIC), dtype=np.float32)
    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    ribs = 18 * np.sin(y / (height / 40) + 3 * np.sin(x / (width / 2)))
    grain = rng.normal(0, noise, (height, width)).astype(np.float32)
    return Image.fromarray(np.clip(base + ribs + grain, 0, 255).astype(np.uint8), mode="L")


def make_images(folder: Path, n: int, width: int, height: int, quality: int, noise: float) -> list[Path]:
    paths = []
    for i in range(n):
        path = folder / f"img{i:03d}.jpg"
        synthetic_xray(i, width, height, noise).save(path, quality=quality)
        paths.append(path)
    return paths


def parquet_reader(array: np.ndarray, path: Path, rows_per_group: int):
    """The alternative layout: the same pixels as a binary column in Parquet row groups (zstd).
    Returns a reader of one row, as a DataLoader's random access does: its row group decoded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    column = pa.array([row.tobytes() for row in array], type=pa.binary())
    pq.write_table(pa.table({"pixels": column}), path, row_group_size=rows_per_group, compression="zstd")
    reader = pq.ParquetFile(path)

    def read(i: int) -> torch.Tensor:
        group = reader.read_row_group(i // rows_per_group, columns=["pixels"]).column(0)
        return normalize(np.frombuffer(group[i % rows_per_group].as_py(), np.uint8).reshape(array.shape[1:]))

    return read


def cpu_per_image(fn, items: list, repeat: int) -> float:
    """CPU seconds per item of fn over items, the best of `repeat` passes."""
    best = math.inf
    for _ in range(repeat):
        t = time.process_time()
        for item in items:
            fn(item)
        best = min(best, (time.process_time() - t) / len(items))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=12, help="synthetic JPEGs to write")
    parser.add_argument("--width", type=int, default=2500)
    parser.add_argument("--height", type=int, default=3000)
    parser.add_argument("--quality", type=int, default=95)
    parser.add_argument("--noise", type=float, default=2.0, help="film noise (gray levels); sets the file size")
    parser.add_argument("--size", type=int, default=224, help="model input side (Swin-B: 224)")
    parser.add_argument("--batch", type=int, default=16, help="images per GPU step")
    parser.add_argument("--steps-per-s", type=float, default=4.0, help="GPU steps per second to keep fed")
    parser.add_argument("--repeat", type=int, default=3, help="passes per measurement (the best counts)")
    parser.add_argument("--rows-per-group", type=int, default=8, help="images per row group of the Parquet layout")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_images(root, args.images, args.width, args.height, args.quality, args.noise)
        mb = sum(p.stat().st_size for p in paths) / len(paths) / 1e6
        # the cache stage over the images (one shard), then a reader over it
        dataset = root / "dataset"
        rows = [{"study_id": f"s{i}", "image_paths": [str(p)]} for i, p in enumerate(paths)]
        (dataset / "train").mkdir(parents=True)
        (dataset / "manifest.json").write_text(f'{{"files": [{{"path": "{SHARD}", "sha256": "{"0" * 64}"}}]}}')
        cache_dir = dataset / "image_cache" / f"{args.size}px"
        t0, c0 = time.perf_counter(), time.process_time()
        summary = build_shard(rows, SHARD, "0" * 64, cache_dir, args.size, None, progress=False)
        stage_cpu = (time.process_time() - c0) / len(paths)
        stage_wall = (time.perf_counter() - t0) / len(paths)
        assert summary["counts"]["ok"] == len(paths), summary
        cache = ImageCache(cache_dir, dataset, [SHARD])
        full = cpu_per_image(lambda p: normalize(decode(p, args.size, draft=False)), paths, args.repeat)
        draft = cpu_per_image(lambda p: normalize(decode(p, args.size, draft=True)), paths, args.repeat)
        reads = [str(p) for p in paths] * 50  # the cache read is fast: more items for a steady clock
        cached = cpu_per_image(lambda p: cached_image(cache, p, args.size), reads, args.repeat)
        array_path = shard_files(cache_dir, SHARD)[0]
        array_bytes = array_path.stat().st_size / len(paths)
        read_parquet = parquet_reader(np.load(array_path), root / "pixels.parquet", args.rows_per_group)
        parquet = cpu_per_image(read_parquet, list(range(len(paths))) * 10, args.repeat)
    need = args.batch * args.steps_per_s
    print(
        f"{len(paths)} synthetic JPEGs {args.width}x{args.height} gray, quality {args.quality}, {mb:.2f} MB each; "
        f"model input {args.size} px; cache {array_bytes / 1e3:.1f} kB per image"
    )
    print(f"{'path':<34}{'CPU ms/image':>14}{'images/s/core':>15}{'x full':>8}{'cores for GPU':>15}")
    for name, sec in (
        ("(a) full decode + resize", full),
        ("(b) draft decode + resize", draft),
        ("(c) cache read (memory map)", cached),
        (f"(c') Parquet row groups of {args.rows_per_group}", parquet),
        ("cache stage (draft+write+hash)", stage_cpu),
    ):
        print(f"{name:<34}{sec * 1e3:>14.2f}{1 / sec:>15.1f}{full / sec:>8.1f}{math.ceil(need * sec):>15d}")
    print(f"cache stage wall: {stage_wall * 1e3:.1f} ms/image ({1 / stage_wall:.1f} images/s, one job)")
    print(f"GPU fed at {args.steps_per_s:g} steps/s x {args.batch} images = {need:g} images/s")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    print(f"draft {full / draft:.1f}x faster than full decode; cache read {full / cached:.1f}x faster than full decode")


if __name__ == "__main__":
    main()
