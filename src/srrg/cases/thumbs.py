"""Small embedded thumbnails of the picture a run's model read (docs/cases.md): the study's first
image file (`real`) or its phantom radiograph (`phantom`, drawn from the reference's structured
report by srrg.phantom at the thumbnail's size); `placeholder` images carry no content and get none.
JPEG data URIs (about 1.3 KB of base64 at 64 px) keep a 200-study page well under a megabyte of pictures;
JPEG because its encoder takes 0.2 ms a picture where WebP's takes 3 ms for a third fewer bytes."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import sqlite3
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from srrg import phantom
from srrg.errors import UserError
from srrg.phantom import render
from srrg.report import StructuredReport

QUALITY = 60
# what data_uri writes, and all a cached thumbnail may be: embedded into <img src>, anything else
# (a quote, markup, another scheme) would be page content from a file outside the page's inputs
_DATA_URI = re.compile(r"data:image/jpeg;base64,[A-Za-z0-9+/]+={0,2}")
CACHE_FILE = "thumbnails.sqlite"
_SCHEMA = "CREATE TABLE IF NOT EXISTS thumbnails (key TEXT PRIMARY KEY, uri TEXT NOT NULL)"
_CHUNK = 500  # stays under SQLite's bound-parameter limit


def data_uri(image: Image.Image) -> str:
    """A grayscale JPEG data URI of an already small image."""
    buf = io.BytesIO()
    image.convert("L").save(buf, format="JPEG", quality=QUALITY, optimize=True)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def phantom_thumbnail(study_id: str, report: StructuredReport, size: int) -> str:
    gray = (render(report, study_id, size) * 255.0).round().astype(np.uint8)
    return data_uri(Image.fromarray(gray, mode="L"))


def file_thumbnail(path: str | Path, size: int) -> str:
    """A JPEG is decoded at reduced scale (draft mode), so a full-size radiograph costs milliseconds."""
    with Image.open(path) as img:
        img.draft("L", (size, size))
        img.thumbnail((size, size))
        return data_uri(img)


def _one(job: tuple[str, str, StructuredReport | None, str | None, int]) -> tuple[str | None, str]:
    """(data URI or None, note) of one study; a picture that cannot be drawn or read is a note, not an error."""
    mode, study_id, report, path, size = job
    if mode == "phantom":
        if report is None:
            return None, "no structured reference to draw a phantom from"
        return phantom_thumbnail(study_id, report, size), "phantom"
    if mode == "real":
        if path is None:
            return None, "no image path"
        try:
            return file_thumbnail(path, size), "real"
        except (FileNotFoundError, UnidentifiedImageError, OSError) as exc:
            return None, f"cannot read image {path}: {exc}"
    return None, f"{mode} image: no clinical content to show"


@lru_cache(maxsize=1)
def code_version() -> str:
    """Hash of the code that draws a thumbnail: editing the phantom or this module retires the cache."""
    digest = hashlib.sha256()
    for module in (phantom, sys.modules[__name__]):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


def cache_key(job: tuple[str, str, StructuredReport | None, str | None, int]) -> str:
    """What a thumbnail depends on: mode, study (the phantom's seed), report or image file (path,
    size and modification time), edge, quality and code version."""
    mode, study_id, report, path, size = job
    stamp = None
    if mode == "real" and path is not None and os.path.isfile(path):
        st = os.stat(path)
        stamp = [st.st_size, st.st_mtime_ns]
    parts = [
        mode,
        study_id,
        report.to_json() if report is not None else None,
        path,
        stamp,
        size,
        QUALITY,
        code_version(),
    ]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


class ThumbnailCache:
    """cache key -> data URI in `<folder>/thumbnails.sqlite`: one file and one transaction per page,
    since creating a small file per thumbnail costs as much as drawing it (docs/cases.md). WAL
    journaling and a busy timeout, as srrg's other caches, so parallel Snakemake jobs share it."""

    def __init__(self, folder: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(folder) / CACHE_FILE
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=busy_timeout_s)
            self.conn.execute("PRAGMA journal_mode=WAL")
            with self.conn:
                self.conn.execute(_SCHEMA)
                self.conn.execute("SELECT key, uri FROM thumbnails LIMIT 0")  # not another program's table
        except (OSError, sqlite3.DatabaseError) as err:
            raise UserError(
                f"--cache-dir {folder}: {self.path} is not a usable thumbnail cache ({err}); delete it "
                "(its thumbnails are then drawn again) or pass another folder"
            ) from None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached data URIs of the keys that have one. A value that is not one data_uri wrote
        (an edited or damaged row: markup, another scheme, bytes) is a miss, drawn again and replaced,
        so nothing in the cache file becomes page content."""
        found: dict[str, str] = {}
        for start in range(0, len(keys), _CHUNK):
            part = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(part))
            for key, uri in self.conn.execute(f"SELECT key, uri FROM thumbnails WHERE key IN ({marks})", part):
                if isinstance(uri, str) and _DATA_URI.fullmatch(uri):
                    found[key] = uri
        return found

    def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO thumbnails VALUES (?, ?)", items)

    def close(self) -> None:
        self.conn.close()


def _draw(jobs: list[Any], processes: int) -> list[tuple[str | None, str]]:
    if processes > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(processes) as pool:
            return list(pool.map(_one, jobs, chunksize=max(1, len(jobs) // (4 * processes))))
    return [_one(job) for job in jobs]


def thumbnails(
    mode: str,
    study_ids: Sequence[str],
    reports: Sequence[StructuredReport | None],
    paths: Sequence[str | None],
    size: int,
    *,
    processes: int = 1,
    cache_dir: str | Path | None = None,
) -> list[tuple[str | None, str]]:
    """One (data URI or None, note) per study, in order. Drawing dominates the page's write time:
    pictures are drawn in `processes` worker processes, and with a cache folder each is drawn once
    (the pages of all runs on one test split share them; a rerun after rescoring draws nothing)."""
    jobs = [(mode, s, r, p, size) for s, r, p in zip(study_ids, reports, paths, strict=True)]
    if cache_dir is None:
        return _draw(jobs, processes)
    keys = [cache_key(job) for job in jobs]
    cache = ThumbnailCache(cache_dir)
    try:
        cached = cache.get_many(keys)
        out = [(cached[k], mode) if k in cached else None for k in keys]
        todo = [i for i, k in enumerate(keys) if k not in cached]
        drawn = _draw([jobs[i] for i in todo], processes)
        for i, picture in zip(todo, drawn):
            out[i] = picture
        # failures are notes, never cached: a fixed file shows up next time
        cache.put_many([(keys[i], uri) for i, (uri, _) in zip(todo, drawn) if uri is not None])
    finally:
        cache.close()
    return out  # type: ignore[return-value]  # every slot is filled above
