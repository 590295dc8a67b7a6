"""GEMA-Score Tables 1-2 from one run: the metrics correlated with the clinically significant and
with the clinically insignificant human error counts of one rating set, side by side
(docs/metaeval.md, "GEMA Tables 1-2")."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_text
from srrg.metaeval import tables
from srrg.metaeval.run import MetaevalResult, run_metaeval_correlate
from srrg.settings.metaeval import MetaevalConfig

# the two error targets of GEMA Tables 1-2 (srrg.metaeval.readers.common.TARGETS) and their column labels
TARGETS = (("errors_significant", "Significant"), ("errors_insignificant", "Insignificant"))
# the adapters whose published layout records error counts per significance (docs/metaeval.md)
ERROR_COUNT_ADAPTERS = ("radeval_expert", "radevalx", "radpref", "rexval")
GEMA = "gema"  # the per-report column of GEMA-Score (srrg.metrics.judges.gema)
CSV_COLUMNS = ["metric"] + [f"{t}_{m}{p}" for t, _ in TARGETS for m in ("kendall", "spearman") for p in ("", "_p")]


def run_metaeval_gema(
    scores: str, ratings: str, pairs: str | None, cfg: MetaevalConfig, out_dir: str | Path
) -> dict[str, MetaevalResult]:
    """Correlate once per error target (every table of `metaeval-correlate` under out_dir/<target>/)
    and write table_gema12.{md,csv,tex} with both targets side by side. A rating set without error
    counts is an error: it has nothing to put in these tables."""
    rating_rows = read_table(ratings)
    if "kind" not in rating_rows.columns or not (rating_rows["kind"] == "errors").any():
        raise UserError(
            f"{ratings}: no error counts (kind 'errors'); GEMA Tables 1-2 need a rating set that counts "
            f"errors per significance (adapters {', '.join(ERROR_COUNT_ADAPTERS)})"
        )
    out = Path(out_dir)
    results = {
        target: run_metaeval_correlate(
            scores, ratings, pairs, dataclasses.replace(cfg, human_target=target, human_column=None), out / target
        )
        for target, _ in TARGETS
    }
    labelled = [(label, results[target].correlations) for target, label in TARGETS]
    header, rows = tables.gema_targets_table(labelled)
    first = results[TARGETS[0][0]].info
    caption = (
        "Correlation with the human error counts, clinically significant and insignificant (counts negated: "
        f"higher is better on both sides); n = {first['n_with_human']} rated pairs, {first['n_boot']} bootstrap "
        f"resamples of {first['resampling']} (seed {first['seed']}); CIs in <target>/table_gema.md."
    )
    note = f"{cfg.caveat}\n\n" if cfg.caveat else ""
    write_text(out / "table_gema12.md", note + tables.markdown(header, rows, caption))
    write_text(out / "table_gema12.csv", pl.DataFrame(rows, schema=CSV_COLUMNS, orient="row").write_csv())
    write_text(out / "table_gema12.tex", tables.latex(header, rows, caption))
    return results


def run_gema_grid(
    cells: Sequence[tuple[str, str]], ratings: str, pairs: str | None, cfg: MetaevalConfig, out_dir: str | Path
) -> pl.DataFrame:
    """GEMA's backbone grid: cells are (judge model, per_report.parquet of GEMA with that model).
    Each model's GEMA column gets GEMA Tables 1-2 under out_dir/<model>/ (run_metaeval_gema), and
    gema_grid.{md,csv,tex} put them together, one row per backbone, both error targets side by
    side. Returns the long frame (model, target, method, value, p_value, ...)."""
    if not cells:
        raise UserError("no grid cell: give at least one --cell MODEL PER_REPORT")
    models = [m for m, _ in cells]
    unsafe = [m for m in models if not re.fullmatch(r"[A-Za-z0-9_.-]+", m) or set(m) == {"."}]
    if unsafe:  # each model's tables go to a folder of its name
        raise UserError(f"judge model names may hold letters, digits, '_', '-', '.' only: {unsafe}")
    if len(set(models)) != len(models):
        raise UserError(f"a judge model given twice: {sorted({m for m in models if models.count(m) > 1})}")
    out = Path(out_dir)
    per_model_cfg = dataclasses.replace(
        cfg, metrics=(GEMA,), lower_is_better=(), ensembles={}, paired_reference=None, human_column=None
    )
    by_target: dict[str, list[pl.DataFrame]] = {t: [] for t, _ in TARGETS}
    first = None
    for model, path in cells:
        columns = read_table(path).columns
        if GEMA not in columns:
            raise UserError(f"{path}: lacks column {GEMA!r}; expected the per_report.parquet of GEMA with {model}")
        results = run_metaeval_gema(path, ratings, pairs, per_model_cfg, out / model)
        first = first or results[TARGETS[0][0]].info
        for target, _ in TARGETS:
            rows = results[target].correlations.filter(pl.col("metric") == GEMA)
            by_target[target].append(rows.with_columns(pl.lit(model).alias("metric")))
    labelled = [(label, pl.concat(by_target[target])) for target, label in TARGETS]
    header, rows = tables.gema_targets_table(labelled)
    header = ("Judge model", *header[1:])
    caption = (
        "GEMA-Score Tables 1-2 per judge backbone: GEMA's correlation with the human error counts, clinically "
        f"significant and insignificant (counts negated: higher is better); n = {first['n_with_human']} rated pairs, "
        f"{first['n_boot']} bootstrap resamples of {first['resampling']} (seed {first['seed']}); CIs in "
        "<model>/<target>/table_gema.md."
    )
    note = f"{cfg.caveat}\n\n" if cfg.caveat else ""
    write_text(out / "gema_grid.md", note + tables.markdown(header, rows, caption))
    write_text(out / "gema_grid.tex", tables.latex(header, rows, caption))
    long = pl.concat(
        [frame.rename({"metric": "model"}).select(pl.lit(t).alias("target"), pl.all()) for t, f in by_target.items()
         for frame in f]
    )  # fmt: skip
    write_text(out / "gema_grid.csv", long.write_csv())
    return long
