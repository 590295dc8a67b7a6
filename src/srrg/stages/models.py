"""`srrg models fetch|list`: the hub weights a workflow config needs (metrics, judges, training
runs), at the revisions pinned in the package, fetched once into one folder for offline clusters
(docs/metrics.md, "Weights for offline clusters")."""

from __future__ import annotations

import argparse

HELP = "fetch (or list) every hub model the config needs into one folder, for offline runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", choices=("fetch", "list"), help="fetch: download what is missing; list: what is needed and present"
    )
    parser.add_argument(
        "--config",
        default="config.yaml",
        metavar="FILE",
        help="the workflow config whose metrics, judges and runs are read (default: config.yaml)",
    )
    parser.add_argument("--dir", help="weights folder (default: $SRRG_MODELS_DIR, else .cache/srrg/models)")
    parser.add_argument(
        "--dry-run", action="store_true", help="fetch: print every model with its pinned revision, download nothing"
    )


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.errors import UserError
    from srrg.models_fetch import run_models
    from srrg.stages import _args

    path = Path(args.config)
    if not path.is_file():
        raise UserError(f"--config {path}: no such file")
    _args.check_outputs({"--config": args.config}, folders={"--dir": args.dir})
    run_models(path, args.action, Path(args.dir) if args.dir else None, args.dry_run)
