"""The schema is generated from the config dataclasses (srrg.config_tree), so every default is
written once; a test fails when the committed file is stale (docs/config.md)."""

from __future__ import annotations

import argparse

HELP = "write (or check) the config schema generated from the config dataclasses"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="file to write (default: the schema shipped in the package)")
    parser.add_argument("--check", action="store_true", help="only compare with the file; exit 1 when it is stale")


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from srrg.config import SCHEMA_PATH
    from srrg.config_tree import run_config_schema

    print(run_config_schema(Path(args.out or SCHEMA_PATH), args.check))
