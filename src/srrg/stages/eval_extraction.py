"""Positive-finding precision/recall/F1 of the extractor against expert gold on the IU X-ray
(Open-i) reports: their MeSH codes (with severity/location agreement) or NIH 14-label expert labels
(`--gold openi14`, definite and any-probability readings) (docs/extraction.md)."""

from __future__ import annotations

import argparse

from srrg.settings.stats import HALVES
from srrg.stages import _args

HELP = "extraction accuracy against expert gold of the IU X-ray reports (MeSH codes or NIH 14 labels)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--archive", help="NLMCXR_reports.tgz (default: the copy shipped by torchxrayvision)")
    parser.add_argument(
        "--gold",
        choices=("mesh", "openi14"),
        default="mesh",
        help=(
            "mesh: the archive's expert MeSH codes; "
            "openi14: NIH 14-label expert labels of Open-i reports (docs/extraction.md)"
        ),
    )
    parser.add_argument(
        "--gold-file",
        help="with --gold openi14: the label CSV (default: ../shared/data/openi_nih14_dev/openi_nih14_dev.csv)",
    )
    parser.add_argument("--table", help="with --gold openi14: also write the per-label table as CSV to this file")
    _args.config(parser, "extract")
    parser.add_argument("--out", help="also write the numbers as JSON to this file")
    parser.add_argument(
        "--min-support",
        type=int,
        default=1,
        help="hide findings with fewer expert codes than this and no false positives",
    )
    parser.add_argument(
        "--half",
        choices=HALVES,
        default="all",
        help="reports of the fixed development split to evaluate (docs/extraction.md)",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=2,
        help="error examples (false positives / negatives with their sentence) per finding and kind; 0 = none",
    )


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.errors import UserError
    from srrg.extract.openi14 import run_eval_extraction
    from srrg.settings.extract import ExtractConfig

    _args.check_outputs(
        {"--archive": args.archive, "--gold-file": args.gold_file}, files={"--out": args.out, "--table": args.table}
    )
    if (args.gold_file or args.table) and args.gold != "openi14":
        raise UserError("--gold-file and --table belong to --gold openi14 (the MeSH codes are in the archive)")
    config = stage_config(args.config, ExtractConfig, "extract")
    print(
        run_eval_extraction(
            args.gold,
            args.archive,
            args.gold_file,
            config,
            args.half,
            args.examples,
            args.min_support,
            args.table,
            args.out,
        )
    )
