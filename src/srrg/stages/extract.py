"""Adds `structured` (MIMIC-STRUC JSON with raw locations), `provenance` (the kept mentions with
character spans) and `extract_status` (ok | empty_text | truncated | long_sentence | error;
docs/extraction.md) to every input row."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "free-text report sections -> structured reports (MIMIC-STRUC), one row per input row"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in",
        dest="inp",
        metavar="TABLE",
        required=True,
        help="studies table (.parquet, .jsonl or .csv) with the report section columns",
    )
    parser.add_argument("--out", required=True, help="output Parquet file (extracted.parquet)")
    _args.config(parser, "extract")
    parser.add_argument(
        "--n-process",
        type=int,
        metavar="N",
        help="worker processes, overriding extract.n_process (the workflow passes the cores the rule was given)",
    )
    _args.progress(parser)


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.settings.extract import ExtractConfig

    _args.require_inputs(files={"--in": args.inp})
    _args.check_outputs({"--in": args.inp}, files={"--out": args.out})
    # the --n-process flag over extract.n_process; a wrong setting is named before spaCy loads
    flag = {} if args.n_process is None else {"n_process": args.n_process}
    config = stage_config(args.config, ExtractConfig, "extract", adjust=lambda settings: {**settings, **flag})
    import sys
    import time

    from srrg.extract.table import run_extract

    start = time.perf_counter()
    line = run_extract(args.inp, args.out, config, progress=not args.no_progress)
    print(f"extract: {line}, {time.perf_counter() - start:.1f} s", file=sys.stderr)
