"""The human ceiling and the per-rater targets (docs/metaeval.md, "Human ceiling and per-rater
tables"): each rater's own human score, leave-one-rater-out agreement (a rater against the mean
of the others, the same statistic and the same clustered resampling as the metrics), the
inter-rater matrix, and every metric against each rater."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from srrg.metaeval.correlation import Correlation, coefficient_value, correlate, statistic_ci
from srrg.metaeval.readers.common import ERRORS, human_category_counts, human_scores

CEILING = "Radiologists (leave-one-out)"
MEAN_RATER = "Mean of the others"  # the inter-rater matrix's extra row and column (GREEN Fig. 6)
# the coefficients of the inter-rater matrix and the per-category table (GEMA-Score Tables 4-5 are Pearson)
MATRIX_METHODS = ("kendall", "pearson")
ONE_RATER = (
    "One rater: no human ceiling (leave-one-rater-out agreement needs two or more raters' own judgements of a pair)."
)


def _aligned(frame: pl.DataFrame, column: str, ids: Sequence[str]) -> np.ndarray:
    """The column's value for every id (NaN where the frame has no row for it)."""
    values = dict(zip(frame["pair_id"].to_list(), frame[column].to_list()))
    return np.array([math.nan if values.get(i) is None else float(values[i]) for i in ids])


def rater_matrix(
    ratings: pl.DataFrame, target: str, ids: Sequence[str], lower_is_better: bool
) -> dict[str, np.ndarray]:
    """rater -> that rater's human score of every id (the target of human_scores over that rater's
    rows alone; NaN where the rater did not judge the pair), oriented higher-is-better like the
    mean. Raters without any value on these ids are left out."""
    out = {}
    for rater in sorted(set(ratings["rater"].to_list())):
        own, _ = human_scores(ratings.filter(pl.col("rater") == rater), target)
        values = _aligned(own, "human", ids)
        if np.isfinite(values).any():
            out[rater] = -values if lower_is_better else values
    return out


def category_rater_matrices(ratings: pl.DataFrame, ids: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    """category -> rater -> that rater's count of clinically significant errors of the category
    (human_category_counts over that rater's rows), negated (fewer errors is better). A pair the
    rater judged without such an error of the category counts 0; one the rater did not judge is NaN."""
    errors = ratings.filter(pl.col("kind") == ERRORS)
    per_rater = {r: errors.filter(pl.col("rater") == r) for r in sorted(set(errors["rater"].to_list()))}
    counts = {r: human_category_counts(rows) for r, rows in per_rater.items()}
    categories = sorted({c for table in counts.values() for c in table.columns[1:]})
    out: dict[str, dict[str, np.ndarray]] = {}
    for rater, rows in per_rater.items():
        judged = np.isin(np.asarray(ids, dtype=object), rows["pair_id"].unique().to_list())
        for category in categories:
            table = counts[rater]
            values = _aligned(table, category, ids) if category in table.columns else np.full(len(ids), math.nan)
            out.setdefault(category, {})[rater] = -np.where(judged & np.isnan(values), 0.0, values)
    return out


def mean_of(matrix: Mapping[str, np.ndarray], raters: Sequence[str], n: int) -> np.ndarray:
    """The mean over the given raters of their judgements of each pair, over those who judged it
    (NaN where none did)."""
    if not raters:
        return np.full(n, math.nan)
    stack = np.vstack([matrix[r] for r in raters])
    seen = np.isfinite(stack)
    total = np.where(seen, stack, 0.0).sum(axis=0)
    count = seen.sum(axis=0)
    return np.divide(total, count, out=np.full(n, math.nan), where=count > 0)


def leave_one_out(matrix: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """rater -> (the rater's judgements, the mean of the other raters' judgements)."""
    raters = list(matrix)
    n = len(next(iter(matrix.values()))) if matrix else 0
    return {r: (matrix[r], mean_of(matrix, [o for o in raters if o != r], n)) for r in raters}


# a statistic of (rater, mean of the others, the original pair of each position of a resample)
PairStat = Callable[[np.ndarray, np.ndarray, np.ndarray], float]


def pooled_statistic(
    sides: Mapping[str, tuple[np.ndarray, np.ndarray]], stat: PairStat
) -> tuple[np.ndarray, Callable[[np.ndarray], float]]:
    """(the pairs where some rater's leave-one-out comparison is defined, and a function of resampled
    indices of those pairs: the mean over raters of stat(rater, mean of the others) on the resampled
    pairs both sides have). The ceiling row is this mean, so it is one number per statistic."""
    defined = [np.isfinite(x) & np.isfinite(y) for x, y in sides.values()]
    keep = np.logical_or.reduce(defined) if defined else np.zeros(0, dtype=bool)
    kept = [(x[keep], y[keep], d[keep]) for (x, y), d in zip(sides.values(), defined)]

    def pooled(idx: np.ndarray) -> float:
        values = [stat(x[idx][d[idx]], y[idx][d[idx]], idx[d[idx]]) for x, y, d in kept]
        finite = [v for v in values if math.isfinite(v)]
        return float(np.mean(finite)) if finite else math.nan

    return keep, pooled


def ceiling(
    sides: Mapping[str, tuple[np.ndarray, np.ndarray]], method: str, boot: Mapping[str, Any]
) -> Correlation | None:
    """The "Radiologists (leave-one-out)" row: the mean over raters of the coefficient of a rater
    with the mean of the others, its CI from the same (clustered) resamples as the metrics (boot:
    the keyword arguments of `correlate`), no analytic p (it is a mean of dependent coefficients).
    None with fewer than two raters."""
    if len(sides) < 2:
        return None
    return pooled_ceiling(sides, lambda x, y, _: coefficient_value(method, x, y), method, boot)


def pooled_ceiling(
    sides: Mapping[str, tuple[np.ndarray, np.ndarray]], stat: PairStat, method: str, boot: Mapping[str, Any]
) -> Correlation:
    """pooled_statistic's value and CI as a Correlation row (p NaN)."""
    settings = dict(boot)
    clusters = settings.pop("clusters", None)
    keep, pooled = pooled_statistic(sides, stat)
    n = int(keep.sum())
    kept = None if clusters is None else np.asarray(clusters, dtype=str)[keep]
    low, high, status = statistic_ci(pooled, n, clusters=kept, **settings)
    n_clusters = 0 if kept is None else len(set(kept.tolist()))
    value = pooled(np.arange(n))
    return Correlation(method, value, math.nan, low, high, n, len(keep) - n, n_clusters, status)


def rater_rows(
    matrix: Mapping[str, np.ndarray],
    xs: Mapping[str, np.ndarray],
    methods: Sequence[str],
    boot: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Every metric against each rater, and each rater against the mean of the others (metric =
    CEILING), for every method: the per-rater table (GEMA-Score Table 4 layout)."""
    rows = []
    for rater, (own, others) in leave_one_out(matrix).items():
        targets = [(name, x, own) for name, x in xs.items()]
        if len(matrix) > 1:
            targets.insert(0, (CEILING, own, others))
        for name, x, y in targets:
            for method in methods:
                rows.append({"metric": name, "rater": rater, **_record(correlate(x, y, method, **boot))})
    return rows


def inter_rater_rows(matrix: Mapping[str, np.ndarray], method: str, boot: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every ordered pair of raters on the pairs both judged (computed once per unordered pair; the
    diagonal is a rater with itself: 1 where the rater's judgements vary)."""
    names = list(matrix)
    done = {(a, b): correlate(matrix[a], matrix[b], method, **boot) for a, b in combinations(names, 2)}
    rows = []
    for a in names:
        for b in names:
            c = done.get((a, b)) or done.get((b, a)) or correlate(matrix[a], matrix[a], method, **{**boot, "n_boot": 0})
            rows.append({"rater_a": a, "rater_b": b, **_record(c)})
    return rows


def mean_rater_rows(matrix: Mapping[str, np.ndarray], method: str, boot: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The inter-rater matrix's mean-rater row and column: each rater against the mean of the other
    raters (leave-one-out, so a rater is never correlated with its own judgements), the same value
    in (rater, MEAN_RATER) and (MEAN_RATER, rater). Its diagonal is left out (the mean differs per
    rater)."""
    rows = []
    for rater, (own, others) in leave_one_out(matrix).items():
        record = _record(correlate(own, others, method, **boot))
        rows += [
            {"rater_a": rater, "rater_b": MEAN_RATER, **record},
            {"rater_a": MEAN_RATER, "rater_b": rater, **record},
        ]
    return rows


def inter_rater_table(matrix: Mapping[str, np.ndarray], boot: Mapping[str, Any]) -> list[dict[str, Any]]:
    """inter_rater.csv: for each of MATRIX_METHODS every ordered pair of raters, then the mean-rater
    row and column."""
    return [
        row
        for method in MATRIX_METHODS
        for row in inter_rater_rows(matrix, method, boot) + mean_rater_rows(matrix, method, boot)
    ]


def category_rows(
    by_category: Mapping[str, Mapping[str, np.ndarray]],
    xs: Mapping[str, np.ndarray],
    method: str,
    boot: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Every metric against the raters' mean count of each error category, with the category's own
    leave-one-out ceiling first (GEMA-Score Table 5 layout)."""
    rows = []
    for category, matrix in by_category.items():
        n = len(next(iter(matrix.values())))
        mean = mean_of(matrix, list(matrix), n)
        top = ceiling(leave_one_out(matrix), method, boot)
        if top is not None:
            rows.append({"metric": CEILING, "category": category, **_record(top)})
        for name, x in xs.items():
            rows.append({"metric": name, "category": category, **_record(correlate(x, mean, method, **boot))})
    return rows


def _record(c: Correlation) -> dict[str, Any]:
    return {
        "method": c.method, "value": c.value, "p_value": c.p_value, "ci_low": c.ci_low, "ci_high": c.ci_high,
        "n": c.n, "n_clusters": c.n_clusters, "ci_status": c.ci_status,
    }  # fmt: skip
