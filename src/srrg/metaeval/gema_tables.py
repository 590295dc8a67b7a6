"""GEMA-Score Tables 1-2 from one run: the metrics correlated with the clinically significant and
with the clinically insignificant human error counts of one rating set, side by side
(docs/metaeval.md, "GEMA Tables 1-2")."""

from __future__ import annotations

import dataclasses
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
