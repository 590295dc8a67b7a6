"""Dataset stage: the normalized table -> Parquet shards per split + manifest.json (docs/workflow.md).

Shards are planned from the row count of each split (ceil(rows / rows_per_shard), at least one so
every split has a readable file with the schema), rows are ordered by study id, and each shard is a
pure function of (input, split, index, config). The workflow therefore writes one shard per job:
deleting one shard regenerates only that shard, and a rerun gives byte-identical files.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import polars as pl

from srrg import __version__
from srrg.config import config_hash
from srrg.errors import UserError
from srrg.io import atomic_path, is_id_column, list_files, parquet_schema, read_table, scan_parquet, write_text
from srrg.progress import tracked
from srrg.report import parse_report, render_sentences
from srrg.settings.dataset import DatasetConfig
from srrg.settings.splits import SPLITS
from srrg.shards import MANIFEST_NAME, PLAN_NAME, file_sha256, rebuild_hint, split_files
from srrg.sources.common import CONTEXT_SECTIONS, natural_key

SCHEMA_VERSION = 1
CHECKSUM_SUFFIX = ".sha256"  # beside each shard: its SHA-256 as the shard job wrote it
# the dataset contract (contracts: dataset); the EXTRA_COLUMNS and status columns follow when present
COLUMNS = (
    "study_id",
    "subject_id",
    "split",
    "image_paths",
    "view",
    "findings",
    "impression",
    "structured",
    "sentences",
    "provenance",
)
EXTRA_COLUMNS = (
    "image_views",
    "structured_raw",
    *CONTEXT_SECTIONS,  # the study's context (ingest)
    "study_datetime",
    "prior_study_id",
)
_LIST_COLUMNS = ("image_paths", "image_views")  # what read_shard reads for the whole split besides the ids
_ROW = "__row"  # read_shard's row number in the input file


def sentences_of(structured: str | None) -> str:
    """The render_sentences() text of a structured JSON string ("" when there is none)."""
    if not structured:
        return ""
    return render_sentences(parse_report(structured)[0])


def to_dataset_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The dataset_columns of a table with rows, ordered by study id (columns checked first, so a
    table without `split` is the one line naming it)."""
    columns = dataset_columns(df.columns)
    check_splits(df["split"])
    out = df.select(columns)
    return out[natural_order(out["study_id"])]


def dataset_columns(columns: Sequence[str]) -> list[str]:
    """Contract columns (without `sentences`, which shards add for their own rows), then
    the EXTRA_COLUMNS present and every *_status column."""
    needed = check_columns(columns)
    return [*needed, *(c for c in EXTRA_COLUMNS if c in columns), *sorted(c for c in columns if c.endswith("_status"))]


def check_columns(columns: Sequence[str]) -> list[str]:
    """The contract columns a dataset input must hold (all but `sentences`), or a UserError naming
    the missing ones."""
    needed = [c for c in COLUMNS if c != "sentences"]
    missing = [c for c in needed if c not in columns]
    if missing:
        raise UserError(f"dataset input lacks column(s) {missing}; expected the output of `srrg normalize`")
    return needed


def check_splits(splits: pl.Series) -> None:
    """The split column holds known splits only, and some rows."""
    if splits.len() == 0:
        raise UserError("the dataset input has no rows: nothing to shard (did ingest read any study?)")
    unknown = sorted(set(splits.unique().to_list()) - set(SPLITS))
    if unknown:
        raise UserError(f"unknown split value(s) {unknown}; expected {SPLITS}")


def natural_order(ids: pl.Series) -> list[int]:
    """Positions of the ids in natural_key order, ties in their given order (a stable sort). Ids
    that are all digits without a leading zero (MIMIC-CXR's) compare as their numbers, i.e. by
    (length, text): polars sorts those; any other id set is sorted by natural_key in Python."""
    if ids.dtype == pl.String and ids.null_count() == 0 and ids.str.contains(r"^[1-9][0-9]*$").all():
        keys = pl.DataFrame({"length": ids.str.len_bytes(), "id": ids}).with_row_index("position")
        return keys.sort("length", "id", maintain_order=True)["position"].to_list()
    values = ids.to_list()
    return sorted(range(len(values)), key=lambda i: natural_key(values[i]))


def scan_input(path: str | Path) -> pl.LazyFrame:
    """The normalized table as a LazyFrame. A Parquet file with a text `split` column and text ids
    is scanned, so a job decodes only the columns and rows it asks for; any other input is read
    whole by read_table (its checks and id handling)."""
    p = Path(path)
    if p.suffix.lower() == ".parquet" and p.is_file():
        try:
            schema = parquet_schema(p)
        except (pl.exceptions.PolarsError, OSError):
            schema = {}  # read_table names the problem
        if schema.get("split") == pl.String and all(t == pl.String for c, t in schema.items() if is_id_column(c)):
            return scan_parquet(p)
    return read_table(p).lazy()


def plan_input(path: str | Path, cfg: DatasetConfig) -> tuple[int, dict[str, Any]]:
    """(rows, plan) of the normalized table, read from its column names and `split` column alone,
    with the checks of to_dataset_frame."""
    frame = scan_input(path)
    check_columns(frame.collect_schema().names())
    splits = frame.select("split").collect()
    check_splits(splits["split"])
    return splits.height, make_plan(splits, cfg)


def read_shard(path: str | Path, split: str, index: int, rows_per_shard: int) -> pl.DataFrame:
    """One shard's rows, sentences rendered, equal to shard_frame's cut of the whole table while the
    texts of this shard's rows alone are decoded: the split's ids and list columns are read, ordered
    and sliced, then the other columns of those rows only. The list columns stay slices of the
    split's ordered columns, as in shard_frame: polars lays out a list column's Parquet pages from
    the array it is a slice of, so the shard keeps the bytes a job reading the whole table wrote."""
    frame = scan_input(path)
    names = frame.collect_schema().names()
    check_columns(names)
    lists = [c for c in _LIST_COLUMNS if c in names]
    keys = frame.with_row_index(_ROW).filter(pl.col("split") == split).select(_ROW, "study_id", "split", *lists)
    keys = shard_rows(keys.collect().pipe(lambda df: df[natural_order(df["study_id"])]), split, index, rows_per_shard)
    mine = pl.col(_ROW).is_in(keys[_ROW].implode())
    # only the row groups that hold them are decoded: ingest writes studies in id order, so the rows
    # of a shard lie close together in the file (normalize writes row groups of 10,000)
    first, last = (keys[_ROW].min(), keys[_ROW].max()) if keys.height else (0, -1)
    stretch = frame.with_row_index(_ROW).slice(first, last - first + 1)
    rows = stretch.filter(mine).drop(*lists).collect()  # in file order
    rows = rows[keys[_ROW].rank("ordinal") - 1].drop(_ROW)  # the keys' order: each row's place among them
    rows = rows.with_columns(keys[c] for c in lists)
    return with_sentences(rows.select(dataset_columns(rows.columns)))


def count_rows(path: str | Path) -> int:
    """Rows of a table; a Parquet file answers from its footer."""
    p = Path(path)
    if p.suffix.lower() == ".parquet" and p.is_file():
        try:
            return scan_parquet(p).select(pl.len()).collect().item()
        except (pl.exceptions.PolarsError, OSError):
            pass  # read_table names the problem
    return read_table(p).height


def with_sentences(df: pl.DataFrame) -> pl.DataFrame:
    """Add the rendered `sentences` column at its contract position (each distinct report rendered once)."""
    structured = df["structured"].to_list()
    rendered = {s: sentences_of(s) for s in set(structured)}
    sentences = pl.Series("sentences", [rendered[s] for s in structured], dtype=pl.Utf8)
    df = df.with_columns(sentences)
    rest = [c for c in df.columns if c not in COLUMNS]
    return df.select([*COLUMNS, *rest])


def plan_shards(split_rows: Mapping[str, int], rows_per_shard: int) -> dict[str, int]:
    """Number of shards per split: ceil(rows / rows_per_shard), at least one (an empty split still
    gets a file with the schema)."""
    if rows_per_shard < 1:
        raise UserError("dataset.rows_per_shard must be >= 1")
    return {s: max(1, math.ceil(split_rows.get(s, 0) / rows_per_shard)) for s in SPLITS}


def shard_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def shard_paths(out_dir: str | Path, plan: Mapping[str, Any]) -> list[Path]:
    """Every shard file a plan (from make_plan) names, split by split."""
    return [Path(out_dir) / f for f in plan["files"]]


def make_plan(df: pl.DataFrame, cfg: DatasetConfig) -> dict[str, Any]:
    """Rows and shard files per split: what the workflow needs to name the shard outputs."""
    rows = Counter(df["split"].to_list())
    shards = plan_shards(rows, cfg.rows_per_shard)
    return {
        "rows_per_shard": cfg.rows_per_shard,
        "splits": {s: {"rows": rows.get(s, 0), "shards": shards[s]} for s in SPLITS},
        "files": [f"{s}/{shard_name(i)}" for s in SPLITS for i in range(shards[s])],
    }


def checksum_path(shard: str | Path) -> Path:
    """The file beside a shard recording the SHA-256 its shard job wrote (docs/workflow.md)."""
    shard = Path(shard)
    return shard.with_name(shard.name + CHECKSUM_SUFFIX)


def read_plan(out_dir: str | Path) -> dict[str, Any]:
    """plan.json of a dataset folder as make_plan wrote it, or a UserError in one line (a truncated
    or hand-edited plan, a file name outside the split folders)."""
    path = Path(out_dir) / PLAN_NAME
    fix = "delete it and rerun `snakemake data` (or `srrg dataset-plan`)"
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; run `srrg dataset-plan` first") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserError(f"{path}: not a readable plan ({type(err).__name__}: {err}); {fix}") from None
    try:
        splits = {s: (int(plan["splits"][s]["rows"]), int(plan["splits"][s]["shards"])) for s in SPLITS}
        files = list(plan["files"])
        expected = [f"{s}/{shard_name(i)}" for s in SPLITS for i in range(splits[s][1])]
    except (KeyError, TypeError, ValueError) as err:
        raise UserError(f"{path}: not a dataset plan (missing or wrong {err}); {fix}") from None
    if files != expected:
        raise UserError(f"{path}: its files do not match its shard counts (expected {expected[:3]}...); {fix}")
    return plan


def remove_stale_shards(out_dir: str | Path, plan: Mapping[str, Any]) -> list[Path]:
    """Delete the part-*.parquet files (and their checksum files) an earlier plan left behind, so
    that a split folder holds exactly the planned shards."""
    planned = {p for shard in shard_paths(out_dir, plan) for p in (shard, checksum_path(shard))}
    found = [
        p
        for s in SPLITS
        for suffix in (".parquet", ".parquet" + CHECKSUM_SUFFIX)
        for p in list_files(Path(out_dir) / s, suffix=suffix, prefix="part-")
    ]
    stale = [p for p in found if p not in planned]
    for path in stale:
        path.unlink()
    return stale


def shard_frame(df: pl.DataFrame, split: str, index: int, rows_per_shard: int) -> pl.DataFrame:
    """Rows of one shard, sentences rendered, from a frame ordered by to_dataset_frame."""
    return with_sentences(shard_rows(df, split, index, rows_per_shard))


def shard_rows(df: pl.DataFrame, split: str, index: int, rows_per_shard: int) -> pl.DataFrame:
    """Rows of one shard: a slice of the split's rows in the frame's order (an empty split has one
    shard, holding the schema)."""
    part = df.filter(pl.col("split") == split)
    n_shards = max(1, math.ceil(part.height / rows_per_shard))
    if not 0 <= index < n_shards:
        raise UserError(f"split {split!r} has {n_shards} shard(s); index {index} does not exist")
    return part.slice(index * rows_per_shard, rows_per_shard)


def write_shard(df: pl.DataFrame, path: str | Path, cfg: DatasetConfig) -> None:
    """One Parquet shard, atomically, with the configured row groups and compression, and beside
    it the SHA-256 of the bytes written (`sha256sum -c` reads it). The manifest verifies each shard
    against it, so bytes changed after the shard job are never recorded as correct. The old
    checksum goes first: a job killed in between leaves a shard without one, which the manifest
    refuses, never a checksum that vouches for other bytes."""
    checksum_path(path).unlink(missing_ok=True)
    with atomic_path(path) as tmp:
        df.write_parquet(
            tmp,
            compression=cfg.compression,
            compression_level=cfg.compression_level if cfg.compression in {"zstd", "gzip"} else None,
            row_group_size=cfg.row_group_size,
            statistics=True,
        )
        digest = file_sha256(tmp)
    write_text(checksum_path(path), f"{digest}  {Path(path).name}\n")


def recorded_sha256(shard: Path, dataset_dir: Path) -> str:
    """The SHA-256 the shard job recorded beside `shard`, or a UserError saying how to rebuild it."""
    side = checksum_path(shard)
    rel = shard.relative_to(dataset_dir).as_posix()
    try:
        digest, name = side.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError, ValueError):
        why = "is missing" if not side.exists() else "is not a '<sha256>  <name>' line"
        raise UserError(
            f"{side} {why}, so shard {shard} cannot be verified; {rebuild_hint(dataset_dir, rel)}"
        ) from None
    if name != shard.name or len(digest) != 64:
        raise UserError(f"{side}: does not record {shard.name}'s SHA-256; {rebuild_hint(dataset_dir, rel)}")
    return digest


def build_manifest(
    out_dir: str | Path, plan: Mapping[str, Any], cfg: DatasetConfig, upstream: Mapping[str, Any]
) -> dict[str, Any]:
    """Counts and schema read back from the shards on disk, so the manifest describes what exists;
    each shard's bytes must be those its shard job recorded (write_shard): a shard replaced or
    edited since is a UserError naming it, never a manifest that blesses it."""
    out_dir = Path(out_dir)
    files = []
    statuses: dict[str, Counter[str]] = {}
    schema: dict[str, str] = {}
    for path in shard_paths(out_dir, plan):
        if not path.is_file():
            raise FileNotFoundError(f"shard {path} is missing; rerun the dataset stage")
        rel = path.relative_to(out_dir).as_posix()
        sha256 = file_sha256(path)
        if sha256 != recorded_sha256(path, out_dir):
            changed = f"changed since its shard job wrote it (SHA-256 differs from {checksum_path(path).name})"
            raise UserError(f"shard {path} {changed}; {rebuild_hint(out_dir, rel)}")
        shard = scan_parquet(path)  # the footer and the status columns: the texts are not decoded
        columns = shard.collect_schema()
        schema = schema or {k: str(v) for k, v in columns.items()}
        height = shard.select(pl.len()).collect().item()
        files.append({"path": rel, "split": path.parent.name, "rows": height, "sha256": sha256})
        for col in (c for c in columns.names() if c.endswith("_status")):
            counts = statuses.setdefault(col, Counter())
            for value, n in shard.select(pl.col(col).value_counts()).unnest(col).collect().iter_rows():
                counts[value if value is not None else "null"] += n
    rows = Counter()
    for f in files:
        rows[f["split"]] += f["rows"]
    for s in SPLITS:
        if rows[s] != plan["splits"][s]["rows"]:
            raise UserError(f"split {s}: shards hold {rows[s]} rows, the plan says {plan['splits'][s]['rows']}")
    settings = asdict(cfg)
    return {
        "schema_version": SCHEMA_VERSION,
        "created_by": f"srrg {__version__}",
        "rows": sum(rows.values()),
        "splits": {s: {"rows": rows[s], "shards": plan["splits"][s]["shards"]} for s in SPLITS},
        "files": files,
        "columns": schema,
        "statuses": {k: dict(sorted(v.items())) for k, v in sorted(statuses.items())},
        "config": settings,
        "upstream_config": dict(upstream),
        "config_hash": config_hash({"dataset": settings, "upstream": upstream}),
    }


def write_json(path: str | Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def write_dataset(
    df: pl.DataFrame, out_dir: str | Path, cfg: DatasetConfig, upstream: Mapping[str, Any], progress: bool = True
) -> dict[str, Any]:
    """All shards, the plan and the manifest in one call (the CLI's default mode)."""
    frame = to_dataset_frame(df)
    plan = make_plan(frame, cfg)
    remove_stale_shards(out_dir, plan)
    write_json(Path(out_dir) / PLAN_NAME, plan)
    for path in tracked(shard_paths(out_dir, plan), "shards", "shard", disable=not progress):
        index = int(path.stem.split("-")[1])
        write_shard(shard_frame(frame, path.parent.name, index, cfg.rows_per_shard), path, cfg)
    manifest = build_manifest(out_dir, plan, cfg, upstream)
    write_json(Path(out_dir) / MANIFEST_NAME, manifest)
    return manifest


def read_split(
    dataset_dir: str | Path, split: str, columns: Sequence[str] | None = None, lazy: bool = False
) -> pl.DataFrame | pl.LazyFrame:
    """The rows of one split of a dataset folder, sorted by study_id (a stable order for subsets and
    sharding): the one reader of the shards write_dataset writes. The shards are first checked
    against manifest.json (rows, SHA-256; srrg.shards.split_files), so a changed, missing or stray
    shard is a UserError naming it, never rows read in silence; a split without shards is one too.
    `columns` (study_id is always read) limits what is decoded; `lazy` returns the LazyFrame for
    callers that filter before collecting."""
    files = split_files(dataset_dir, split)
    if not files:
        raise UserError(f"no Parquet shards in {Path(dataset_dir) / split}")
    frame = pl.concat([scan_parquet(f) for f in files], how="diagonal_relaxed")
    if columns is not None:
        frame = frame.select("study_id", *(c for c in columns if c != "study_id"))
    frame = frame.with_columns(pl.col("study_id").cast(pl.String)).sort("study_id")
    return frame if lazy else frame.collect()


def summarize(manifest: Mapping[str, Any], rows_in: int, seconds: float) -> str:
    splits = " ".join(f"{s}={v['rows']}({v['shards']} shards)" for s, v in manifest["splits"].items())
    statuses = " ".join(
        f"{col}:" + ",".join(f"{k}={v}" for k, v in counts.items()) for col, counts in manifest["statuses"].items()
    )
    return f"dataset: rows in={rows_in} out={manifest['rows']} | {splits} | {statuses} | {seconds:.1f}s"


def run_dataset(
    inp: str | Path, out_dir: str | Path, cfg: DatasetConfig, upstream: Mapping[str, Any], progress: bool = True
) -> str:
    """The dataset stage in one job (plan, every shard, manifest): returns its summary line."""
    import time

    start = time.perf_counter()
    df = read_table(inp)
    manifest = write_dataset(df, out_dir, cfg, upstream, progress=progress)
    return summarize(manifest, df.height, time.perf_counter() - start)


def run_dataset_plan(inp: str | Path, out_dir: str | Path, cfg: DatasetConfig) -> str:
    """The dataset-plan stage: plan.json from the split column alone, shards no longer planned
    removed; returns its summary line."""
    rows, plan = plan_input(inp, cfg)
    stale = remove_stale_shards(out_dir, plan)
    write_json(Path(out_dir) / PLAN_NAME, plan)
    return f"dataset plan: rows in={rows} {json.dumps(plan['splits'])} stale removed={len(stale)}"


def run_dataset_shard(inp: str | Path, out_dir: str | Path, split: str, index: int, cfg: DatasetConfig) -> str:
    """The dataset-shard stage: one shard of one split written; returns its summary line."""
    part = read_shard(inp, split, index, cfg.rows_per_shard)
    write_shard(part, Path(out_dir) / split / shard_name(index), cfg)
    return f"dataset shard {split}/{shard_name(index)}: rows={part.height}"


def run_dataset_manifest(inp: str | Path, out_dir: str | Path, cfg: DatasetConfig, upstream: Mapping[str, Any]) -> str:
    """The dataset-manifest stage: manifest.json from the plan and the written shards' footers and
    status columns; returns its summary line."""
    import time

    start = time.perf_counter()
    rows_in = count_rows(inp)
    plan = read_plan(out_dir)
    manifest = build_manifest(out_dir, plan, cfg, upstream)
    write_json(Path(out_dir) / MANIFEST_NAME, manifest)
    return summarize(manifest, rows_in, time.perf_counter() - start)
