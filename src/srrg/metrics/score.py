"""The work of `srrg score`: join references and hypotheses on study id, score with registered
metrics, and write per-report and summary tables. Unmatched ids are written out and reported,
never dropped silently."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import StageFailed, UserError
from srrg.io import read_csv, read_reports, write_parquet, write_text
from srrg.metrics.base import MetricResult, score_all
from srrg.metrics.context import read_contexts
from srrg.metrics.judges.common import JudgeFailed
from srrg.metrics.section import MISSING, select_all
from srrg.metrics.signature import SIGNATURES_FILE, compose, metric_of, with_section, write_signatures
from srrg.settings.score import WHOLE_REPORT

COUNTS = ("n_pairs", "n_unmatched", "section_missing_ref", "section_missing_hyp")


def load_reports(path: str | Path, id_col: str, text_col: str) -> pl.DataFrame:
    """Two columns, study_id and report, both text: ids exactly as written, structured-report
    objects as their JSON, nulls as ""; a .txt file gives one report per line (docs/inputs.md).
    Empty files, missing or duplicate ids and reports of another type are user errors."""
    return read_reports(path, id_col, text_col)


def align(refs: pl.DataFrame, hyps: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Inner join in reference order, plus the ids found on one side only (column `side`)."""
    pairs = refs.join(hyps, on="study_id", how="inner", suffix="_hyp", maintain_order="left")
    pairs = pairs.rename({"report": "reference", "report_hyp": "hypothesis"})
    only_ref = refs.join(hyps, on="study_id", how="anti").select("study_id", pl.lit("reference").alias("side"))
    only_hyp = hyps.join(refs, on="study_id", how="anti").select("study_id", pl.lit("hypothesis").alias("side"))
    return pairs, pl.concat([only_ref, only_hyp])


def summary_markdown(summary: Mapping[str, float]) -> str:
    """One-row Markdown table, 3 decimals; NaN (no matched finding anywhere) shows as n/a."""
    cells = ["n/a" if math.isnan(v) else str(int(v)) if k in COUNTS else f"{v:.3f}" for k, v in summary.items()]
    return "| " + " | ".join(summary) + " |\n|" + "---|" * len(summary) + "\n| " + " | ".join(cells) + " |\n"


def score_each(
    refs: Sequence[str],
    hyps: Sequence[str],
    metrics: Sequence[str],
    options: Mapping[str, Mapping[str, Any]] | None,
    contexts: Sequence[Mapping[str, str]] | None = None,
) -> tuple[MetricResult, list[JudgeFailed]]:
    """Every metric's result merged, and the judges that failed (JudgeFailed carries the partial
    result, which is merged too): one failing judge neither hides the others nor loses its rows.
    contexts: each pair's patient context (srrg.metrics.context), None when no pair has one."""
    merged = MetricResult({}, {})
    failures: list[JudgeFailed] = []
    for name in metrics:
        try:
            result = score_all(refs, hyps, [name], options, contexts)
        except JudgeFailed as failure:
            result = failure.result
            failures.append(failure)
        merged.per_report.update(result.per_report)
        merged.summary.update(result.summary)
        merged.signatures.update(result.signatures)
    return merged, failures


def summary_signatures(signatures: dict[str, str], summary_keys: list[str]) -> dict[str, str]:
    """`signature_<metric>` -> the signatures of that metric's summary keys (one, or several joined
    by ` ; ` where its keys differ, e.g. CheXbert's 5 and 14 labels): the columns summary.csv adds
    beside the numbers."""
    out: dict[str, list[str]] = {}
    for key in summary_keys:
        if key in signatures:
            variants = out.setdefault(f"signature_{metric_of(signatures[key])}", [])
            if signatures[key] not in variants:
                variants.append(signatures[key])
    return {k: " ; ".join(v) for k, v in out.items()}


def run_score(
    refs_path: str | Path,
    hyps_path: str | Path,
    metrics: Sequence[str],
    out_dir: str | Path,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    id_col: str = "study_id",
    ref_col: str = "report",
    hyp_col: str = "report",
    section: str = WHOLE_REPORT,
) -> dict[str, float]:
    """Score one prediction file; writes per_report.parquet, summary.csv (with a signature column
    per metric), signatures.csv (key -> signature), summary.md, unmatched.csv. `section` cuts
    references and hypotheses alike (srrg.metrics.section). A judge that could not answer well
    enough (JudgeFailed) raises StageFailed after everything is written, with one line per failed
    judge naming its endpoint and counts."""
    out = Path(out_dir)
    pairs, unmatched = align(load_reports(refs_path, id_col, ref_col), load_reports(hyps_path, id_col, hyp_col))
    if pairs.is_empty():  # scoring nothing would print n/a and exit 0: almost surely the wrong files
        raise UserError(
            f"no {id_col} in common between --refs {refs_path} and --hyps {hyps_path} "
            f"({unmatched.height} ids on one side only); score files of the same studies"
        )
    refs, ref_status = select_all(pairs["reference"].to_list(), section)
    hyps, hyp_status = select_all(pairs["hypothesis"].to_list(), section)
    contexts = read_contexts(refs_path, id_col, pairs["study_id"].to_list())  # optional age/sex/indication columns
    result, failures = score_each(refs, hyps, metrics, options, contexts)
    sections: dict[str, list[str]] = {}
    counts: dict[str, float] = {}
    if section != WHOLE_REPORT:  # which pairs lacked the section, per side (docs/metrics.md)
        sections = {"section_ref_status": ref_status, "section_hyp_status": hyp_status}
        counts = {
            "section_missing_ref": float(ref_status.count(MISSING)),
            "section_missing_hyp": float(hyp_status.count(MISSING)),
        }
    columns = {**sections, **result.per_report}
    per_report = pairs.with_columns(pl.Series(k, v, strict=False) for k, v in columns.items())
    summary = {"n_pairs": float(pairs.height), "n_unmatched": float(unmatched.height), **counts, **result.summary}
    signatures = {k: with_section(v, section) for k, v in result.signatures.items()}
    signatures.update({k: compose("section", [("section", section)]) for k in (*sections, *counts)})
    write_parquet(per_report, out / "per_report.parquet")
    write_text(out / "unmatched.csv", unmatched.write_csv())
    write_signatures(out / SIGNATURES_FILE, signatures)
    exact = {k: int(v) if k in COUNTS else v for k, v in summary.items()}  # full precision; rounding only in summary.md
    exact.update(summary_signatures(signatures, list(result.summary)))
    write_text(out / "summary.csv", pl.DataFrame([exact]).write_csv())
    write_text(out / "summary.md", summary_markdown(summary))
    if failures:  # written first: the partial per-report results stay on disk for inspection
        raise StageFailed("; ".join(str(f) for f in failures) + f" (partial results in {out})")
    return summary


def signature_columns(out_dir: str | Path) -> dict[str, str]:
    """The signature_<metric> columns of a summary.csv that run_score wrote (printed beside the table)."""
    row = read_csv(Path(out_dir) / "summary.csv", infer_schema=False).row(0, named=True)
    return {k: v for k, v in row.items() if k.startswith("signature_")}
