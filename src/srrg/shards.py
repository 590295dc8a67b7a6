"""Checking a dataset's shards against manifest.json before reading them (docs/workflow.md).

The manifest records each shard's rows and SHA-256. A reader (train, infer) checks the shards of
the split it reads once per job: a changed, truncated, corrupt, missing or stray shard is a
UserError that names the file and how to rebuild it, never rows read in silence. Hashing costs
about a second per GB, small next to loading a model.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import list_files, scan_parquet
from srrg.settings.splits import SPLITS

MANIFEST_NAME = "manifest.json"
PLAN_NAME = "plan.json"
_SHARD = re.compile(rf"({'|'.join(SPLITS)})/part-(\d{{5}})\.parquet")


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def rebuild_hint(dataset_dir: Path, rel: str) -> str:
    """How to rebuild one shard: the workflow, or the dataset-shard command for its split and index."""
    hint = "delete it and rerun the workflow (`snakemake data` rebuilds that shard and the manifest)"
    m = _SHARD.fullmatch(rel)
    if m:
        command = f"srrg dataset-shard --in <normalized.parquet> --out-dir {dataset_dir} {m[1]} {int(m[2])}"
        hint += f", or `{command}` and `srrg dataset-manifest`"
    return hint


def _rows(path: Path, hint: str) -> int:
    """Rows in a shard's footer, or a UserError naming it (truncated, not Parquet)."""
    try:
        return scan_parquet(path).select(pl.len()).collect().item()
    except (pl.exceptions.PolarsError, OSError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"shard {path} is not readable Parquet ({reason}); {hint}") from None


def split_files(dataset_dir: str | Path, split: str) -> list[Path]:
    """The shard files of one split, checked against manifest.json: each listed shard exists, holds
    the recorded rows and (for manifests that record it) the recorded SHA-256, and the split folder
    holds no shard the manifest does not list. A failed check is a UserError naming the shard and
    how to rebuild it. A folder without manifest.json (shards written by hand) gives its split
    folder's Parquet files; one that holds plan.json without a manifest is a build that did not
    finish, and an error."""
    root = Path(dataset_dir)
    manifest_path = root / MANIFEST_NAME
    if not manifest_path.is_file():
        if (root / PLAN_NAME).exists():
            raise UserError(
                f"{root}: holds {PLAN_NAME} but no {MANIFEST_NAME}, so its build did not finish (shards may be "
                "missing or stale); rerun `snakemake data` (or `srrg dataset-manifest`) to complete it"
            )
        files = list_files(root / split, suffix=".parquet")
        for path in files:
            _rows(path, "a hand-written shard: write it again")
        return files
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        listed = [(f["path"], f["rows"], f.get("sha256")) for f in manifest["files"] if f["split"] == split]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as err:
        problem = f"{type(err).__name__}: {err}"
        fix = "delete it and rerun `snakemake data`"
        raise UserError(f"{manifest_path}: not a dataset manifest ({problem}); {fix}") from None
    paths = []
    fix = "delete manifest.json and rerun `snakemake data`"
    for rel, rows, sha256 in listed:
        if not (isinstance(rel, str) and _SHARD.fullmatch(rel) and rel.startswith(f"{split}/")):
            where = "<split>/part-NNNNN.parquet inside the dataset folder"
            raise UserError(f"{manifest_path}: {rel!r} is not a shard of split {split} ({where}); {fix}")
        if root / rel in paths:
            raise UserError(f"{manifest_path}: shard {rel} is listed twice (its rows would be read twice); {fix}")
        path = root / rel
        if not path.is_file():
            raise UserError(f"shard {path} is missing; rerun `snakemake data` to rebuild it")
        if sha256 is not None and file_sha256(path) != sha256:
            problem = "does not match manifest.json (SHA-256 differs: changed or corrupt)"
            raise UserError(f"shard {path} {problem}; {rebuild_hint(root, rel)}")
        found = _rows(path, rebuild_hint(root, rel))
        if found != rows:
            raise UserError(f"shard {path} holds {found} rows, manifest.json says {rows}; {rebuild_hint(root, rel)}")
        paths.append(path)
    unlisted = sorted(set(list_files(root / split, suffix=".parquet")) - set(paths))
    if unlisted:
        why = "a stray or copied shard would duplicate rows"
        raise UserError(f"{unlisted[0]} is not listed in {manifest_path} ({why}); remove it")
    return paths
