"""VERT's over/under-estimation analysis (docs/judges.md, "VERT's grid"): how far a judge's count of
clinically significant errors lies from the radiologists' count, by the radiologists' count. A
judge that flattens (too many errors on clean reports, too few on bad ones) shows a positive
difference in the low bins and a negative one in the high bins, which a correlation hides."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from srrg.metaeval import tables

TOP_BIN = 4  # human counts of 4 or more share the last bin ("4+")
COLUMNS = ("model", "human_errors", "n", "mean_difference", "over", "exact", "under")


def human_bin(count: float) -> str:
    """The bin of a (rater-mean) human count: rounded half up to an integer, TOP_BIN and more as "4+"."""
    k = math.floor(count + 0.5)
    return f"{TOP_BIN}+" if k >= TOP_BIN else str(k)


def over_under_rows(model: str, judge: Mapping[str, float], human: Mapping[str, float]) -> list[dict]:
    """One row per human-count bin (only bins with pairs, in count order) over the pairs both sides
    have a finite count for: n, the mean of judge minus human, and the shares of pairs where the
    judge counts more (over), exactly as many (exact) and fewer (under)."""
    by_bin: dict[str, list[float]] = {}
    for pair, h in human.items():
        j = judge.get(pair)
        if j is None or h is None or not (math.isfinite(j) and math.isfinite(h)):
            continue
        by_bin.setdefault(human_bin(h), []).append(j - h)
    rows = []
    for label in sorted(by_bin, key=lambda b: int(b.rstrip("+"))):
        diffs = by_bin[label]
        n = len(diffs)
        rows.append({
            "model": model, "human_errors": label, "n": n, "mean_difference": sum(diffs) / n,
            "over": sum(d > 0 for d in diffs) / n, "exact": sum(d == 0 for d in diffs) / n,
            "under": sum(d < 0 for d in diffs) / n,
        })  # fmt: skip
    return rows


def over_under_table(rows: Sequence[dict]) -> pl.DataFrame:
    """over_under.csv's frame (COLUMNS), typed even when empty."""
    schema = {"model": pl.String, "human_errors": pl.String, "n": pl.Int64, "mean_difference": pl.Float64,
              "over": pl.Float64, "exact": pl.Float64, "under": pl.Float64}  # fmt: skip
    return pl.DataFrame(list(rows), schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def over_under_markdown(table: pl.DataFrame, caption: str) -> str:
    """A row per (judge model, human-count bin)."""
    rows = [
        [r["model"], r["human_errors"], str(r["n"]), f"{r['mean_difference']:+.2f}", f"{r['over']:.2f}",
         f"{r['exact']:.2f}", f"{r['under']:.2f}"]
        for r in table.iter_rows(named=True)
    ]  # fmt: skip
    header = ("Judge model", "Human errors", "n", "Judge − human", "Over", "Exact", "Under")
    return tables.markdown(header, rows, caption)
