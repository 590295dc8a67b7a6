"""The image cache (docs/model.md, "Image cache"): every image of a dataset shard decoded once,
at reduced scale where the JPEG allows, resized to the model's input size and stored as uint8.

Decoding a full-size chest X-ray JPEG (about 2500 x 3000 px) costs tens of milliseconds; libjpeg
can decode at 1/2, 1/4 or 1/8 scale directly (PIL's `draft`), and a training step that reads a
row of a memory-mapped array pays no decode at all. One cache shard per dataset shard (one job
each, like the shards themselves): `<dataset>/image_cache/<size>px/<split>/part-NNNNN.npy` holds
the pixels, (images, size, size) for gray images or (images, size, size, 3), and `part-NNNNN.json`
beside it the index: each image's study, path and status (ok, missing, unreadable), the array's
SHA-256 and that of the dataset shard it was built from (the manifest's digest). A reader checks
both before trusting a row, so a changed or stale cache file is refused naming it.

Numpy and PIL only (no torch): the cache stage is a CPU data job.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from srrg.errors import UserError
from srrg.io import atomic_path, write_text
from srrg.progress import tracked
from srrg.shards import MANIFEST_NAME, file_sha256

log = logging.getLogger("srrg.image_cache")

FORMAT = 1
CACHE_DIR = "image_cache"  # inside the dataset folder
OK, MISSING, UNREADABLE = "ok", "missing", "unreadable"


class ImageError(UserError):
    """An image file is missing or unreadable; the message names the file."""


def resolve_image(study_id: str, image_paths: list[str] | None, image_root: str | None) -> Path:
    """The study's first image: absolute paths as recorded, relative ones under image_root."""
    if not image_paths:
        raise ImageError(f"study {study_id} has no image_paths (data.images is real)")
    return resolve_path(study_id, image_paths[0], image_root)


def resolve_path(study_id: str, path: str, image_root: str | None) -> Path:
    """One recorded image path: absolute as it is, relative under image_root."""
    p = Path(path)
    if p.is_absolute():
        return p
    if image_root is None:
        raise ImageError(f"study {study_id}: image path {p} is relative and train.data.image_root is not set")
    return Path(image_root) / p


def pixels(image: Image.Image, size: int) -> np.ndarray:
    """uint8 pixels resized to size x size (bilinear): (size, size) for a gray image, (size, size, 3)
    otherwise. A gray image resized then repeated over 3 channels equals its RGB copy resized (the
    resampling works per band), so gray images are stored and moved at a third of the bytes."""
    img = image if image.mode == "L" else image.convert("RGB")
    return np.asarray(img.resize((size, size), Image.BILINEAR))


def decode(path: str | Path, size: int, draft: bool = True) -> np.ndarray:
    """An image file's pixels at `size` (pixels()). With `draft`, a JPEG is decoded at the smallest
    of 1/1, 1/2, 1/4, 1/8 scale that is still at least size x size (PIL's draft: libjpeg scales in
    the DCT), several times faster than a full decode; other formats decode in full. A missing or
    unreadable file is an ImageError naming it."""
    p = Path(path)
    if not p.is_file():
        raise ImageError(f"image not found: {p} (check data.image_root and the dataset's image_paths)")
    try:
        with Image.open(p) as img:
            if draft and img.format == "JPEG" and img.mode in ("L", "RGB"):
                img.draft(img.mode, (size, size))
            img.load()
            return pixels(img, size)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ImageError(f"cannot read image {p}: {exc}") from exc


def cache_root(dataset_dir: str | Path, size: int) -> Path:
    """The cache folder of one image size inside a dataset folder."""
    return Path(dataset_dir) / CACHE_DIR / f"{size}px"


def shard_files(cache_dir: str | Path, shard_rel: str) -> tuple[Path, Path]:
    """(array, index) of the cache shard of dataset shard `<split>/part-NNNNN.parquet`."""
    base = Path(cache_dir) / Path(shard_rel).with_suffix("")
    return base.with_suffix(".npy"), base.with_suffix(".json")


def is_gray(path: Path) -> bool:
    """Whether an image file decodes to one band, read from its header (no decode); a file that
    cannot be opened counts as gray (its row stays zeros, its status says why)."""
    try:
        with Image.open(path) as img:
            return img.mode == "L"
    except (UnidentifiedImageError, OSError, ValueError):
        return True


def locate(study_id: str, path: str, image_root: str | None) -> Path | ImageError:
    """An image's file, or the ImageError that says why it has none (a relative path without a root)."""
    try:
        return resolve_path(study_id, path, image_root)
    except ImageError as err:
        return err


def build_shard(
    rows: Iterable[Mapping[str, Any]],
    shard_rel: str,
    dataset_sha256: str,
    cache_dir: str | Path,
    size: int,
    image_root: str | None,
    progress: bool = True,
) -> dict[str, Any]:
    """Decode every image of one dataset shard's rows (study_id, image_paths) into the rows of the
    cache shard's array, written through a memory map (a shard of MIMIC-CXR-JPG's 20,000 studies
    never sits in memory whole), then its index (written last, so an index always vouches for an
    array written whole). The array is gray (images, size, size) when every image is, else
    (images, size, size, 3). Every image gets a status; a failed one a log line and a zero row."""
    start = time.perf_counter()
    images = [(str(r["study_id"]), path) for r in rows for path in (r.get("image_paths") or [])]
    files = [locate(study_id, path, image_root) for study_id, path in images]
    color = any(isinstance(f, Path) and not is_gray(f) for f in files)
    shape = (len(images), size, size, 3) if color else (len(images), size, size)
    array_path, index_path = shard_files(cache_dir, shard_rel)
    index_path.unlink(missing_ok=True)
    entries = []
    desc = f"image-cache {shard_rel.removesuffix('.parquet')}"
    with atomic_path(array_path) as tmp:
        if not images:
            with open(tmp, "wb") as fh:  # a file object: np.save would append .npy to a path
                np.save(fh, np.zeros(shape, dtype=np.uint8), allow_pickle=False)
        else:
            data = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=shape)
            steps = tracked(zip(images, files), desc, "image", total=len(images), disable=not progress)
            for row, ((study_id, path), file) in enumerate(steps):
                status, error = OK, None
                try:
                    if isinstance(file, ImageError):
                        raise file
                    pixels_ = decode(file, size)
                    data[row] = pixels_[..., None] if color and pixels_.ndim == 2 else pixels_
                except ImageError as err:
                    status = MISSING if "not found" in str(err) or "is relative" in str(err) else UNREADABLE
                    error = str(err)
                    log.warning("image-cache: %s image of study %s: %s", status, study_id, err)
                entries.append({"study_id": study_id, "path": path, "status": status, "error": error})
            data.flush()
            del data
    counts = Counter(e["status"] for e in entries)
    index = {
        "format": FORMAT,
        "size": size,
        "shape": list(shape),
        "dataset_shard": shard_rel,
        "dataset_sha256": dataset_sha256,
        "image_root": image_root,
        "array": array_path.name,
        "array_sha256": file_sha256(array_path),
        "counts": {s: counts.get(s, 0) for s in (OK, MISSING, UNREADABLE)},
        "images": entries,
    }
    write_text(index_path, json.dumps(index, indent=1) + "\n")
    seconds = time.perf_counter() - start
    return {**{k: index[k] for k in ("dataset_shard", "size", "shape", "counts")}, "seconds": round(seconds, 2)}


def summary_line(summary: Mapping[str, Any]) -> str:
    """The cache job's last log line: counts, shape and throughput."""
    counts, seconds = summary["counts"], summary["seconds"]
    n = sum(counts.values())
    rate = n / seconds if seconds else 0.0
    states = ", ".join(f"{k} {v}" for k, v in counts.items())
    return (
        f"image-cache {summary['dataset_shard']}: {n} images ({states}) at {summary['size']} px, "
        f"array {tuple(summary['shape'])}, {seconds:.1f} s, {rate:.1f} images/s"
    )


def manifest_digests(dataset_dir: str | Path) -> dict[str, str]:
    """Shard path -> SHA-256 as manifest.json records it (the digests a cache is built against)."""
    path = Path(dataset_dir) / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        return {f["path"]: f["sha256"] for f in manifest["files"] if f.get("sha256")}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        raise UserError(
            f"{path}: not a readable dataset manifest ({type(err).__name__}); rerun `snakemake data`"
        ) from None


def cache_key(path: str, image_root: str | None) -> str:
    """The file a recorded image path names, as the readers resolve it (resolve_path); a relative
    path without a root (recorded missing when the cache was built) stays as it is."""
    p = Path(path)
    return str(p if p.is_absolute() or image_root is None else Path(image_root) / p)


def find_cache(dataset_dir: str | Path, size: int) -> Path | None:
    """The cache a run of input size `size` reads: the folder of that size, else the smallest
    larger one (image_cache.size set above the encoder's), else None (no cache: decode per step)."""
    root = Path(dataset_dir) / CACHE_DIR
    folders = [e.name for e in os.scandir(root) if e.is_dir()] if root.is_dir() else []
    sizes = sorted(int(n[:-2]) for n in folders if n.endswith("px") and n[:-2].isdigit())
    fits = [s for s in sizes if s >= size]
    return cache_root(dataset_dir, fits[0]) if fits else None


class ImageCache:
    """The cached pixels of the images of some dataset shards, by resolved file path. Opening it
    checks every index against the manifest's shard digest and every array against its index's
    SHA-256 (a UserError naming the file); arrays are memory-mapped on first use in each process
    (DataLoader workers open their own maps)."""

    def __init__(self, cache_dir: str | Path, dataset_dir: str | Path, shard_rels: Iterable[str]) -> None:
        self.cache_dir = Path(cache_dir)
        digests = manifest_digests(dataset_dir)
        self.arrays: list[Path] = []
        self.size: int | None = None  # the side of the cached images, from the indexes
        self.where: dict[str, tuple[int, int, str, str | None]] = {}  # file -> (array, row, status, error)
        for rel in shard_rels:
            self._add(rel, digests.get(rel))
        self._maps: dict[int, np.ndarray] = {}

    def _add(self, rel: str, digest: str | None) -> None:
        array_path, index_path = shard_files(self.cache_dir, rel)
        fix = f"delete {self.cache_dir} and rerun the workflow (rule image_cache rebuilds it)"
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
            root, shape = index["image_root"], tuple(index["shape"])
            size, array_sha = int(index["size"]), index["array_sha256"]
            entries = [(cache_key(e["path"], root), e["status"], e.get("error")) for e in index["images"]]
        except FileNotFoundError:
            raise UserError(
                f"image cache {self.cache_dir} has no index for shard {rel} ({index_path}); {fix}"
            ) from None
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            raise UserError(f"image cache index {index_path} is not readable ({type(err).__name__}); {fix}") from None
        if digest is None or index.get("dataset_sha256") != digest:
            raise UserError(f"image cache index {index_path} was built from another {rel} (stale); {fix}")
        if not array_path.is_file() or file_sha256(array_path) != array_sha:
            why = "is missing" if not array_path.is_file() else "does not match its index (SHA-256 differs: corrupt)"
            raise UserError(f"image cache file {array_path} {why}; {fix}")
        if len(shape) < 3 or shape[0] != len(entries) or shape[1:3] != (size, size):
            raise UserError(f"image cache index {index_path}: shape {shape} does not fit its images; {fix}")
        self.size = size
        k = len(self.arrays)
        self.arrays.append(array_path)
        for row, (key, status, error) in enumerate(entries):
            self.where.setdefault(key, (k, row, status, error))

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_maps": {}}  # each worker maps the files itself

    def __len__(self) -> int:
        return len(self.where)

    def get(self, path: str | Path) -> np.ndarray:
        """The cached uint8 pixels of a resolved image file, or an ImageError naming it (not in the
        cache, or recorded missing or unreadable when the cache was built)."""
        try:
            k, row, status, error = self.where[str(path)]
        except KeyError:
            raise ImageError(
                f"image {path} is not in the image cache {self.cache_dir} (built for other image paths or "
                "another image_root); rebuild the cache"
            ) from None
        if status != OK:
            raise ImageError(f"image {path} was {status} when the image cache was built: {error}")
        if k not in self._maps:
            self._maps[k] = np.load(self.arrays[k], mmap_mode="r", allow_pickle=False)
        return np.asarray(self._maps[k][row])


def shard_rows(shard: Path) -> list[dict[str, Any]]:
    """(study_id, image_paths) of a dataset shard, or a UserError naming it."""
    import polars as pl

    from srrg.io import scan_parquet

    try:
        frame = scan_parquet(shard).select(pl.col("study_id").cast(pl.String), "image_paths").collect()
    except (pl.exceptions.PolarsError, OSError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"shard {shard} is not a readable dataset shard ({reason})") from None
    return frame.to_dicts()


def run_image_cache(
    dataset_dir: str | Path, split: str, index: int, size: int, image_root: str | None, progress: bool = True
) -> str:
    """The image-cache stage: the cache shard of one dataset shard (its bytes checked against the
    SHA-256 its shard job recorded, which the cache records in turn); returns its summary line."""
    from srrg.dataset import recorded_sha256, shard_name

    root = Path(dataset_dir)
    shard = root / split / shard_name(index)
    if not shard.is_file():
        raise UserError(f"shard {shard}: no such file (run `snakemake data` or `srrg dataset-shard` first)")
    digest = recorded_sha256(shard, root)
    if file_sha256(shard) != digest:
        raise UserError(f"shard {shard} changed since its shard job wrote it (SHA-256 differs); rebuild the dataset")
    rel = shard.relative_to(root).as_posix()
    summary = build_shard(shard_rows(shard), rel, digest, cache_root(root, size), size, image_root, progress)
    return summary_line(summary)
