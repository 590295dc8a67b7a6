"""File helpers every stage shares: atomic writes and reading the project's tabular formats."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

import polars as pl
import yaml


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds, so a
    killed stage never leaves a half-written output behind."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_parquet(df: pl.DataFrame, path: str | os.PathLike[str], **kwargs: Any) -> None:
    with atomic_path(path) as tmp:
        df.write_parquet(tmp, compression="zstd", **kwargs)


def read_table(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Parquet, JSONL (.jsonl/.ndjson), JSON array (.json) or CSV, by extension."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(p)
    if suffix in {".jsonl", ".ndjson"}:
        return pl.read_ndjson(p, infer_schema_length=None)
    if suffix == ".json":
        return pl.DataFrame(json.loads(p.read_text(encoding="utf-8")), infer_schema_length=None)
    if suffix == ".csv":
        return pl.read_csv(p, infer_schema_length=None)
    raise ValueError(f"{p}: unknown table format {suffix!r} (use .parquet, .jsonl, .json or .csv)")


def load_config_arg(value: str | None) -> dict[str, Any]:
    """A stage's `--config`: inline JSON, or a path to a .json/.yaml file; absent -> {}."""
    if not value:
        return {}
    if value.lstrip().startswith("{"):
        data = json.loads(value)
    else:
        text = Path(value).read_text(encoding="utf-8")
        data = json.loads(text) if value.endswith(".json") else yaml.safe_load(text)
    if not isinstance(data, Mapping):
        raise ValueError(f"--config must be a JSON/YAML object, got {type(data).__name__}")
    return dict(data)
