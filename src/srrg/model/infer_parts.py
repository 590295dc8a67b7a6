"""The predictions a run writes, as files: the scoring pairs of a predictions file and the merge of
the parts of a sharded run (docs/model.md, "Sharded inference"). Polars only, so that `srrg
infer-merge` starts without loading torch and Lightning (each demo run merges its parts once)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_parquet, write_parquet
from srrg.settings.model import SAMPLE_ID

OK, VIEW_FILTERED = "ok", "view_filtered"
POSITION = "position"  # a row's index in the one-worker predictions file (shard parts only)
PART_KEY = "srrg_infer_part"  # a part's Parquet metadata: its run identity, row total, shard and shards


def scoring_pairs(preds: pl.DataFrame) -> pl.DataFrame:
    """The predicted studies with their reference, the parsed `report` and the `raw` output: the
    workflow scores `raw`, so a structured metric's parse rates are those of parse_status (the
    re-serialized `report` of an unparseable output is the empty report, which parses as valid).
    Per-image predictions lead with their sample_id, the key they are scored by (each image against
    its study's reference)."""
    keys = [SAMPLE_ID] if SAMPLE_ID in preds.columns else []
    return preds.filter(pl.col("infer_status") == OK).select(*keys, "study_id", "reference", "report", "raw")


def read_part(path: str | Path) -> tuple[dict[str, Any], pl.DataFrame]:
    """One part of `srrg infer --shard`: its identity (PART_KEY) and rows, checked to be what that
    command writes (an integer POSITION column, the identity's fields); else a UserError naming it."""
    try:
        with open(path, "rb") as fh:
            meta = json.loads(pl.read_parquet_metadata(fh).get(PART_KEY) or "null")
    except (OSError, ValueError, pl.exceptions.PolarsError):
        meta = None
    frame = read_parquet(path)
    fields = {"run": str, "rows": int, "shard": int, "shards": int}
    if not isinstance(meta, dict) or any(not isinstance(meta.get(k), t) for k, t in fields.items()):
        raise UserError(f"{path}: not a part written by `srrg infer --shard` (no run identity in its metadata)")
    if POSITION not in frame.columns or not frame.schema[POSITION].is_integer():
        raise UserError(f"{path}: not a part written by `srrg infer --shard` (no integer {POSITION} column)")
    return meta, frame


def check_parts(parts: Sequence[str | Path], metas: Sequence[dict[str, Any]]) -> None:
    """Every shard of one run, each once: the same run identity and row total in all, shards
    0..shards-1 with none missing, extra or given twice. A failure is one UserError line."""
    first = metas[0]
    for path, meta in zip(parts, metas):
        if (meta["run"], meta["rows"], meta["shards"]) != (first["run"], first["rows"], first["shards"]):
            raise UserError(
                f"{path} is a part of another infer run than {parts[0]} (model file, infer settings or dataset "
                "differ): pass the parts of one run"
            )
    seen: dict[int, str | Path] = {}
    for path, meta in zip(parts, metas):
        if not 0 <= meta["shard"] < first["shards"]:
            raise UserError(f"{path}: shard {meta['shard']} is not one of the run's {first['shards']} shards")
        if meta["shard"] in seen:
            raise UserError(f"{path} and {seen[meta['shard']]} are both shard {meta['shard']}: pass each part once")
        seen[meta["shard"]] = path
    missing = sorted(set(range(first["shards"])) - set(seen))
    if missing:
        raise UserError(
            f"shard(s) {', '.join(map(str, missing))} of {first['shards']} missing: the merge needs every part of "
            "the run (a smaller test set would be scored)"
        )


def run_infer_merge(parts: list[str | Path], out: str | Path, pairs_out: str | Path | None) -> dict[str, Any]:
    """The predictions file of one worker from the parts of `srrg infer --shard` (any order):
    rows in POSITION order, the column dropped. Parts of another run (model file, settings, dataset),
    a part missing, extra or twice, or rows that do not hold each of the run's positions once are a
    UserError: the merge never writes a silently smaller or mixed test set."""
    read = [read_part(p) for p in parts]
    metas = [meta for meta, _ in read]
    check_parts(parts, metas)
    try:
        merged = pl.concat([frame for _, frame in read], how="vertical").sort(POSITION)
    except pl.exceptions.PolarsError as err:
        raise UserError(f"the {len(parts)} parts do not share one schema ({str(err).splitlines()[0]})") from None
    if merged[POSITION].to_list() != list(range(metas[0]["rows"])):
        raise UserError(
            f"the {len(parts)} parts do not hold each of the run's {metas[0]['rows']} rows once: pass every shard "
            "of one infer run"
        )
    preds = merged.drop(POSITION).rechunk()
    write_parquet(preds, out)
    if pairs_out is not None:
        write_parquet(scoring_pairs(preds), pairs_out)
    return {"studies": preds.height, "parts": len(parts)}
