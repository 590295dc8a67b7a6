"""The model input of a study under the one image switch `data.images` (docs/model.md).

`real` reads the study's first image file and fails, naming the file, when it is missing: never a
silent fallback. It reads the pixels from the image cache when the run has one (srrg.image_cache,
docs/model.md "Image cache"), else decodes the file the same way the cache stage does (a JPEG at
reduced scale, PIL's draft), so a cached and an uncached run see the same tensors.

`phantom` renders the study's structured report (srrg.phantom, docs/phantom.md), so
collections without images still carry readable content. `placeholder` is a smooth random pattern
seeded by the study id: it carries no clinical content (plumbing checks only).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from srrg.image_cache import ImageCache, decode, pixels, resolve_image
from srrg.image_cache import ImageError as ImageError  # re-exported: the stages catch it from here
from srrg.phantom import render_views
from srrg.report import from_obj
from srrg.sources.mimic_cxr import view_rank

log = logging.getLogger(__name__)

# ImageNet statistics: what timm's pretrained Swin weights expect.
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def normalize(arr: np.ndarray) -> torch.Tensor:
    """uint8 pixels (size, size) gray or (size, size, 3) -> float tensor (3, size, size), scaled to
    [0, 1] and normalized; a gray image fills the 3 channels."""
    rgb = np.repeat(arr[..., None], 3, axis=2) if arr.ndim == 2 else arr
    out = rgb.astype(np.float32) / 255.0
    out = (out - np.asarray(MEAN, dtype=np.float32)) / np.asarray(STD, dtype=np.float32)
    return torch.from_numpy(out.transpose(2, 0, 1).copy())


def to_tensor(image: Image.Image, size: int) -> torch.Tensor:
    """Square bilinear resize, RGB, normalize -> float tensor (3, size, size)."""
    return normalize(pixels(image, size))


def load_image(path: str | Path, size: int) -> torch.Tensor:
    """Read a JPG/PNG (any mode; grayscale X-rays become 3 channels) as a normalized tensor, a JPEG
    decoded at reduced scale (srrg.image_cache.decode)."""
    return normalize(decode(path, size))


def cached_image(cache: ImageCache, path: str | Path, size: int) -> torch.Tensor:
    """A cached image as a normalized tensor; a cache built larger than `size` (image_cache.size)
    is resized to it."""
    arr = cache.get(path)
    if arr.shape[0] != size:
        arr = pixels(Image.fromarray(arr), size)
    return normalize(arr)


def placeholder_image(study_id: str, size: int) -> torch.Tensor:
    """A smooth grayscale pattern seeded by the study id (stable across processes and platforms)."""
    seed = int.from_bytes(hashlib.sha256(study_id.encode("utf-8")).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    coarse = rng.random((8, 8), dtype=np.float32) * 255.0
    img = Image.fromarray(coarse.astype(np.uint8), mode="L").resize((size, size), Image.BICUBIC)
    return to_tensor(img, size)


def phantom_views(
    study_id: str, structured: str | None, size: int, views: Sequence[str | None], n: int
) -> list[torch.Tensor]:
    """The phantom radiographs of a study's first n views (views: the study's, frontal first;
    srrg.phantom.render_views) from its (canonical) structured report. Each view's image depends
    on the study's views, not on n: the frontal of a study with a lateral is the same image for a
    one-view and a several-view model."""
    try:
        report = from_obj(json.loads(structured or ""))[0]
    except (ValueError, TypeError) as exc:
        raise ValueError(f"study {study_id} has no valid structured report to draw: {structured!r:.80}") from exc
    drawn = render_views(report, study_id, list(views) or [None], size, first=n)
    return [to_tensor(Image.fromarray((d * 255.0).round().astype(np.uint8), mode="L"), size) for d in drawn]


def phantom_image(
    study_id: str, structured: str | None, size: int, views: Sequence[str | None] | None = None
) -> torch.Tensor:
    """The phantom a one-image model reads: the study's first view (phantom_views; None: a study
    of one image of unknown view)."""
    return phantom_views(study_id, structured, size, views or (), 1)[0]


def study_views(paths: Sequence[str], views: Sequence[str | None]) -> tuple[list[str], list[str | None]]:
    """The images of a study and their views, frontal first (view_rank, then their order), each
    file once: a model reading n views takes the first n, never a duplicate."""
    order = sorted(range(len(paths)), key=lambda k: (view_rank(views[k] if k < len(views) else None), k))
    picked: list[int] = []
    for k in order:
        if paths[k] not in (paths[j] for j in picked):
            picked.append(k)
    return [paths[k] for k in picked], [views[k] if k < len(views) else None for k in picked]


def row_views(row: Mapping[str, Any]) -> tuple[list[str], list[str | None]]:
    """study_views of a dataset row (its image_paths and image_views)."""
    return study_views(list(row.get("image_paths") or []), list(row.get("image_views") or []))


def resolve_images(mode: str, image_root: str | None, image_paths: Iterable[list[str] | None]) -> str:
    """The image source a run uses: `auto` is real when image_root is set or the dataset records
    absolute image paths (ingest ran with an image root), else phantom."""
    if mode != "auto":
        return mode
    recorded = image_root is not None or any(Path(p[0]).is_absolute() for p in image_paths if p)
    return "real" if recorded else "phantom"


def log_image_source(mode: str, image_root: str | None) -> None:
    """Say loudly when a run does not read real images (also written to the run summary)."""
    if mode == "phantom":
        log.warning("images: PHANTOM radiographs rendered from each study's report (docs/phantom.md), not real images")
    elif mode == "placeholder":
        log.warning("images: content-free PLACEHOLDER images (no image understanding is possible)")
    else:
        log.info("images: real files (image_root %s)", image_root or "recorded by ingest")


def study_image(
    row: Mapping[str, Any], mode: str, image_root: str | None, size: int, cache: ImageCache | None = None
) -> torch.Tensor:
    """The model input of one dataset row under a resolved image mode (real, phantom, placeholder);
    real images come from the cache when one is given."""
    study_id = str(row["study_id"])
    if mode == "placeholder":
        return placeholder_image(study_id, size)
    if mode == "phantom":
        return phantom_image(study_id, row.get("structured"), size, row_views(row)[1])
    if mode == "real":
        path = resolve_image(study_id, row.get("image_paths"), image_root)
        return load_image(path, size) if cache is None else cached_image(cache, path, size)
    raise ValueError(f"unresolved image mode {mode!r} (expected real, phantom or placeholder)")
