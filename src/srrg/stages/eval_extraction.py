"""Positive-finding precision/recall/F1 and severity/location agreement of the extractor against
the expert MeSH codes of the IU X-ray reports (docs/extraction.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "extraction accuracy against the IU X-ray expert MeSH codes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--archive", help="NLMCXR_reports.tgz (default: the copy shipped by torchxrayvision)")
    _args.config(parser, "extract")
    parser.add_argument("--out", help="also write the numbers as JSON to this file")
    parser.add_argument("--min-support", type=int, default=1, help="hide findings with fewer expert codes than this and no false positives")
    parser.add_argument("--half", choices=("dev", "heldout", "all"), default="all", help="reports of the fixed development split to evaluate (docs/extraction.md)")
    parser.add_argument("--examples", type=int, default=2, help="error examples (false positives / negatives with their sentence) per finding and kind; 0 = none")


def run(args: argparse.Namespace) -> None:
    import json

    from srrg.extract.evaluation import format_result, run_iu
    from srrg.io import write_text

    result, seconds, n = run_iu(args.archive, args.config, half=args.half, examples=args.examples)
    print(format_result(result, args.min_support))
    print(f"extraction: {n} reports in {seconds:.2f} s ({n / seconds:.0f} reports/s, one process)")
    if args.out:
        write_text(args.out, json.dumps({**result.to_dict(), "seconds": seconds, "n": n}, indent=2))
