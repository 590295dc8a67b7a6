"""Rank correlation with its NaN rules (Kendall tau-b, Spearman, Pearson: srrg.metaeval.correlation
resamples them) and the system-ranking agreement it gives between metrics (docs/metaeval.md):
given each system's summary value on several metrics, Kendall tau-b between the system rankings two
metrics induce. Low values mean the conclusion "system X is best" depends on the metric chosen.
`srrg compare` and `srrg.metaeval` both use it, so it sits below both."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
from scipy import stats

METHODS = ("kendall", "spearman")
# the per-rater tables add Pearson's r (GEMA-Score Table 4 reports it; docs/metaeval.md)
ALL_METHODS = (*METHODS, "pearson")


def orient(values: Sequence[float], lower_is_better: bool) -> np.ndarray:
    """Values as float array, negated when lower is better (error counts)."""
    arr = np.asarray(values, dtype=float)
    return -arr if lower_is_better else arr


def coefficient(method: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(coefficient, two-sided p) for kendall (tau-b, ties corrected), spearman or pearson; NaN when
    a side is constant or fewer than 3 pairs remain."""
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, math.nan
    if method == "kendall":
        res = stats.kendalltau(x, y, variant="b")
    elif method == "spearman":
        res = stats.spearmanr(x, y)
    elif method == "pearson":
        res = stats.pearsonr(x, y)
    else:
        raise ValueError(f"unknown correlation method {method!r}; use one of {ALL_METHODS}")
    return float(res.statistic), float(res.pvalue)


AGREEMENT_SCHEMA = {"metric_a": pl.String, "metric_b": pl.String, "kendall": pl.Float64, "n_systems": pl.Int64}


def ranking_agreement(values: Mapping[str, Mapping[str, float]], *, lower_is_better: Sequence[str]) -> pl.DataFrame:
    """values: metric -> system -> summary value. One row per metric pair: Kendall tau-b over the
    systems both metrics have a finite value for (NaN with fewer than 3 such systems, or a
    constant metric); the lower_is_better metrics are negated first (empty when the caller's values
    are oriented or raw)."""
    rows = []
    for a, b in itertools.combinations(values, 2):
        systems = [
            s for s in values[a] if s in values[b] and math.isfinite(values[a][s]) and math.isfinite(values[b][s])
        ]
        x = orient([values[a][s] for s in systems], a in lower_is_better)
        y = orient([values[b][s] for s in systems], b in lower_is_better)
        tau = coefficient("kendall", np.asarray(x), np.asarray(y))[0]
        rows.append({"metric_a": a, "metric_b": b, "kendall": tau, "n_systems": len(systems)})
    return pl.DataFrame(rows, schema=AGREEMENT_SCHEMA, orient="row") if rows else pl.DataFrame(schema=AGREEMENT_SCHEMA)


def system_means(frame: pl.DataFrame, system_col: str, columns: Sequence[str]) -> dict[str, dict[str, float]]:
    """column -> system -> mean of its finite values (NaN when none) over the frame's rows."""
    out: dict[str, dict[str, float]] = {}
    for column in columns:
        grouped = frame.group_by(system_col).agg(pl.col(column).cast(pl.Float64).fill_nan(None).mean())
        out[column] = {
            str(s): (math.nan if v is None else float(v)) for s, v in zip(grouped[system_col], grouped[column])
        }
    return out


def agreement_markdown(table: pl.DataFrame, caption: str) -> str:
    """Square table metric x metric of Kendall tau-b (diagonal 1)."""
    metrics = list(dict.fromkeys(table["metric_a"].to_list() + table["metric_b"].to_list()))
    tau = {(r["metric_a"], r["metric_b"]): r["kendall"] for r in table.iter_rows(named=True)}
    tau.update({(b, a): v for (a, b), v in list(tau.items())})

    def cell(a: str, b: str) -> str:
        v = 1.0 if a == b else tau.get((a, b), math.nan)
        return "–" if math.isnan(v) else f"{v:.3f}"

    note = " – : fewer than 3 systems with a value on both metrics, or a constant metric."
    lines = [caption + note, "", "| | " + " | ".join(metrics) + " |", "|" + "---|" * (len(metrics) + 1)]
    lines += [f"| {a} | " + " | ".join(cell(a, b) for b in metrics) + " |" for a in metrics]
    return "\n".join(lines) + "\n"
