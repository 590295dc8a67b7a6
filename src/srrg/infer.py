"""`srrg infer`: batched beam search over a dataset split; one predictions row per study.

Structured-First outputs are parsed (valid / repaired / unparseable, never raising) and rendered to
sentences for the NLG metrics; Sentence-Direct outputs are the sentences themselves. Studies outside
the view filter are kept with infer_status `view_filtered`; the scoring pairs file holds the rest.
"""

from __future__ import annotations

import logging
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import polars as pl
import torch

from srrg.config import doc, from_dict, load_section
from srrg.errors import UserError
from srrg.io import write_parquet
from srrg.model.config import DataConfig, ModelConfig, check_decoding
from srrg.model.datamodule import ReportDataset, collate, read_split, reference_text, view_mask
from srrg.model.images import log_image_source, resolve_images
from srrg.model.network import ReportGenerator
from srrg.report import parse_report, render_sentences

log = logging.getLogger("srrg.infer")

OK, VIEW_FILTERED = "ok", "view_filtered"


@dataclass(frozen=True)
class InferConfig:
    """Beam search and subset settings (the `infer` config slice)."""

    num_beams: int = field(default=3, metadata=doc("Beam width.", minimum=1))
    num_return_sequences: int = field(default=1, metadata=doc("Candidates kept per study (the first is scored).", minimum=1))
    max_new_tokens: int = field(
        default=512, metadata=doc("At least train.model.max_target_tokens, so long JSON reports are not cut.", minimum=1)
    )
    batch_size: int = field(default=4, metadata=doc("Studies per batch.", minimum=1))
    split: str = field(default="test", metadata=doc("Dataset split to predict.", enum=["train", "validate", "test"]))
    max_studies: int | None = field(default=None, metadata=doc("First N studies of the split by study id; null = all.", minimum=1))
    device: str = field(default="auto", metadata=doc("auto | cpu | cuda | cuda:N"))

    def __post_init__(self) -> None:
        check_decoding({"num_beams": self.num_beams, "num_return_sequences": self.num_return_sequences})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> InferConfig:
        """Validate against the `infer` schema section (ranges, allowed splits), then type it."""
        return from_dict(cls, load_section(data, "infer"), "infer")


def resolve_device(name: str) -> torch.device:
    return torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)


def load_model(path: str | Path, device: torch.device) -> tuple[ReportGenerator, DataConfig]:
    """Rebuild the network from an exported model file (the frozen LLM is reloaded from its source).
    A file that is not one (truncated, another format) is a UserError naming it, not a traceback."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=False)
    except (pickle.UnpicklingError, EOFError, ValueError, RuntimeError, AttributeError, ImportError) as exc:
        raise UserError(f"cannot read model file {path}: {exc} (expected a file written by srrg train)") from exc
    missing = [k for k in ("model_config", "state_dict", "data_config") if not isinstance(blob, dict) or k not in blob]
    if missing:
        raise UserError(f"model file {path} lacks {', '.join(missing)} (expected a file written by srrg train)")
    net = ReportGenerator(from_dict(ModelConfig, blob["model_config"], "model"), vocab=blob.get("vocab"),
                          findings=blob.get("findings"))
    net.load_exported(blob["state_dict"])
    return net.to(device).eval(), from_dict(DataConfig, blob["data_config"], "data")


def prediction_fields(raw: str, target: str) -> dict[str, Any]:
    """raw text -> parse_status, structured JSON, sentences, and the text to score (`report`)."""
    if target == "json":
        report, status = parse_report(raw)
        structured = report.to_json()
        return {"parse_status": status, "structured": structured, "sentences": render_sentences(report), "report": structured}
    return {"parse_status": None, "structured": None, "sentences": raw, "report": raw}


def scoring_pairs(preds: pl.DataFrame) -> pl.DataFrame:
    """The predicted studies with their reference, the parsed `report` and the `raw` output: the
    workflow scores `raw`, so a structured metric's parse rates are those of parse_status (the
    re-serialized `report` of an unparseable output is the empty report, which parses as valid)."""
    return preds.filter(pl.col("infer_status") == OK).select("study_id", "reference", "report", "raw")


def run_infer(
    model_path: str | Path, dataset_dir: str | Path, out: str | Path, pairs_out: str | Path | None, cfg: InferConfig
) -> dict[str, Any]:
    """Write predictions (every selected study) and, if asked, the scoring pairs (study_id,
    reference, report, raw) of the predicted studies. Returns a summary."""
    start = time.perf_counter()
    device = resolve_device(cfg.device)
    net, data_cfg = load_model(model_path, device)
    check_decoding({"max_new_tokens": cfg.max_new_tokens}, net.cfg.max_target_tokens)  # the model file's own length
    target = net.cfg.target
    rows = read_split(dataset_dir, cfg.split)
    total = rows.height
    if cfg.max_studies is not None:
        rows = rows.head(cfg.max_studies)
    rows = rows.with_columns(view_mask(rows, data_cfg.views).alias("_keep"))
    todo = rows.filter(pl.col("_keep")).to_dicts()
    log.info("predicting %d of %d %s studies (%d outside the view filter)", len(todo), total, cfg.split, rows.height - len(todo))
    images = resolve_images(data_cfg.images, data_cfg.image_root, (r.get("image_paths") for r in todo))
    log_image_source(images, data_cfg.image_root)
    dataset = ReportDataset(todo, target, images, data_cfg.image_root, net.cfg.encoder.image_size)
    results: dict[str, dict[str, Any]] = {}
    batches = range(0, len(dataset), cfg.batch_size)
    for n, i in enumerate(batches, 1):
        batch = collate([dataset[j] for j in range(i, min(i + cfg.batch_size, len(dataset)))])
        texts = net.generate(batch["images"].to(device), cfg.num_beams, cfg.num_return_sequences, cfg.max_new_tokens)
        for sid, cands in zip(batch["study_ids"], texts):
            results[sid] = {"raw": cands[0], "candidates": cands, **prediction_fields(cands[0], target)}
        if n % 10 == 0 or n == len(batches):  # plain lines: readable in log files (no progress bar)
            elapsed = time.perf_counter() - start
            log.info("infer: %d/%d studies, %.1f studies/s", len(results), len(dataset), len(results) / elapsed)
    records = []
    for row in rows.iter_rows(named=True):
        pred = results.get(row["study_id"], {})
        records.append({
            "study_id": row["study_id"],
            "target": target,
            "infer_status": OK if row["_keep"] else VIEW_FILTERED,
            "images": images,
            "reference": reference_text(row, target),
            "raw": pred.get("raw"),
            "candidates": pred.get("candidates"),
            "parse_status": pred.get("parse_status"),
            "structured": pred.get("structured"),
            "sentences": pred.get("sentences"),
            "report": pred.get("report"),
        })
    schema = {"candidates": pl.List(pl.String), "raw": pl.String, "parse_status": pl.String,
              "structured": pl.String, "sentences": pl.String, "report": pl.String}
    preds = pl.DataFrame(records, schema_overrides=schema)
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
