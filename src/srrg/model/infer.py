"""`srrg infer`: batched beam search over a dataset split; one predictions row per study, or per
image of each study (infer.samples: image, docs/model.md "Per-image test sets").

Structured-First outputs are parsed (valid / repaired / unparseable, never raising) and rendered to
sentences for the NLG metrics; Sentence-Direct outputs are the sentences themselves. Studies outside
the view filter are kept with infer_status `view_filtered`; the scoring pairs file holds the rest.
Each row's `context` is the prompt text its prediction was made from (model.context indication /
prior_report lines, then the finding line of model.context.findings; null when every study reads
the fixed prompt), so a reader sees what the model read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import polars as pl
import torch
from torch.utils.data import DataLoader, Subset

from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.io import write_parquet
from srrg.model.datamodule import (
    ReportDataset,
    collate,
    image_rows,
    open_cache,
    reference_text,
    study_contexts,
    worker_count,
)
from srrg.model.file import dataset_digest, load_model
from srrg.model.images import log_image_source, resolve_images
from srrg.model.infer_parts import OK, PART_KEY, POSITION, VIEW_FILTERED, scoring_pairs
from srrg.report import parse_report, render_sentences
from srrg.settings.model import SAMPLE_ID, InferConfig, check_decoding
from srrg.shards import file_sha256
from srrg.srrg_text import parse_srrg

log = logging.getLogger("srrg.infer")

IMAGE_COLUMNS = (SAMPLE_ID, "image_path", "view")  # what a per-image prediction adds after study_id


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
    if target == "srrg":  # SRRG text read back (srrg.srrg_text); `report` stays the text SRR-BERT and S-Score read
        read = parse_srrg(raw)
        return {
            "parse_status": read.status,
            "structured": read.report.to_json(),
            "sentences": render_sentences(read.report),
            "report": raw,
        }
    return {"parse_status": None, "structured": None, "sentences": raw, "report": raw}


def infer_samples(rows: list[dict[str, Any]], views: Sequence[str] | None, samples: str) -> list[dict[str, Any]]:
    """What infer predicts from the selected studies (infer.samples), in study order, each with
    `_keep` (inside the view filter, data.views). study: each study once (its first image). image:
    each recorded image (srrg.model.datamodule.image_rows) with its sample_id, image_path and view;
    images outside the view filter stay, not kept, so every image is accounted for."""
    out = []
    for row in rows:
        for sample in image_rows(row) if samples == "image" else [row]:
            keep = views is None or sample.get("view") in views
            if samples == "image":
                index = sample.get("image_index")
                paths = sample.get("image_paths") or [None]
                sample = {
                    **sample,
                    SAMPLE_ID: row["study_id"] if index is None else f"{row['study_id']}/{index}",
                    "image_path": paths[0],
                }
            out.append({**sample, "_keep": keep})
    return out


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


def run_identity(model_path: str | Path, dataset_dir: str | Path, cfg: InferConfig) -> str:
    """The identity of one infer run that every shard part records (docs/model.md, "Safety and
    identity"): the model file's SHA-256, the infer settings that shape the predictions (all but
    how many shards run them) and the dataset's digest. Parts of different runs never merge."""
    settings = {k: v for k, v in asdict(cfg).items() if k != "shards"}
    blob = {"model": file_sha256(model_path), "infer": settings, "dataset": dataset_digest(dataset_dir)}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def run_infer(
    model_path: str | Path,
    dataset_dir: str | Path,
    out: str | Path,
    pairs_out: str | Path | None,
    cfg: InferConfig,
    shard: int | None = None,
) -> dict[str, Any]:
    """Write predictions (every sample of the selected studies: infer_samples) and, if asked, the
    scoring pairs (scoring_pairs) of the predicted ones. With `shard` (of cfg.shards), `out` is that
    shard's part: its samples' rows (shard 0 also the view-filtered ones) with their POSITION in
    the one-worker file, for merge_predictions. Returns a summary."""
    start = time.perf_counter()
    device = resolve_device(cfg.device)
    net, data_cfg = load_model(model_path, device)
    try:
        check_decoding({"max_new_tokens": cfg.max_new_tokens}, net.cfg.max_target_tokens)  # the model file's own length
    except ValueError as err:
        raise UserError(str(err)) from None
    target = net.cfg.target
    split = read_split(dataset_dir, cfg.split)
    total = split.height
    rows = split if cfg.max_studies is None else split.head(cfg.max_studies)
    samples = infer_samples(rows.to_dicts(), data_cfg.views, cfg.samples)
    todo = [s for s in samples if s["_keep"]]
    span = range(len(todo)) if shard is None else shard_span(len(todo), cfg.batch_size, cfg.shards, shard)
    log.info(
        "predicting %d %s samples of %d of %d %s studies (%d outside the view filter)%s",
        len(span),
        cfg.samples,
        rows.height,
        total,
        cfg.split,
        len(samples) - len(todo),
        "" if shard is None else f", shard {shard} of {cfg.shards}",
    )
    images = resolve_images(data_cfg.images, data_cfg.image_root, (r.get("image_paths") for r in todo))
    log_image_source(images, data_cfg.image_root)
    size = net.cfg.encoder.image_size
    cache = open_cache(dataset_dir, [cfg.split], size) if images == "real" else None
    contexts, context_counts = study_contexts(todo, split, net.cfg.context, target)  # priors from the whole split
    dataset = ReportDataset(todo, target, images, data_cfg.image_root, size, cache, net.cfg.context.views, contexts)
    results: dict[int, dict[str, Any]] = {}  # index in todo -> its prediction
    batches = range(span.start, span.stop, cfg.batch_size)
    # the batches of the loop without workers, in order: workers only read images ahead
    workers = worker_count(cfg.num_workers)
    loader = DataLoader(Subset(dataset, span), batch_size=cfg.batch_size, num_workers=workers, collate_fn=collate)
    for n, (i, batch) in enumerate(zip(batches, loader, strict=True), 1):
        items = range(i, min(i + cfg.batch_size, span.stop))
        present = batch["present"].to(device) if "present" in batch else None  # model.context.views
        texts, prompts = net.generate_with_prompts(batch["images"].to(device), cfg, present, batch.get("contexts"))
        for k, (j, cands) in enumerate(zip(items, texts)):
            read = None if prompts is None else prompts[k]
            results[j] = {"raw": cands[0], "candidates": cands, "context": read, **prediction_fields(cands[0], target)}
        if n % 10 == 0 or n == len(batches):  # plain lines: readable in log files (no progress bar)
            elapsed = time.perf_counter() - start
            log.info("infer: %d/%d samples, %.1f samples/s", len(results), len(span), len(results) / elapsed)
    records = []
    kept = -1  # index in todo of the last kept sample
    for position, row in enumerate(samples):
        kept += row["_keep"]
        pred = results.get(kept) if row["_keep"] else None
        if shard is not None and pred is None and (row["_keep"] or shard != 0):
            continue  # another shard's sample
        records.append(
            {
                "study_id": row["study_id"],
                **({k: row[k] for k in IMAGE_COLUMNS} if cfg.samples == "image" else {}),
                "target": target,
                "infer_status": OK if row["_keep"] else VIEW_FILTERED,
                "images": images,
                "reference": reference_text(row, target),
                "context": (pred or {}).get("context"),
                **{key: (pred or {}).get(key) for key in PREDICTION_TYPES},
                **({} if shard is None else {POSITION: position}),
            }
        )
    image_types = dict.fromkeys(IMAGE_COLUMNS, pl.String) if cfg.samples == "image" else {}
    # the whole schema, so a shard part without a batch (more shards than batches) has its columns
    schema = {
        "study_id": pl.String,
        **image_types,
        **dict.fromkeys(("target", "infer_status", "images", "reference", "context"), pl.String),
        **PREDICTION_TYPES,
        **({} if shard is None else {POSITION: pl.Int64}),
    }
    preds = pl.DataFrame(records, schema=schema)
    metadata = None  # a part records its run for infer-merge (run_infer_merge); the predictions file nothing
    if shard is not None:
        part = {"run": run_identity(model_path, dataset_dir, cfg), "rows": len(samples), "shard": shard}
        metadata = {PART_KEY: json.dumps({**part, "shards": cfg.shards})}
    write_parquet(preds, out, metadata=metadata)
    if pairs_out is not None:
        write_parquet(scoring_pairs(preds), pairs_out)
    statuses = preds["parse_status"].drop_nulls().value_counts().to_dicts()
    summary = {
        "studies": rows.height,
        "samples": cfg.samples,
        "rows": preds.height,
        "predicted": len(results),
        "images": images,
        "parse_status": {d["parse_status"]: d["count"] for d in statuses},
        **({"context": context_counts} if context_counts else {}),
        "seconds": round(time.perf_counter() - start, 1),
    }
    log.info("infer: %s", summary)
    return summary
