"""`srrg tables`: result tables in the layouts of S-RRG Table 1 and Table 2 (CSV, Markdown, LaTeX).

Table 1: methods (Structured-First runs) x BLEU-1, BLEU-4, METEOR, ROUGE, P-, D-, S-Score.
Table 2: per method, Structured-First vs Sentence-Direct x BLEU-1..4, METEOR, ROUGE.
Both add parse-rate columns (share of predictions that parsed, and that were valid without repair);
values come from each run's `srrg score` summary.csv and predictions Parquet. Missing values show as "-".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import polars as pl

from srrg.errors import UserError
from srrg.io import load_config_arg, read_table, write_text
from srrg.report import REPAIRED, VALID

TABLE1 = (("BLEU-1", "bleu_1"), ("BLEU-4", "bleu_4"), ("METEOR", "meteor"), ("ROUGE", "rouge_l"),
          ("P-Score", "p_score"), ("D-Score", "d_score"), ("S-Score", "s_score"))
TABLE2 = (("BLEU-1", "bleu_1"), ("BLEU-2", "bleu_2"), ("BLEU-3", "bleu_3"), ("BLEU-4", "bleu_4"),
          ("METEOR", "meteor"), ("ROUGE", "rouge_l"))
PARSE = (("Parsed", "parsed"), ("Valid", "valid"))
TARGET_LABEL = {"json": "Structured-First", "sentences": "Sentence-Direct"}


@dataclass(frozen=True)
class RunEntry:
    """One scored run: its method label, target, and the files its numbers come from."""

    name: str
    label: str
    target: str
    summary: str
    predictions: str


def parse_rates(statuses: Sequence[str | None]) -> dict[str, float]:
    """Shares of parsed (valid or repaired) and valid predictions; NaN when nothing was parsed
    (Sentence-Direct runs have no structure to parse)."""
    known = [s for s in statuses if s is not None]
    if not known:
        return {"parsed": math.nan, "valid": math.nan}
    return {
        "parsed": sum(s in (VALID, REPAIRED) for s in known) / len(known),
        "valid": sum(s == VALID for s in known) / len(known),
    }


def load_run(entry: RunEntry) -> dict[str, Any]:
    """The run's summary row (metric key -> value) plus its parse rates."""
    summary = read_table(entry.summary)
    if summary.height != 1:
        raise ValueError(f"{entry.summary}: expected one summary row, found {summary.height}")
    values = {k: (float(v) if isinstance(v, (int, float)) and v is not None else math.nan) for k, v in summary.row(0, named=True).items()}
    preds = pl.read_parquet(entry.predictions, columns=["parse_status"])
    return {**values, **parse_rates(preds["parse_status"].to_list())}


def _row(label: str, values: Mapping[str, float], columns: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {"Method": label, **{name: float(values.get(key, math.nan)) for name, key in columns}}


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pl.DataFrame:
    schema = {c: pl.String if c in ("Method", "Target") else pl.Float64 for c in columns}
    return pl.DataFrame(rows, schema=schema)


def table1(runs: Sequence[RunEntry], results: Mapping[str, Mapping[str, float]]) -> pl.DataFrame:
    rows = [_row(r.label, results[r.name], TABLE1 + PARSE) for r in runs if r.target == "json"]
    return _frame(rows, ["Method", *(n for n, _ in TABLE1 + PARSE)])


def table2(runs: Sequence[RunEntry], results: Mapping[str, Mapping[str, float]]) -> pl.DataFrame:
    """Methods in first-seen order, Structured-First before Sentence-Direct within a method."""
    order = {label: i for i, label in enumerate(dict.fromkeys(r.label for r in runs))}
    chosen = sorted((r for r in runs if r.target in TARGET_LABEL), key=lambda r: (order[r.label], r.target != "json"))
    rows = [{**_row(r.label, results[r.name], TABLE2 + PARSE), "Target": TARGET_LABEL[r.target]} for r in chosen]
    return _frame(rows, ["Method", "Target", *(n for n, _ in TABLE2 + PARSE)])


def fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def to_markdown(df: pl.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.iter_rows()]
    return "\n".join(lines) + "\n"


def latex_escape(text: str) -> str:
    for char, repl in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("$", r"\$")):
        text = text.replace(char, repl)
    return text


def to_latex(df: pl.DataFrame, caption: str, label: str) -> str:
    """A booktabs table; text columns left-aligned, numbers right-aligned."""
    align = "".join("l" if df[c].dtype == pl.String else "r" for c in df.columns)
    body = [" & ".join(latex_escape(fmt(v)) for v in row) + r" \\" for row in df.iter_rows()]
    return "\n".join([
        r"\begin{table}[t]", r"\centering", f"\\caption{{{latex_escape(caption)}}}", f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{align}}}", r"\toprule", " & ".join(latex_escape(c) for c in df.columns) + r" \\",
        r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\end{table}",
    ]) + "\n"


def write_table(df: pl.DataFrame, stem: Path, caption: str) -> None:
    # a missing metric is an empty CSV cell, not the string "NaN"
    write_text(stem.with_suffix(".csv"), df.with_columns(pl.col(pl.Float64).fill_nan(None)).write_csv(float_precision=4))
    write_text(stem.with_suffix(".md"), to_markdown(df))
    write_text(stem.with_suffix(".tex"), to_latex(df, caption, f"tab:{stem.name}"))


def run_tables(runs: Sequence[RunEntry], out_dir: str | Path) -> dict[str, pl.DataFrame]:
    """Write table1.{csv,md,tex} and table2.{csv,md,tex}; returns both frames."""
    results = {r.name: load_run(r) for r in runs}
    out = Path(out_dir)
    tables = {"table1": table1(runs, results), "table2": table2(runs, results)}
    write_table(tables["table1"], out / "table1", "Structured report generation: methods (Structured-First).")
    write_table(tables["table2"], out / "table2", "Structured-First vs Sentence-Direct (NLG metrics on sentence renderings).")
    return tables


def load_runs_arg(value: str) -> list[dict[str, Any]]:
    """`--runs`: an inline JSON list, or a JSON/YAML file holding a list or {"runs": [...]}."""
    if value.lstrip().startswith("["):
        data: Any = json.loads(value)
    else:
        data = load_config_arg(value).get("runs")
    if not isinstance(data, list):
        raise UserError("--runs must be a JSON list of run entries (or an object with a `runs` list)")
    return data
