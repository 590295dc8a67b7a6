"""Ingest stage: a source collection -> studies.parquet, one row per study (docs/workflow.md).

What every source shares: the table schema, the splits, the limit and the summary; each source's
rows live in its module (srrg.sources.iu_xray, srrg.sources.mimic_cxr, srrg.sources.srrg), and the settings of all of
them in srrg.settings.ingest. Every
study a source names is a row; `ingest_status` says why a study has no usable report
(no_report, no_sections, invalid_xml) or no images (no_images, missing_images). Collections without an official
split (IU X-ray) get a seeded split computed from the patient id, so it does not depend on the
order of files or on `limit`; a MIMIC-CXR study missing from its split file takes its patient's
official split, and only a patient missing from it altogether gets the seeded one. The context
sections (indication, technique, comparison) are columns with a `<name>_status` each, and a dated
study links to its patient's previous study (srrg.sources.priors).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.settings.ingest import IngestConfig, SplitConfig
from srrg.settings.splits import SPLITS
from srrg.sources import iu_xray, mimic_cxr, srrg
from srrg.sources.common import CONTEXT_SECTIONS, NO_REPORT, context_columns, natural_key
from srrg.sources.priors import link_priors

OFFICIAL, PATIENT, SEEDED = "official", "patient", "seeded"

SCHEMA: dict[str, Any] = {
    "study_id": pl.Utf8,
    "subject_id": pl.Utf8,
    "split": pl.Utf8,
    "split_source": pl.Utf8,
    "source": pl.Utf8,
    "image_paths": pl.List(pl.Utf8),
    "image_views": pl.List(pl.Utf8),
    "view": pl.Utf8,
    "findings": pl.Utf8,
    "impression": pl.Utf8,
    "ingest_status": pl.Utf8,
    **{c: pl.Utf8 for name in CONTEXT_SECTIONS for c in (name, f"{name}_status")},
    "study_datetime": pl.Datetime("us"),
    "prior_study_id": pl.Utf8,
    "prior_status": pl.Utf8,
}


def seeded_split(key: str, fractions: Mapping[str, float], seed: int) -> str:
    """Deterministic split of one id: a hash of (seed, key) as a uniform number in [0, 1)."""
    total = sum(fractions.get(s, 0.0) for s in SPLITS)
    if total <= 0:
        raise UserError("ingest.split.fractions must not all be zero")
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    edge = 0.0
    for name in SPLITS:
        edge += fractions.get(name, 0.0) / total
        if u < edge:
            return name
    return next(s for s in reversed(SPLITS) if fractions.get(s, 0.0) > 0)


def assign_splits(rows: Iterable[dict[str, Any]], split: SplitConfig) -> None:
    """Fill missing splits so that a patient never spans two splits: a study missing from the split
    file takes the official split of its patient's other studies (split_source `patient`; the first
    in study order, should the file itself disagree); a patient with no official split at all gets a
    seeded hash of the subject id (`seeded`)."""
    official: dict[str, str] = {}
    for row in rows:
        if row["split"] in SPLITS:
            official.setdefault(row["subject_id"], row["split"])
    for row in rows:
        if row["split"] in SPLITS:
            row["split_source"] = OFFICIAL
        elif row["subject_id"] in official:
            row["split"] = official[row["subject_id"]]
            row["split_source"] = PATIENT
        else:
            row["split"] = seeded_split(row["subject_id"], split.fractions, split.seed)
            row["split_source"] = SEEDED


def input_paths(cfg: IngestConfig) -> dict[str, str | None]:
    """Config key -> path of every file or folder the configured source reads (the outputs of
    ingest must be none of them)."""
    section = {"iu_xray": cfg.iu_xray, "mimic_cxr": cfg.mimic_cxr, "srrg": cfg.srrg}[cfg.source]
    return {
        f"ingest.{cfg.source}.{f.name}": getattr(section, f.name)
        for f in dataclasses.fields(section)
        if f.name != "image_ext"
    }


def ingest(cfg: IngestConfig, progress: bool = True) -> pl.DataFrame:
    """Read the configured source into the studies table (sorted by study id, `limit` applied)."""
    if cfg.source == "mimic_cxr":
        rows = mimic_cxr.study_rows(cfg.mimic_cxr, cfg.n_process, progress)
    elif cfg.source == "srrg":
        rows = srrg.study_rows(cfg.srrg)
    else:  # iu_xray: IngestConfig allows no other source
        rows = iu_xray.study_rows(cfg.iu_xray, progress)
    if not rows:
        raise UserError(
            f"ingest.source {cfg.source}: the configured files hold no study; check the paths in ingest.{cfg.source}"
        )
    rows.sort(key=lambda r: natural_key(r["study_id"]))
    assign_splits(rows, cfg.split)  # before the limit: a patient's studies beyond it still lend their split
    if cfg.limit is not None:
        rows = rows[: cfg.limit]
    for row in rows:
        row["source"] = cfg.source
        row["view"] = row["image_views"][0] if row["image_views"] else None
        for key, value in context_columns({}, True).items():  # a source without context sections
            row.setdefault(key, value)
        row.setdefault("study_datetime", None)
    link_priors(rows)  # after the limit: a link always names a row of the table
    return pl.DataFrame(rows, schema=SCHEMA)


def summarize(df: pl.DataFrame, seconds: float) -> str:
    """The stage's one summary line: rows, statuses, section coverage, split sizes, time."""
    n = df.height
    with_text = df.filter(pl.col("ingest_status") != NO_REPORT).height
    statuses = Counter(df["ingest_status"].to_list())
    splits = Counter(df["split"].to_list())

    def share(col: str) -> str:
        found = df.filter(pl.col(col).is_not_null()).height
        return f"{100 * found / with_text:.1f}%" if with_text else "n/a"

    return (
        f"ingest: studies={n} out={n} "
        + " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        + f" | findings found in {share('findings')} impression in {share('impression')} of reports"
        + " | "
        + " ".join(f"{s}={splits.get(s, 0)}" for s in SPLITS)
        + f" | {seconds:.1f}s"
    )


def run_ingest(cfg: IngestConfig, out: str | Path, progress: bool = True) -> str:
    """The ingest stage: the studies table written to `out`; returns its summary line."""
    import time

    from srrg.io import write_parquet

    start = time.perf_counter()
    df = ingest(cfg, progress=progress)
    write_parquet(df, out)
    return summarize(df, time.perf_counter() - start)
