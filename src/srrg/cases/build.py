"""The data of a cases page (docs/cases.md): one run's scored studies joined with its predictions,
the dataset rows (images, structured reference), the judges' per-report table and other runs to
compare with. Every scored study is one case; predictions that were not scored are counted by
their infer_status, and ids found in one table but missing from another it must join are errors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from srrg import io
from srrg.cases.align import MARKS, POSITIVE, AlignedFinding, align
from srrg.cases.thumbs import thumbnails
from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.report import UNPARSEABLE, StructuredReport, parse_report, render_sentences

PREDICTION_COLUMNS = ("study_id", "target", "infer_status", "images", "raw", "parse_status")
SCORE_TEXT = ("study_id", "reference", "hypothesis")
DIGITS = 4  # scores are shown with 3 decimals; one more keeps ties and differences honest


@dataclass(frozen=True)
class RunTables:
    """One run's files: predictions.parquet (srrg infer) and per_report.parquet (srrg score)."""

    name: str
    predictions: Path
    scores: Path


@dataclass
class Columns:
    """The per-report columns the page shows, in table order: numbers (sortable), statuses
    (filterable) and judge explanations (text)."""

    scores: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    explanations: list[str] = field(default_factory=list)

    def add(self, df: pl.DataFrame, skip: Sequence[str] = ()) -> None:
        for name, dtype in df.schema.items():
            if name in skip or name in self.scores or name in self.statuses or name in self.explanations:
                continue
            if dtype.is_numeric():
                self.scores.append(name)
            elif dtype == pl.String and name.endswith("_status"):
                self.statuses.append(name)
            elif dtype == pl.String and name.endswith("_explanation"):
                self.explanations.append(name)


def read_parquet(path: Path, option: str, required: Sequence[str]) -> pl.DataFrame:
    if not path.is_file():
        raise UserError(f"{option} {path}: no such file")
    try:
        df = io.read_parquet(path)
    except (pl.exceptions.ComputeError, OSError) as exc:
        raise UserError(f"{option} {path}: not a Parquet file ({str(exc).splitlines()[0]})") from exc
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise UserError(f"{option} {path}: missing column(s) {', '.join(missing)} (columns: {', '.join(df.columns)})")
    if df.is_empty():
        raise UserError(f"{option} {path}: no rows")
    return df.with_columns(pl.col("study_id").cast(pl.String))


def _missing_ids(ids: Sequence[str], known: pl.Series, what: str, where: str) -> None:
    missing = sorted(set(ids) - set(known.to_list()))
    if missing:
        raise UserError(
            f"{len(missing)} scored studies are not in {what} {where}, first: {missing[0]}; "
            "pass the files of the same run"
        )


def scored_run(run: RunTables) -> tuple[pl.DataFrame, dict[str, int]]:
    """The run's per-report table in its own order with the prediction columns joined on, and
    the predictions that were not scored, counted by infer_status (e.g. view_filtered)."""
    preds = read_parquet(run.predictions, "--predictions", PREDICTION_COLUMNS)
    scores = read_parquet(run.scores, "--scores", SCORE_TEXT)
    _missing_ids(scores["study_id"].to_list(), preds["study_id"], "--predictions", str(run.predictions))
    # the prompt text a prediction was read with (srrg infer's `context`; absent in older files)
    columns = [*PREDICTION_COLUMNS, *(["context"] if "context" in preds.columns else [])]
    joined = scores.join(preds.select(columns), on="study_id", how="left", maintain_order="left")
    unscored = preds.join(scores.select("study_id"), on="study_id", how="anti")["infer_status"].fill_null("none")
    return joined, dict(sorted(unscored.value_counts().iter_rows()))


def dataset_rows(dataset: Path, split: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """study_id -> structured and image_paths of the run's split, read from the dataset's shards."""
    try:  # the shards are checked against manifest.json first
        frame = read_split(dataset, split, ["structured", "image_paths"], lazy=True)
    except UserError as err:
        raise UserError(f"--dataset {dataset}: {err}") from None
    df = frame.filter(pl.col("study_id").is_in(list(ids))).collect()
    _missing_ids(ids, df["study_id"], "--dataset", f"{dataset / split}")
    return {r["study_id"]: r for r in df.iter_rows(named=True)}


def number(value: Any) -> float | None:
    """A JSON-safe score: NaN / None (nothing to score) and ±inf (no score a metric defines, and
    no JSON number) -> null, shown as n/a."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return round(float(value), DIGITS)


def finding_row(f: AlignedFinding) -> list[Any]:
    """[name, polarity (1 positive, 0 negative), mark index into MARKS, reference attributes,
    predicted attributes, attribute scores]: compact, since a page holds thousands of these."""

    def attrs(x: Any) -> list[Any] | None:
        return None if x is None else [x.probability, x.level, x.location]

    scores = None if f.scores is None else [round(s, 3) for s in f.scores]
    return [f.name, int(f.polarity == POSITIVE), MARKS.index(f.mark), attrs(f.ref), attrs(f.hyp), scores]


def reference_only(ref: StructuredReport) -> list[list[Any]]:
    """The reference's findings of a run without structured predictions (Sentence-Direct):
    mark -1 = not compared."""
    return [[f.name, 1, -1, [f.probability, f.level, f.location], None, None] for f in ref.positive] + [
        [n, 0, -1, None, None, None] for n in ref.negative
    ]


def study_texts(row: dict[str, Any], rows: dict[str, Any], structured: bool) -> dict[str, Any]:
    """Reference and prediction as a reader wants them: sentence renderings of structured reports,
    the raw model output as well where it did not parse cleanly; plus the aligned findings."""
    if structured:
        ref, _ = parse_report(row["reference"])
        hyp, status = parse_report(row["hypothesis"])
        out = {
            "ref": render_sentences(ref),
            "f": [finding_row(f) for f in align(ref, hyp)],
            "hyp": render_sentences(hyp) if status != UNPARSEABLE else row["raw"] or "",
        }
        if status != "valid" and out["hyp"] != (row["raw"] or ""):  # repaired: what was written, beside what was read
            out["raw"] = row["raw"] or ""
        return out
    ref, _ = parse_report(rows[row["study_id"]]["structured"])
    return {"ref": row["reference"], "hyp": row["hypothesis"], "f": reference_only(ref)}


def image_jobs(
    df: pl.DataFrame, rows: dict[str, dict[str, Any]], mode: str, image_root: str | None
) -> tuple[list[StructuredReport], list[str | None]]:
    """Per study the structured reference (phantoms) and the first image's path (real images)."""
    reports = [parse_report(rows[s]["structured"])[0] for s in df["study_id"]]
    paths: list[str | None] = [None] * df.height
    if mode == "real":
        from srrg.model.images import resolve_image  # imports torch: only for runs on real images

        for i, sid in enumerate(df["study_id"]):
            try:
                paths[i] = str(resolve_image(sid, rows[sid]["image_paths"], image_root))
            except UserError:
                paths[i] = None
    return reports, paths


def case_list(
    run: RunTables,
    dataset: Path,
    split: str,
    *,
    judge: Path | None = None,
    image_root: str | None = None,
    thumbnail_size: int = 64,
    processes: int = 1,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """The page's data for one run: columns, counts and one entry per scored study (the settings after
    `split` by keyword only, as CasesOptions names them)."""
    df, unscored = scored_run(run)
    cols = Columns()
    cols.add(df, skip=("study_id", "infer_status"))  # every scored study's infer_status is ok
    if "parse_status" in cols.statuses:  # the prediction's own status first: the one everyone filters by
        cols.statuses.remove("parse_status")
    cols.statuses.insert(0, "parse_status")
    if judge is not None:
        judged = read_parquet(judge, "--judge", SCORE_TEXT).drop("reference", "hypothesis")
        unknown = sorted(set(judged["study_id"]) - set(df["study_id"]))
        if unknown:
            raise UserError(
                f"--judge {judge}: {len(unknown)} studies that {run.name} did not score, first: {unknown[0]}"
            )
        judged = judged.select("study_id", *[c for c in judged.columns if c not in df.columns])
        cols.add(judged, skip=("study_id",))
        df = df.join(judged, on="study_id", how="left", maintain_order="left")
    # a metric's own copy of the parse status (s_score_hyp_status of the scored raw output) says nothing new
    cols.statuses = [c for c in cols.statuses if c == "parse_status" or not df[c].equals(df["parse_status"])]
    targets = sorted(set(df["target"].drop_nulls()))
    structured = targets == ["json"]
    rows = dataset_rows(dataset, split, df["study_id"].to_list())
    modes = sorted(set(df["images"].drop_nulls()))
    mode = modes[0] if len(modes) == 1 else "placeholder"
    reports, paths = image_jobs(df, rows, mode, image_root)
    pictures = thumbnails(
        mode, df["study_id"].to_list(), reports, paths, thumbnail_size, processes=processes, cache_dir=cache_dir
    )
    studies = []
    for row, (uri, note) in zip(df.iter_rows(named=True), pictures):
        entry = {
            "id": row["study_id"],
            **study_texts(row, rows, structured),
            **({"ctx": row["context"]} if row.get("context") else {}),
            "sc": [number(row[c]) for c in cols.scores],
            "st": [row[c] for c in cols.statuses],
            "img": uri,
            "note": note,
        }
        explanations = [row[c] or None for c in cols.explanations]
        if any(explanations):
            entry["ex"] = explanations
        studies.append(entry)
    return {
        "run": run.name,
        "target": ",".join(targets),
        "images": mode,
        "structured": structured,
        "scores": cols.scores,
        "statuses": cols.statuses,
        "explanations": cols.explanations,
        "marks": list(MARKS),
        "unscored": unscored,
        "studies": studies,
    }


def comparison(run: RunTables) -> dict[str, Any]:
    """Another run's per-study scores, parse status and prediction, keyed by study id."""
    df, _ = scored_run(run)
    cols = Columns()
    cols.add(df, skip=("study_id",))
    by_id = {}
    for row in df.iter_rows(named=True):
        hyp = row["hypothesis"]
        if row["target"] == "json":
            report, status = parse_report(hyp)
            hyp = render_sentences(report) if status != UNPARSEABLE else row["raw"] or ""
        by_id[row["study_id"]] = {"sc": [number(row[c]) for c in cols.scores], "st": row["parse_status"], "hyp": hyp}
    return {"run": run.name, "scores": cols.scores, "studies": by_id}
