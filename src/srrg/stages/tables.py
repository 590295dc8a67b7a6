"""Table 1: methods x BLEU-1, BLEU-4, METEOR, ROUGE, P-, D-, S-Score; Table 2: Structured-First vs
Sentence-Direct; both with parse rates (docs/model.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "result tables in the S-RRG Table 1 / Table 2 layouts (CSV, Markdown, LaTeX)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runs",
        required=True,
        metavar="JSON|FILE",
        help="the runs to tabulate: a JSON list (inline or in a file) of {name, label, target, summary, predictions}",
    )
    parser.add_argument("--out-dir", required=True, help="folder for table1/table2 .csv, .md and .tex")
    parser.add_argument(
        "--dataset",
        help="dataset folder: its train/ shards give Table 1's Constant row (the most frequent training report), "
        "scored with the Ceiling row (phantom runs) on the runs' test studies; unset = no reference rows",
    )
    parser.add_argument("--metrics", default="bleu,meteor,rouge_l,cider,s_score", help="metrics of the reference rows (as given to `srrg score`)")
    _args.config(parser, "score", "options per metric for the reference rows, as for `srrg score --config`")
    parser.add_argument("--section", choices=("findings", "impression", "both"), default="both",
                        help="the score.section the runs were scored with (named in the reference rows' signatures)")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="put numbers made differently (different signatures, all named in the caption) "
                        "in one column; default: refuse (docs/metrics.md, 'Signatures')")


def run(args: argparse.Namespace) -> None:
    from srrg.config import from_dict
    from srrg.errors import UserError
    from srrg.io import load_config_arg
    from srrg.metrics import metric_options
    from srrg.tables import RunEntry, load_runs_arg, run_tables, to_markdown

    runs = [from_dict(RunEntry, r, f"runs[{i}]") for i, r in enumerate(load_runs_arg(args.runs))]
    if not runs:
        raise UserError("--runs lists no run: nothing to tabulate")
    inputs = {f"--runs {r.name} {k}": getattr(r, k) for r in runs for k in ("summary", "predictions")}
    _args.check_outputs({**inputs, "--dataset": args.dataset}, folders={"--out-dir": args.out_dir})
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    options = metric_options(metrics, load_config_arg(args.config))
    tables = run_tables(runs, args.out_dir, args.dataset, metrics, options, args.allow_mixed, args.section)
    for name, df in tables.items():
        print(f"{name}:\n{to_markdown(df)}")
