"""The `image_cache` section (docs/model.md, "Image cache"): whether the workflow decodes every
real image once into the image cache, and at which size; and which runs read real images at all,
decided from the config alone (the workflow plans the cache jobs before any data exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from srrg.settings.fields import Settings, SettingsError, build, doc
from srrg.settings.model import EncoderConfig, run_slice, run_specs


@dataclass(frozen=True)
class ImageCacheConfig(Settings):
    """The image cache of the runs that read real images (phantom and placeholder runs draw their
    images and have none)."""

    enabled: bool = field(
        default=True,
        metadata=doc(
            "Decode every image of the dataset once (JPEGs at reduced scale) into uint8 arrays that training and "
            "inference read without decoding; false = every step decodes the image files."
        ),
    )
    size: int | None = field(
        default=None,
        metadata=doc(
            "Side of the cached images in pixels; null = each run's train.model.encoder.image_size. A size above "
            "it keeps one cache for runs of several input sizes (each step resizes the cached image).",
            minimum=1,
        ),
    )


def reads_real_images(cfg: Mapping[str, Any], train: Mapping[str, Any]) -> bool:
    """Whether a run's merged train slice reads image files, as srrg.model.images.resolve_images
    decides it: images real, or auto with an image root (the run's, or the one ingest records
    absolute paths under)."""
    data = train.get("data") or {}
    mode = data.get("images", "auto")
    if mode != "auto":
        return mode == "real"
    ingest = cfg.get("ingest") or {}
    source = (ingest.get(ingest.get("source", "iu_xray")) or {}) if isinstance(ingest, Mapping) else {}
    return bool(data.get("image_root") or source.get("image_root"))


def run_cache_size(cfg: Mapping[str, Any], run: str) -> int | None:
    """The image cache size a run reads, or None when it reads none (the cache is off, or the run
    draws phantoms or placeholders). A set image_cache.size below the run's input size is an error:
    upsampling a cache would feed the model less detail than its input size promises."""
    section = build(ImageCacheConfig, cfg.get("image_cache") or {}, "image_cache")
    train = run_slice(cfg, run, "train")
    if not section.enabled or not reads_real_images(cfg, train):
        return None
    encoder = (train.get("model") or {}).get("encoder") or {}
    size = int(encoder.get("image_size", EncoderConfig.image_size))
    if section.size is None:
        return size
    if section.size < size:
        raise SettingsError(
            "image_cache.size",
            f"{section.size} is below run {run}'s train.model.encoder.image_size {size}",
            located=True,
        )
    return section.size


def cache_sizes(cfg: Mapping[str, Any]) -> dict[str, int]:
    """Run name -> the image cache size it reads, for the runs that read one."""
    sizes = {spec.name: run_cache_size(cfg, spec.name) for spec in run_specs(cfg.get("train") or {})}
    return {name: size for name, size in sizes.items() if size is not None}


def cache_roots(cfg: Mapping[str, Any]) -> dict[int, str | None]:
    """Cache size -> the data.image_root its cache jobs resolve relative image paths under. Runs
    that share a size share its cache, so they must agree on the root (else an error naming both)."""
    roots: dict[int, tuple[str, str | None]] = {}
    for run, size in cache_sizes(cfg).items():
        root = (run_slice(cfg, run, "train").get("data") or {}).get("image_root")
        first = roots.setdefault(size, (run, root))
        if first[1] != root:
            raise SettingsError(
                "train.data.image_root",
                f"runs {first[0]} and {run} share the {size} px image cache but not their image_root "
                f"({first[1]!r} vs {root!r}); give them one root or set image_cache.size apart",
                located=True,
            )
    return {size: root for size, (_, root) in sorted(roots.items())}
