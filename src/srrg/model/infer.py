"""`srrg infer`: batched beam search over a dataset split; one predictions row per study.

Structured-First outputs are parsed (valid / repaired / unparseable, never raising) and rendered to
sentences for the NLG metrics; Sentence-Direct outputs are the sentences themselves. Studies outside
the view filter are kept with infer_status `view_filtered`; the scoring pairs file holds the rest.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import polars as pl
import torch

from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.io import read_parquet, write_parquet
from srrg.model.datamodule import ReportDataset, collate, reference_text, view_mask
from srrg.model.file import load_model
from srrg.model.images import log_image_source, resolve_images
from srrg.report import parse_report, render_sentences
from srrg.settings.model import InferConfig, check_decoding

log = logging.getLogger("srrg.infer")

OK, VIEW_FILTERED = "ok", "view_filtered"
POSITION = "position"  # a row's index in the one-worker predictions file (shard parts only)


def resolve_device(name: str) -> torch.device:
    return torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)


def prediction_fields(raw: str, target: str) -> dict[str, Any]:
    """raw text -> parse_status, structured JSON, sentences, and the text to score (`report`)."""
    if target == "json":
        report, status = parse_report(raw)
        structured = report.to_json()
        return {
            "parse_status": status,
            "structured": structured,
            "sentences": render_sentences(report),
            "report": structured,
        }
    return {"parse_status": None, "structured": None, "sentences": raw, "report": raw}


def scoring_pairs(preds: pl.DataFrame) -> pl.DataFrame:
    """The predicted studies with their reference, the parsed `report` and the `raw` output: the
    workflow scores `raw`, so a structured metric's parse rates are those of parse_status (the
    re-serialized `report` of an unparseable output is the empty report, which parses as valid)."""
    return preds.filter(pl.col("infer_status") == OK).select("study_id", "reference", "report", "raw")


def shard_span(n_items: int, batch_size: int, shards: int, index: int) -> range:
    """The items of shard `index` of `shards` (docs/model.md, "Sharded inference"): a contiguous
    run of whole batches of the one-worker order, so every batch, and with it every prediction,
    is the one a single worker computes."""
    if not 0 <= index < shards:
        raise UserError(f"--shard {index} is not one of the {shards} shards (infer.shards): 0..{shards - 1}")
    batches = -(-n_items // batch_size)
    lo, hi = index * batches // shards, (index + 1) * batches // shards
    return range(lo * batch_size, min(hi * batch_size, n_items))


PREDICTION_TYPES = {  # the generated columns, in the file's order
    "raw": pl.String,
    "candidates": pl.List(pl.String),
    "parse_status": pl.String,
    "structured": pl.String,
    "sentences": pl.String,
    "report": pl.String,
}


def run_infer(
    model_path: str | Path,
    dataset_dir: str | Path,
    out: str | Path,
    pairs_out: str | Path | None,
    cfg: InferConfig,
    shard: int | None = None,
) -> dict[str, Any]:
    """Write predictions (every selected study) and, if asked, the scoring pairs (study_id,
    reference, report, raw) of the predicted studies. With `shard` (of cfg.shards), `out` is that
    shard's part: its studies' rows (shard 0 also the view-filtered ones) with their POSITION in
    the one-worker file, for merge_predictions. Returns a summary."""
    start = time.perf_counter()
    device = resolve_device(cfg.device)
    net, data_cfg = load_model(model_path, device)
    try:
        check_decoding({"max_new_tokens": cfg.max_new_tokens}, net.cfg.max_target_tokens)  # the model file's own length
    except ValueError as err:
        raise UserError(str(err)) from None
    target = net.cfg.target
    rows = read_split(dataset_dir, cfg.split)
    total = rows.height
    if cfg.max_studies is not None:
        rows = rows.head(cfg.max_studies)
    rows = rows.with_columns(view_mask(rows, data_cfg.views).alias("_keep"))
    todo = rows.filter(pl.col("_keep")).to_dicts()
    span = range(len(todo)) if shard is None else shard_span(len(todo), cfg.batch_size, cfg.shards, shard)
    log.info(
        "predicting %d of %d %s studies (%d outside the view filter)%s",
        len(span),
        total,
        cfg.split,
        rows.height - len(todo),
        "" if shard is None else f", shard {shard} of {cfg.shards}",
    )
    images = resolve_images(data_cfg.images, data_cfg.image_root, (r.get("image_paths") for r in todo))
    log_image_source(images, data_cfg.image_root)
    dataset = ReportDataset(todo, target, images, data_cfg.image_root, net.cfg.encoder.image_size)
    results: dict[str, dict[str, Any]] = {}
    batches = range(span.start, span.stop, cfg.batch_size)
    for n, i in enumerate(batches, 1):
        batch = collate([dataset[j] for j in range(i, min(i + cfg.batch_size, span.stop))])
        texts = net.generate(batch["images"].to(device), cfg)
        for sid, cands in zip(batch["study_ids"], texts):
            results[sid] = {"raw": cands[0], "candidates": cands, **prediction_fields(cands[0], target)}
        if n % 10 == 0 or n == len(batches):  # plain lines: readable in log files (no progress bar)
            elapsed = time.perf_counter() - start
            log.info("infer: %d/%d studies, %.1f studies/s", len(results), len(span), len(results) / elapsed)
    records = []
    for position, row in enumerate(rows.iter_rows(named=True)):
        pred = results.get(row["study_id"])
        if shard is not None and pred is None and (row["_keep"] or shard != 0):
            continue  # another shard's study
        records.append(
            {
                "study_id": row["study_id"],
                "target": target,
                "infer_status": OK if row["_keep"] else VIEW_FILTERED,
                "images": images,
                "reference": reference_text(row, target),
                **{key: (pred or {}).get(key) for key in PREDICTION_TYPES},
                **({} if shard is None else {POSITION: position}),
            }
        )
    preds = pl.DataFrame(records, schema_overrides=PREDICTION_TYPES)
    write_parquet(preds, out)
    if pairs_out is not None:
        write_parquet(scoring_pairs(preds), pairs_out)
    statuses = preds["parse_status"].drop_nulls().value_counts().to_dicts()
    summary = {
        "studies": preds.height,
        "predicted": len(results),
        "images": images,
        "parse_status": {d["parse_status"]: d["count"] for d in statuses},
        "seconds": round(time.perf_counter() - start, 1),
    }
    log.info("infer: %s", summary)
    return summary


def run_infer_merge(parts: list[str | Path], out: str | Path, pairs_out: str | Path | None) -> dict[str, Any]:
    """The predictions file of one worker from the parts of `srrg infer --shard` (any order):
    rows in POSITION order, the column dropped. Parts that do not hold each position once (a
    part missing, twice, or of another run) are a UserError."""
    frames = [read_parquet(p) for p in parts]
    for path, frame in zip(parts, frames):
        if POSITION not in frame.columns:
            raise UserError(f"{path}: not a part written by `srrg infer --shard` (no {POSITION} column)")
    merged = pl.concat(frames, how="vertical").sort(POSITION)
    if merged[POSITION].to_list() != list(range(merged.height)):
        raise UserError(f"the {len(parts)} parts do not hold each study once: pass every shard of one infer run")
    preds = merged.drop(POSITION).rechunk()
    write_parquet(preds, out)
    if pairs_out is not None:
        write_parquet(scoring_pairs(preds), pairs_out)
    return {"studies": preds.height, "parts": len(parts)}
