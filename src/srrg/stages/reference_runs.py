"""Table 1's reference rows as runs (docs/model.md, "Tables"): Constant (the most frequent training
report) and Ceiling (the phantom round trip of each reference) on the test studies of the
Structured-First run with the most scored studies, written as <out-dir>/constant/ and
<out-dir>/ceiling/ in the layout of `srrg infer`, for `srrg score` to score like any run."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "the Constant and Ceiling reference predictions of Table 1, written like a run's inference output"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pairs", action="append", required=True, metavar="FILE",
        help="a Structured-First run's pairs.parquet (from `srrg infer --pairs`), once per run in run order; the "
        "run with the most studies (the first on ties) gives the studies",
    )  # fmt: skip
    parser.add_argument("--dataset", required=True, help="dataset folder whose train/ shards give the Constant report")
    parser.add_argument(
        "--out-dir", required=True,
        help="folder that receives constant/ and ceiling/, each with predictions.parquet and pairs.parquet",
    )  # fmt: skip


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.reference_runs import LABELS, run_reference_runs

    inputs = {f"--pairs {p}": p for p in args.pairs}
    outputs = {f"--out-dir {name}/": str(Path(args.out_dir) / name) for name in LABELS}
    _args.require_inputs(files=dict(inputs), folders={"--dataset": args.dataset})
    _args.check_outputs({**inputs, "--dataset": args.dataset}, folders=outputs)
    written = run_reference_runs(args.pairs, args.dataset, args.out_dir)
    for name, studies in written.items():
        print(f"srrg reference-runs: {LABELS[name]}: {studies} studies in {Path(args.out_dir) / name}")
