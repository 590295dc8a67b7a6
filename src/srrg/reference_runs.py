"""`srrg reference-runs`: the reference rows of Table 1 as ordinary runs (docs/model.md, "Tables").

Constant (the most frequent training report, predicted for every study) and Ceiling (each reference
after the phantom render -> read round trip, docs/phantom.md) are predictions no model made. They are
written in the layout of `srrg infer` (predictions.parquet and pairs.parquet) on the test studies of
the Structured-First run with the most scored studies, so the ordinary `srrg score` scores them with
the runs' metrics and settings, and `srrg tables` only lays out their summaries.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet
from srrg.report import StructuredReport, from_obj, parse_report, render_sentences
from srrg.settings.model import SAMPLE_ID

log = logging.getLogger("srrg.reference_runs")

CONSTANT, CEILING = "constant", "ceiling"
# run name -> its Table 1 label
LABELS = {CONSTANT: "Constant (most frequent training report)", CEILING: "Ceiling (phantom round trip)"}
# run name -> the images its predictions are made from (the predictions' `images` column): Constant
# looks at none; Ceiling is the phantom round trip, so it stands beside runs that saw phantoms only
IMAGES: dict[str, str | None] = {CONSTANT: None, CEILING: "phantom"}
CAPTION = (
    "Constant: the most frequent training report for every study; Ceiling: each reference after the "
    "phantom render -> read round trip (an upper bound; docs/phantom.md)."
)
PAIRS_COLUMNS = ("study_id", "reference", "report", "raw")


def base_run(studies: Mapping[str, int]) -> str:
    """The run whose test studies the reference runs are scored on: of the Structured-First runs
    (name -> scored studies, in run order), the one with the most scored studies, the first on ties
    (a slow CPU LLM run may predict fewer studies than the baseline)."""
    if not studies:
        raise UserError("no Structured-First run to take the reference runs' test studies from")
    return max(studies, key=lambda name: studies[name])


def most_frequent_report(structured: Sequence[str]) -> StructuredReport:
    """The most frequent report of a split (ties: the smallest JSON string): the best a model that
    ignores the image can do by copying one report."""
    counts = Counter(structured)
    if not counts:
        raise UserError("the training split has no structured reports to take the Constant run from")
    best = min(counts, key=lambda text: (-counts[text], text))
    return from_obj(json.loads(best))[0]


def training_reports(dataset: str | Path) -> list[str]:
    """The structured reports (JSON) of the training split (srrg.dataset.read_split: the shards are
    checked against the manifest)."""
    from srrg.dataset import read_split

    return read_split(dataset, "train", columns=["structured"])["structured"].drop_nulls().to_list()


def reference_reports(refs: Sequence[str], constant: StructuredReport) -> dict[str, list[StructuredReport]]:
    """Run name -> its predicted report for each reference (JSON strings)."""
    from srrg.phantom import visible_report

    return {CONSTANT: [constant] * len(refs), CEILING: [visible_report(parse_report(r)[0]) for r in refs]}


def predictions_frame(pairs: pl.DataFrame, reports: Sequence[StructuredReport], images: str | None) -> pl.DataFrame:
    """Predictions in the layout of `srrg infer` (docs/model.md): every study `ok`, the report's JSON
    as raw, structured and scored text. parse_status is null: the reports are written, not
    generated, so there is no output to parse (Table 1 shows their parse rates as "-"). Pairs of a
    per-image run keep their sample_id (infer.samples: image), the key they are scored by."""
    texts = [r.to_json() for r in reports]
    n = pairs.height
    return pl.DataFrame(
        {
            "study_id": pairs["study_id"].cast(pl.String),
            **({SAMPLE_ID: pairs[SAMPLE_ID].cast(pl.String)} if SAMPLE_ID in pairs.columns else {}),
            "target": ["json"] * n,
            "infer_status": ["ok"] * n,
            "images": [images] * n,
            "reference": pairs["reference"],
            "raw": texts,
            "candidates": [[t] for t in texts],
            "parse_status": [None] * n,
            "structured": texts,
            "sentences": [render_sentences(r) for r in reports],
            "report": texts,
        },
        schema_overrides={"images": pl.String, "parse_status": pl.String, "candidates": pl.List(pl.String)},
    )


def read_pairs(path: str | Path) -> pl.DataFrame:
    """A run's pairs.parquet (written by `srrg infer`): the studies it scored, with their references."""
    pairs = read_table(path)
    missing = [c for c in ("study_id", "reference") if c not in pairs.columns]
    if missing:
        raise UserError(f"{path}: lacks column(s) {missing}; expected the pairs.parquet of `srrg infer`")
    return pairs


def run_reference_runs(pairs_paths: Sequence[str | Path], dataset: str | Path, out_dir: str | Path) -> dict[str, int]:
    """Write <out_dir>/constant/ and <out_dir>/ceiling/ (predictions.parquet, pairs.parquet) on the
    studies of the base run among the given Structured-First runs' pairs files; returns run name ->
    studies written."""
    runs = {str(p): read_pairs(p) for p in pairs_paths}
    base = base_run({name: df.height for name, df in runs.items()})
    pairs = runs[base]
    if pairs.is_empty():
        raise UserError(f"{base}: no scored studies to write the reference runs on")
    constant = most_frequent_report(training_reports(dataset))
    written = {}
    for name, reports in reference_reports(pairs["reference"].to_list(), constant).items():
        preds = predictions_frame(pairs, reports, IMAGES[name])
        write_parquet(preds, Path(out_dir) / name / "predictions.parquet")
        keys = [SAMPLE_ID] if SAMPLE_ID in preds.columns else []
        write_parquet(preds.select(*keys, *PAIRS_COLUMNS), Path(out_dir) / name / "pairs.parquet")
        written[name] = preds.height
    log.info("reference runs on the %d studies of %s: %s", pairs.height, base, ", ".join(written))
    return written
