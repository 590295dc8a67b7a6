"""`srrg models fetch|list`: the hub weights a workflow config needs (metrics, judges, training
runs), at the revisions pinned in the package, fetched once into one folder for offline clusters
(docs/metrics.md, "Weights for offline clusters")."""

from __future__ import annotations

import argparse

HELP = "fetch (or list) every hub model the config needs into one folder, for offline runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("fetch", "list"),
                        help="fetch: download what is missing; list: what is needed and present")
    parser.add_argument("--config", default="config.yaml", metavar="FILE",
                        help="the workflow config whose metrics, judges and runs are read (default: config.yaml)")
    parser.add_argument("--dir", help="weights folder (default: $SRRG_MODELS_DIR, else .cache/srrg/models)")
    parser.add_argument("--dry-run", action="store_true",
                        help="fetch: print every model with its pinned revision, download nothing")


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.models_fetch import config_models, describe, fetch, models_dir, offline, present
    from srrg.errors import UserError
    from srrg.text.decode import read_mapping_file

    path = Path(args.config)
    if not path.is_file():
        raise UserError(f"--config {path}: no such file")
    needs, local = config_models(read_mapping_file(path))
    root = Path(args.dir) if args.dir else models_dir()
    unpinned = sum(n.revision is None for n in needs)
    if args.action == "list" or args.dry_run:
        verb = "would fetch" if args.dry_run else "needs"
        print(f"srrg models: {path} {verb} {len(needs)} repositories into {root} ({unpinned} unpinned)")
        for need in needs:
            print(f"  {describe(need, None if args.dry_run else root)}")
        for line in local:
            print(f"  {line}")
        return
    todo = [n for n in needs if not present(n, root)]
    if todo and offline():
        raise UserError(f"HF_HUB_OFFLINE=1: cannot fetch {len(todo)} repositories; "
                        "run `srrg models fetch` where the hub is reachable")
    fetch(todo, root)
    print(f"srrg models fetch: {len(todo)} fetched, {len(needs) - len(todo)} already present in {root}; "
          f"sha256 per file in {root / 'manifest.json'}")
