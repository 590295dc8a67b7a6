"""Dataset statistics: the three distributions of S-RRG Fig. 5 (most frequent positive findings,
probability, severity) as CSV tables and PNG bar charts, read from the dataset shards.

Counts are over positive findings of all splits (a finding counts once per study, as the
structured report holds one entry per name); `share` is the count over the number of studies
(findings) or over the number of positive findings (probability, severity).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from srrg.dataset import read_split
from srrg.errors import UserError
from srrg.io import atomic_path
from srrg.report import StructuredReport, parse_reports
from srrg.settings.splits import SPLITS
from srrg.settings.stats import StatsConfig

PROBABILITY_LABELS = {3: "stated (3)", 2: "probable (2)", 1: "uncertain (1)", None: "missing"}
NO_LEVEL = "(none)"
TABLES = ("findings", "probability", "severity")


def read_dataset(dataset_dir: str | Path) -> pl.DataFrame:
    """The study_id, split and structured columns of every split (srrg.dataset.read_split: each
    shard checked against manifest.json first)."""
    frame = pl.concat([read_split(dataset_dir, s, ["split", "structured"]) for s in SPLITS])
    if frame.height == 0:
        raise UserError(f"{dataset_dir}: the dataset holds no study; statistics of nothing would be empty figures")
    return frame


def _table(counts: Counter[Any], total: int, key: str, labels: Iterable[Any]) -> pl.DataFrame:
    keys = list(labels)
    return pl.DataFrame(
        {
            key: [str(k) for k in keys],
            "count": [counts.get(k, 0) for k in keys],
            "share": [counts.get(k, 0) / total if total else 0.0 for k in keys],
        },
        schema={key: pl.Utf8, "count": pl.Int64, "share": pl.Float64},
    )


def distributions(reports: Sequence[StructuredReport], top_k: int) -> dict[str, pl.DataFrame]:
    """The three Fig. 5 tables from parsed reports.

    findings: the top_k positive names by count (ties by name), share = count / studies;
    probability: 3, 2, 1 (and missing when present), share = count / positive findings;
    severity: levels by count, "(none)" for findings without one, share = count / positive findings.
    """
    names: Counter[str] = Counter()
    probs: Counter[int | None] = Counter()
    levels: Counter[str] = Counter()
    for r in reports:
        for f in r.positive:
            names[f.name] += 1
            probs[f.probability] += 1
            levels[f.level or NO_LEVEL] += 1
    n_pos = sum(probs.values())
    top = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
    prob_keys = [3, 2, 1] + ([None] if probs.get(None) else [])
    severity = _table(levels, n_pos, "level", [k for k, _ in sorted(levels.items(), key=lambda kv: (-kv[1], kv[0]))])
    probability = _table(probs, n_pos, "probability", prob_keys).with_columns(
        pl.Series("label", [PROBABILITY_LABELS[k] for k in prob_keys], dtype=pl.Utf8)
    )
    return {
        "findings": _table(Counter(dict(top)), len(reports), "finding", [k for k, _ in top]),
        "probability": probability,
        "severity": severity,
    }


def plot_bar(
    table: pl.DataFrame, label_col: str, title: str, path: str | Path, dpi: int, horizontal: bool, count_label: str
) -> None:
    """One bar chart, written atomically; empty tables give a chart that says so. count_label names
    what the counts count, on the count axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = table[label_col].to_list()
    counts = table["count"].to_list()
    fig, ax = plt.subplots(figsize=(7, max(3.0, 0.3 * len(labels) + 1.2)) if horizontal else (6, 3.5))
    if not labels:
        ax.text(0.5, 0.5, "no positive findings", ha="center", va="center", transform=ax.transAxes)
    elif horizontal:
        ax.barh(labels[::-1], counts[::-1], color="#4c72b0")
        ax.set_xlabel(count_label)
    else:
        ax.bar(labels, counts, color="#4c72b0")
        ax.set_ylabel(count_label)
        ax.tick_params(axis="x", rotation=30)
    ax.set_title(title)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)


def write_stats(df: pl.DataFrame, out_dir: str | Path, cfg: StatsConfig) -> dict[str, pl.DataFrame]:
    """CSV + PNG per distribution in out_dir: findings, probability, severity."""
    out = Path(out_dir)
    reports = [report for report, _ in parse_reports(df["structured"].to_list())]  # each distinct text parsed once
    tables = distributions(reports, cfg.top_k)
    label = {"findings": "finding", "probability": "label", "severity": "level"}
    # a finding counts once per study; probability and severity count positive findings
    counted = {"findings": "studies", "probability": "positive findings", "severity": "positive findings"}
    titles = {
        "findings": f"Most frequent positive findings (top {cfg.top_k}, {len(reports)} studies)",
        "probability": "Probability of positive findings",
        "severity": "Severity of positive findings",
    }
    for name in TABLES:
        with atomic_path(out / f"{name}.csv") as tmp:
            tables[name].write_csv(tmp)
        plot_bar(
            tables[name],
            label[name],
            titles[name],
            out / f"{name}.png",
            cfg.dpi,
            horizontal=name != "probability",
            count_label=counted[name],
        )
    return tables


def run_stats(dataset_dir: str | Path, out_dir: str | Path, cfg: StatsConfig) -> str:
    """The stats stage: every split's reports read (checked) and their distributions written to
    out_dir; returns the counts line it prints."""
    df = read_dataset(dataset_dir)
    tables = write_stats(df, out_dir, cfg)
    n_pos = int(tables["probability"]["count"].sum())
    return (
        f"studies={df.height} positive findings={n_pos} distinct shown={tables['findings'].height} "
        f"levels={tables['severity'].height}"
    )
