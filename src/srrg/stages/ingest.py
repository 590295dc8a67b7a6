"""Every study of the collection is a row; `ingest_status` says why one has no usable report or images."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "read IU X-ray, MIMIC-CXR or SRRG reports into studies.parquet (one row per study)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source", choices=["iu_xray", "mimic_cxr", "srrg"], help="collection to read (overrides `source` of --config)"
    )
    _args.config(parser, "ingest")
    parser.add_argument(
        "--n-process",
        type=int,
        metavar="N",
        help="worker processes, overriding ingest.n_process (the workflow passes the cores the rule was given)",
    )
    parser.add_argument("--out", required=True, help="output Parquet file (studies.parquet)")
    _args.progress(parser)


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.config import stage_config
    from srrg.ingest import input_paths, run_ingest
    from srrg.settings.ingest import IngestConfig

    flag = {"source": args.source} if args.source else {}  # --source over ingest.source
    flag |= {} if args.n_process is None else {"n_process": args.n_process}  # --n-process over ingest.n_process
    cfg = stage_config(args.config, IngestConfig, "ingest", adjust=lambda settings: {**settings, **flag})
    _args.check_outputs(input_paths(cfg), files={"--out": args.out})
    print(run_ingest(cfg, args.out, progress=not args.no_progress), file=sys.stderr)
