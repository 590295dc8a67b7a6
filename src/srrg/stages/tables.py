"""Table 1: methods x BLEU-1, BLEU-4, METEOR, ROUGE, P-, D-, S-Score, then the reference runs;
Table 2: Structured-First vs Sentence-Direct; both with parse rates (docs/model.md). Every number
comes from a run's `srrg score` summary: this stage only lays them out."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "result tables in the S-RRG Table 1 / Table 2 layouts (CSV, Markdown, LaTeX)"
ENTRY = "{name, label, target, summary, predictions[, structure_summary, rl_summary]}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs",
        required=True,
        metavar="JSON|FILE",
        help=f"the runs to tabulate: a JSON list (inline or in a file) of {ENTRY}",
    )
    parser.add_argument(
        "--references",
        metavar="JSON|FILE",
        help=f"reference runs that end Table 1 (srrg reference-runs, scored by srrg score), as --runs: {ENTRY}; "
        "Ceiling is shown only beside runs that saw phantoms; unset = no reference rows",
    )
    parser.add_argument("--out-dir", required=True, help="folder for table1/table2 .csv, .md and .tex")
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="put numbers made differently (different signatures, all named in the caption) "
        "in one column; default: refuse (docs/metrics.md, 'Signatures')",
    )


def run(args: argparse.Namespace) -> None:
    from srrg.errors import UserError
    from srrg.run_tables import load_run_entries, run_tables, to_markdown

    runs, references = load_run_entries(args.runs, "--runs"), load_run_entries(args.references, "--references")
    if not runs:
        raise UserError("--runs lists no run: nothing to tabulate")
    names = [r.name for r in [*runs, *references]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserError(f"run name(s) {', '.join(twice)} given twice in --runs/--references; each needs its own name")
    inputs = {
        f"--runs {r.name} {k}": getattr(r, k)
        for r in [*runs, *references]
        for k in ("summary", "predictions", "structure_summary")
        if getattr(r, k)
    }
    _args.check_outputs(inputs, folders={"--out-dir": args.out_dir})
    tables = run_tables(runs, args.out_dir, references, args.allow_mixed)
    for name, df in tables.items():
        print(f"{name}:\n{to_markdown(df)}")
