"""Image loading and deterministic placeholder images.

Placeholders let the embedded default exercise every stage without image files: each study gets the
same synthetic picture on every run and every rank (seeded by its id). They carry no clinical content.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

# ImageNet statistics: what timm's pretrained Swin weights expect.
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


class ImageError(RuntimeError):
    """An image file is missing or unreadable; the message names the file."""


def to_tensor(image: Image.Image, size: int) -> torch.Tensor:
    """RGB, square resize, scale to [0, 1], normalize -> float tensor (3, size, size)."""
    rgb = image.convert("RGB").resize((size, size), Image.BILINEAR)
    arr = np.asarray(rgb, dtype=np.float32) / 255.0
    arr = (arr - np.asarray(MEAN, dtype=np.float32)) / np.asarray(STD, dtype=np.float32)
    return torch.from_numpy(arr.transpose(2, 0, 1).copy())


def load_image(path: str | Path, size: int) -> torch.Tensor:
    """Read a JPG/PNG (any mode; grayscale X-rays become 3 channels) as a normalized tensor."""
    p = Path(path)
    if not p.is_file():
        raise ImageError(f"image not found: {p} (check data.image_root and the dataset's image_paths)")
    try:
        with Image.open(p) as img:
            img.load()
            return to_tensor(img, size)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ImageError(f"cannot read image {p}: {exc}") from exc


def placeholder_image(study_id: str, size: int) -> torch.Tensor:
    """A smooth grayscale pattern seeded by the study id (stable across processes and platforms)."""
    seed = int.from_bytes(hashlib.sha256(study_id.encode("utf-8")).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    coarse = rng.random((8, 8), dtype=np.float32) * 255.0
    img = Image.fromarray(coarse.astype(np.uint8), mode="L").resize((size, size), Image.BICUBIC)
    return to_tensor(img, size)


def resolve_image(study_id: str, image_paths: list[str] | None, image_root: str | None) -> Path:
    """The study's first image under image_root (absolute paths are kept)."""
    if not image_paths:
        raise ImageError(f"study {study_id} has no image_paths but data.image_root is set")
    first = Path(image_paths[0])
    return first if first.is_absolute() or image_root is None else Path(image_root) / first


def study_image(study_id: str, image_paths: list[str] | None, image_root: str | None, size: int) -> torch.Tensor:
    """The model input of one study: its first image, or the placeholder when no root is configured."""
    if image_root is None:
        return placeholder_image(study_id, size)
    return load_image(resolve_image(study_id, image_paths, image_root), size)
