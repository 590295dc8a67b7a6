"""Result tables in the papers' layouts: GEMA Table 1 (metric x Kendall tau-b / Spearman rho with
p-values) and S-RRG Table 3 (metric x Kendall / Spearman against the proxy rating), as Markdown,
CSV and LaTeX."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from srrg.metaeval.correlation import Correlation


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def correlation_frame(rows: Sequence[tuple[str, Correlation]]) -> pl.DataFrame:
    """Long frame of every (metric, method) correlation."""
    return pl.DataFrame(
        [
            {
                "metric": m,
                "method": c.method,
                "value": c.value,
                "p_value": c.p_value,
                "ci_low": c.ci_low,
                "ci_high": c.ci_high,
                "n": c.n,
                "n_dropped": c.n_dropped,
                "n_clusters": c.n_clusters,
                "ci_status": c.ci_status,
            }
            for m, c in rows
        ],
        schema={
            "metric": pl.String,
            "method": pl.String,
            "value": pl.Float64,
            "p_value": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "n": pl.Int64,
            "n_dropped": pl.Int64,
            "n_clusters": pl.Int64,
            "ci_status": pl.String,
        },
    )


UNAVAILABLE = "unavailable"  # ci_status of a metric that could not be computed here (GEMA Table 3's CheXbert)


def wide_table(corr: pl.DataFrame, with_p: bool) -> list[list[str]]:
    """Rows [metric, kendall, (p, CI), spearman, (p, CI)] in the order the metrics were given; an
    unavailable metric's value cells say so."""
    rows = []
    for metric in corr["metric"].unique(maintain_order=True).to_list():
        cells = [metric]
        for method in ("kendall", "spearman"):
            r = corr.filter((pl.col("metric") == metric) & (pl.col("method") == method)).row(0, named=True)
            cells.append(UNAVAILABLE if r.get("ci_status") == UNAVAILABLE else _fmt(r["value"]))
            if with_p:
                cells.extend([_p(r["p_value"]), f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"])
        rows.append(cells)
    return rows


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]], caption: str) -> str:
    lines = [caption, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def latex(header: Sequence[str], rows: Sequence[Sequence[str]], caption: str) -> str:
    def esc(text: str) -> str:
        return (
            text.replace("_", r"\_")
            .replace("%", r"\%")
            .replace("<", r"$<$")
            .replace("τ", r"$\tau$")
            .replace("ρ", r"$\rho$")
        )

    body = "\n".join(" & ".join(esc(c) for c in r) + r" \\" for r in rows)
    return (
        "\\begin{table}[t]\n\\centering\n"
        f"\\begin{{tabular}}{{l{'c' * (len(header) - 1)}}}\n\\toprule\n"
        + " & ".join(esc(h) for h in header)
        + " \\\\\n\\midrule\n"
        + body
        + f"\n\\bottomrule\n\\end{{tabular}}\n\\caption{{{esc(caption)}}}\n\\end{{table}}\n"
    )


GEMA_HEADER = ("Metric", "Kendall τb", "p", "95% CI", "Spearman ρ", "p", "95% CI")
GEMA_CSV_COLUMNS = ("metric", "kendall", "kendall_p", "kendall_ci", "spearman", "spearman_p", "spearman_ci")
SRRG_HEADER = ("Metric", "Kendall", "Spearman")


def gema_table(corr: pl.DataFrame) -> tuple[tuple[str, ...], list[list[str]]]:
    return GEMA_HEADER, wide_table(corr, with_p=True)


def srrg_table(corr: pl.DataFrame) -> tuple[tuple[str, ...], list[list[str]]]:
    return SRRG_HEADER, wide_table(corr, with_p=False)


def gema_targets_table(corrs: Sequence[tuple[str, pl.DataFrame]]) -> tuple[tuple[str, ...], list[list[str]]]:
    """GEMA-Score Tables 1-2 side by side: per human target (label, its correlations) the Kendall
    tau-b and Spearman rho with their p-values, one row per metric in the first target's order; a
    metric a target did not measure gets dashes."""
    header = ["Metric"]
    for label, _ in corrs:
        header += [f"{label} τb", "p", f"{label} ρ", "p"]
    cells = {(label, r["metric"], r["method"]): r for label, corr in corrs for r in corr.iter_rows(named=True)}
    metrics = list(dict.fromkeys(m for _, corr in corrs for m in corr["metric"].to_list()))
    rows = []
    for metric in metrics:
        row = [metric]
        for label, _ in corrs:
            for method in ("kendall", "spearman"):
                r = cells.get((label, metric, method))
                row += [_fmt(r["value"]), _p(r["p_value"])] if r else ["–", "–"]
        rows.append(row)
    return tuple(header), rows


PREFERENCE_HEADER = (
    "Metric",
    "cases",
    "agree",
    "disagree",
    "metric tie",
    "human tie",
    "agreement",
    "agreement (untied)",
)


def preference_markdown(frame: pl.DataFrame, caption: str) -> str:
    """Within-case preference agreement per metric (srrg.metaeval.preference)."""
    rows = [
        [r["metric"], str(r["n_cases"]), str(r["agree"]), str(r["disagree"]), str(r["metric_tie"]), str(r["human_tie"]),
         _fmt(r["agreement"]), _fmt(r["agreement_untied"])]
        for r in frame.iter_rows(named=True)
    ]  # fmt: skip
    return markdown(PREFERENCE_HEADER, rows, caption)
