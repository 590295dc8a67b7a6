"""Table 1: methods x BLEU-1, BLEU-4, METEOR, ROUGE, P-, D-, S-Score; Table 2: Structured-First vs
Sentence-Direct; both with parse rates (docs/model.md)."""

from __future__ import annotations

import argparse

HELP = "result tables in the S-RRG Table 1 / Table 2 layouts (CSV, Markdown, LaTeX)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs",
        required=True,
        metavar="JSON|FILE",
        help="the runs to tabulate: a JSON list (inline or in a file) of {name, label, target, summary, predictions}",
    )
    parser.add_argument("--out-dir", required=True, help="folder for table1/table2 .csv, .md and .tex")


def run(args: argparse.Namespace) -> None:
    from srrg.config import from_dict
    from srrg.errors import UserError
    from srrg.tables import RunEntry, load_runs_arg, run_tables, to_markdown

    runs = [from_dict(RunEntry, r, f"runs[{i}]") for i, r in enumerate(load_runs_arg(args.runs))]
    if not runs:
        raise UserError("--runs lists no run: nothing to tabulate")
    for name, df in run_tables(runs, args.out_dir).items():
        print(f"{name}:\n{to_markdown(df)}")
