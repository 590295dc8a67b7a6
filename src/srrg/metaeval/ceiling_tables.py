"""Markdown layouts of the human-ceiling results (docs/metaeval.md, "Human ceiling and per-rater
tables"): metrics beside the leave-one-out row, per-rater correlations (GEMA-Score Table 4
layout), the inter-rater matrix, per error category (Table 5 layout), the "better than" matrix,
and the figure of each metric's tau against the ceiling band."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from srrg.io import atomic_path
from srrg.metaeval.ceiling import CEILING, MEAN_RATER
from srrg.metaeval.tables import markdown

METHOD_NAMES = {"kendall": "Kendall τb", "spearman": "Spearman ρ", "pearson": "Pearson r"}
SUMMARY_HEADER = (
    "Metric", "Kendall τb", "95% CI", "Pearson r", "95% CI", "Pairwise accuracy (tie-calibrated)", "95% CI", "ε",
    "Accuracy (ε = 0)",
)  # fmt: skip


def _num(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _ci(low: float | None, high: float | None) -> str:
    return "–" if low is None or not math.isfinite(low) else f"[{low:.3f}, {high:.3f}]"


def summary_rows(summary: pl.DataFrame) -> list[list[str]]:
    """One row per metric (the ceiling row first where there is one) of the summary frame."""
    return [
        [r["metric"], _num(r["kendall"]), _ci(r["kendall_low"], r["kendall_high"]), _num(r["pearson"]),
         _ci(r["pearson_low"], r["pearson_high"]), _num(r["accuracy"]), _ci(r["accuracy_low"], r["accuracy_high"]),
         _num(r["epsilon"]), _num(r["accuracy_untuned"])]
        for r in summary.iter_rows(named=True)
    ]  # fmt: skip


def per_rater_markdown(per_rater: pl.DataFrame, inter_rater: pl.DataFrame, caption: str) -> str:
    """One table per method: a row per metric (the leave-one-out row first), a column per rater
    with the coefficient and its CI; then the inter-rater Kendall matrix."""
    raters = per_rater["rater"].unique(maintain_order=True).to_list()
    parts = [caption, ""]
    for method in per_rater["method"].unique(maintain_order=True).to_list():
        rows = []
        for metric in per_rater["metric"].unique(maintain_order=True).to_list():
            cells = [metric]
            for rater in raters:
                hit = per_rater.filter(
                    (pl.col("metric") == metric) & (pl.col("rater") == rater) & (pl.col("method") == method)
                )
                cells.append(_cell(hit.row(0, named=True)) if hit.height else "–")
            rows.append(cells)
        parts.append(markdown(("Metric", *raters), rows, f"**{METHOD_NAMES[method]}** against each rater."))
    if not inter_rater.is_empty():
        parts += inter_rater_markdown(inter_rater, raters)
    return "\n".join(parts)


def inter_rater_markdown(inter_rater: pl.DataFrame, raters: Sequence[str]) -> list[str]:
    """One matrix per method (a frame without a method column is Kendall's), with the mean-rater
    row and column where the frame has them (GREEN Fig. 6)."""
    by_method = (
        inter_rater.partition_by("method", maintain_order=True, as_dict=True)
        if "method" in inter_rater.columns
        else {("kendall",): inter_rater}
    )
    names = list(raters) + ([MEAN_RATER] if MEAN_RATER in inter_rater["rater_a"].to_list() else [])
    parts = []
    for (method,), frame in by_method.items():
        cells = {(r["rater_a"], r["rater_b"]): _cell(r) for r in frame.iter_rows(named=True)}
        rows = [[a, *(cells.get((a, b), "–") for b in names)] for a in names]
        caption = f"**Inter-rater {METHOD_NAMES[method]}** on the pairs both judged."
        if MEAN_RATER in names:
            caption += f" {MEAN_RATER}: each rater against the mean of the other raters."
        parts.append(markdown(("Rater", *names), rows, caption))
    return parts


def per_category_markdown(per_category: pl.DataFrame, caption: str) -> str:
    """A row per metric (the leave-one-out row first), a column per error category; one table per
    method where the frame has a method column (its heading names the method)."""
    if "method" not in per_category.columns:
        return markdown(("Metric", *_categories(per_category)), _category_rows(per_category), caption)
    parts = [caption, ""]
    for (method,), frame in per_category.partition_by("method", maintain_order=True, as_dict=True).items():
        heading = f"**{METHOD_NAMES[method]}** per error category."
        parts.append(markdown(("Metric", *_categories(frame)), _category_rows(frame), heading))
    return "\n".join(parts)


def _categories(per_category: pl.DataFrame) -> list[str]:
    return per_category["category"].unique(maintain_order=True).to_list()


def _category_rows(per_category: pl.DataFrame) -> list[list[str]]:
    cells = {(r["metric"], r["category"]): _cell(r) for r in per_category.iter_rows(named=True)}
    metrics = per_category["metric"].unique(maintain_order=True).to_list()
    return [
        [metric, *(cells.get((metric, c), "–") for c in _categories(per_category))]
        for metric in sorted(metrics, key=lambda m: m != CEILING)  # the ceiling row first (a stable sort)
    ]


def better_than_markdown(matrix: pl.DataFrame, caption: str) -> str:
    """Row metric better than column metric: the adjusted p where the row's tau is the higher."""
    metrics = matrix["metric"].to_list()
    rows = [[r["metric"], *(_p(r[m]) for m in metrics)] for r in matrix.iter_rows(named=True)]
    return markdown(("better than →", *metrics), rows, caption)


def _cell(row: dict) -> str:
    if not math.isfinite(row["value"]):
        return "–"
    ci = _ci(row["ci_low"], row["ci_high"])
    return _num(row["value"]) if ci == "–" else f"{_num(row['value'])} {ci}"


def _p(value: float | None) -> str:
    """ "" where the row metric is not the better one, "–" where it is but the test was not run."""
    if value is None:
        return ""
    if not math.isfinite(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def ceiling_figure(summary: pl.DataFrame, title: str, path: str | Path) -> None:
    """Each metric's Kendall tau-b with its CI (points and bars), and the human ceiling as a band
    (its CI) around a line (its value); without a ceiling the title says why. Written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = summary.filter(pl.col("metric") == CEILING)
    metrics = summary.filter(pl.col("metric") != CEILING)
    labels: Sequence[str] = metrics["metric"].to_list()[::-1]
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.35 * len(labels) + 2.0)))
    if top.height:
        c = top.row(0, named=True)
        if math.isfinite(c["kendall_low"]):
            ax.axvspan(c["kendall_low"], c["kendall_high"], color="#dd8452", alpha=0.25, label=f"{CEILING}, 95% CI")
        ax.axvline(c["kendall"], color="#dd8452", label=CEILING)
    values = [v if math.isfinite(v) else math.nan for v in metrics["kendall"].to_list()[::-1]]
    lows, highs = metrics["kendall_low"].to_list()[::-1], metrics["kendall_high"].to_list()[::-1]
    # the interval drawn from its own bounds: a percentile interval need not contain the point
    spans = [(y, lo, hi) for y, (lo, hi) in enumerate(zip(lows, highs)) if math.isfinite(lo) and math.isfinite(hi)]
    if spans:
        ax.hlines([y for y, _, _ in spans], [lo for _, lo, _ in spans], [hi for _, _, hi in spans], color="#4c72b0")
    ax.plot(values, range(len(labels)), "o", color="#4c72b0", label="metric, 95% CI")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Kendall τb with the human score")
    ax.set_title(title, fontsize=9, wrap=True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
