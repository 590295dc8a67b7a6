"""The ReXrank submission file: the test file's studies as written, each with `model_prediction`
(the generated report) from a predictions table; a predictions table whose studies are not exactly
the test file's is refused (docs/inputs.md, "ReXrank")."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "write the ReXrank submission JSON (test file + model_prediction per study) from predictions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--test", required=True, help="ReXrank test file (ReXRank_<set>_test.json)")
    parser.add_argument(
        "--predictions", required=True, help="predictions table (Parquet, JSONL, JSON or CSV), one row per study"
    )
    parser.add_argument("--id-col", default="study_id", help="column of the study ids (default: study_id)")
    parser.add_argument(
        "--pred-col",
        default="report",
        help="column of the generated report text (default: report; `sentences` for a json-target model's rendering)",
    )
    parser.add_argument("--out", required=True, help="output submission JSON")


def run(args: argparse.Namespace) -> None:
    from srrg.sources.rexrank import run_rexrank_export

    _args.require_inputs(files={"--test": args.test, "--predictions": args.predictions})
    _args.check_outputs({"--test": args.test, "--predictions": args.predictions}, files={"--out": args.out})
    line = run_rexrank_export(args.test, args.predictions, args.out, args.id_col, args.pred_col)
    print(f"srrg rexrank-export: {line}")
