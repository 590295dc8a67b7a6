"""GEMA-Score Table 3 (docs/metaeval.md, "GEMA Table 3"): every other metric of a rating set
correlated with GEMA as the column, with CheXbert's per-report precision, recall and F1 over its 14
labels as the paper lists them. The counts come from the scores (the `chexbert` metric scored with
the set) or, when they lack them, from srrg's `chexbert` metric run here on the pairs' reports
(the radeval extra's labeler); where neither is possible the three rows stay in the table with the
status `unavailable` and the reason in the caption, never left out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_reports
from srrg.metaeval.run import ID, MetaevalResult, metric_columns, read_inputs, run_metaeval, write_result
from srrg.metaeval.tables import UNAVAILABLE
from srrg.settings.metaeval import MetaevalConfig

CHEXBERT_PRF = ("chexbert_precision", "chexbert_recall", "chexbert_f1")
COUNTS = ("chexbert_tp_14", "chexbert_fp_14", "chexbert_fn_14")


def report_prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """Per-report precision, recall and F1 over the labels: no positive label on either side gives
    1 for all three (the labels agree, as the chexbert metric's per-report F1); otherwise an empty
    side gives 0 (nothing right among no predictions, nothing found of no findings)."""
    if tp + fp + fn == 0:
        return 1.0, 1.0, 1.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, 2 * tp / (2 * tp + fp + fn)


def with_prf(scores: pl.DataFrame) -> pl.DataFrame:
    """The scores with CHEXBERT_PRF from the 14-label counts (NaN where a count is missing)."""
    values = [
        report_prf(tp, fp, fn) if None not in (tp, fp, fn) else (float("nan"),) * 3
        for tp, fp, fn in scores.select(COUNTS).iter_rows()
    ]
    return scores.with_columns(
        pl.Series(name, [v[k] for v in values], pl.Float64) for k, name in enumerate(CHEXBERT_PRF)
    )


def chexbert_counts(scores: pl.DataFrame, refs: str, hyps: str) -> pl.DataFrame:
    """The scores with the chexbert metric's 14-label counts of each pair (its reports looked up by
    study_id in the refs/hyps tables of `srrg metaeval-prepare`; a missing report is empty)."""
    from srrg.metrics.radeval import CheXbert

    ids = scores[ID].cast(pl.String).to_list()
    texts = [dict(zip(t[ID].cast(pl.String), t["report"])) for t in (read_reports(refs), read_reports(hyps))]
    result = CheXbert().compute([texts[0].get(i, "") for i in ids], [texts[1].get(i, "") for i in ids])
    return scores.drop([c for c in COUNTS if c in scores.columns]).with_columns(
        pl.Series(c, result.per_report[c], pl.Float64) for c in COUNTS
    )


def chexbert_columns(scores: pl.DataFrame, refs: str | None, hyps: str | None) -> tuple[pl.DataFrame, str | None]:
    """The scores with CHEXBERT_PRF and None, or unchanged and why the three are unavailable."""
    from srrg.metrics.radeval import INSTALL, installed

    if set(COUNTS) <= set(scores.columns):
        return with_prf(scores), None
    if installed() is None:
        return scores, f"the radeval extra is not installed ({INSTALL})"
    if not refs or not hyps:
        return scores, "the scores have no CheXbert counts and no --refs/--hyps were given to label"
    try:
        return with_prf(chexbert_counts(scores, refs, hyps)), None
    except UserError as err:  # the labeler cannot load (its weights never fetched, offline): said, not fatal
        return scores, f"the CheXbert labeler could not run ({err})"


def unavailable_rows(schema: pl.Schema) -> pl.DataFrame:
    """Kendall and Spearman rows of CHEXBERT_PRF without a value, ci_status unavailable (the
    correlations' other columns empty)."""
    nan = float("nan")
    rows = [{"metric": m, "method": method, "value": nan, "p_value": nan, "ci_low": nan, "ci_high": nan,
             "ci_status": UNAVAILABLE} for m in CHEXBERT_PRF for method in ("kendall", "spearman")]  # fmt: skip
    return pl.DataFrame(rows, schema=schema)


def run_metaeval_gema3(
    scores: str, refs: str | None, hyps: str | None, pairs: str | None, cfg: MetaevalConfig, out_dir: str | Path
) -> tuple[MetaevalResult, str | None]:
    """The metaeval-gema3 stage: correlate every other metric and CheXbert's P, R and F1 with the
    GEMA column (cfg.human_column), write the tables to out_dir; returns the result and why
    CheXbert is unavailable (None when it is there)."""
    score_rows, _, pair_rows = read_inputs(scores, None, pairs)
    score_rows, reason = chexbert_columns(score_rows, refs, hyps)
    metrics = metric_columns(score_rows, cfg, exclude=[cfg.human_column or ""])
    if reason is None:
        metrics += [c for c in CHEXBERT_PRF if c not in metrics]
    result = run_metaeval(score_rows, None, dataclasses.replace(cfg, metrics=tuple(metrics)), pair_rows)
    if reason is not None:
        result.correlations = pl.concat([result.correlations, unavailable_rows(result.correlations.schema)])
        note = f"CheXbert P/R/F1: {UNAVAILABLE}, {reason}."
        result.info["ci_note"] = f"{result.info['ci_note']} {note}".strip() if result.info["ci_note"] else note
    write_result(result, out_dir)
    return result, reason
