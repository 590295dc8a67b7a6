"""The one `srrg` command: one subcommand per module of srrg.stages (docs/cli.md).

A stage module defines HELP (one line), add_arguments(parser) and run(args); it imports heavy
libraries inside run(), so `srrg --help` and the data stages do not pay for torch or spaCy. The
command name is the module name with '-' for '_', and it equals the Snakemake rule that runs it.
This wrapper owns argument parsing and the one error path of every command:

- srrg.errors.UserError (ConfigError included) and a missing/unreadable input path the user named:
  one line on stderr, exit 2;
- srrg.errors.StageFailed: one line, exit 1 (partial outputs stay on disk);
- anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence
from typing import Any

from srrg import __version__, stages
from srrg.errors import StageFailed, UserError, one_line

PROG = "srrg"
# OSErrors that mean "the path you gave is wrong", not "srrg has a bug"
_PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def stage_names() -> list[str]:
    """Module names of srrg.stages (found without importing them)."""
    return sorted(m.name for m in pkgutil.iter_modules(stages.__path__) if not m.name.startswith("_"))


def command_name(stage: str) -> str:
    return stage.replace("_", "-")


def load_stage(command: str) -> Any:
    """The stage module of a command name (either spelling); KeyError for an unknown command."""
    name = command.replace("-", "_")
    if name not in stage_names():
        raise KeyError(command)
    return importlib.import_module(f"{stages.__name__}.{name}")


def usage() -> str:
    names = stage_names()
    width = max(len(command_name(n)) for n in names)
    lines = [f"  {command_name(n):<{width}}  {load_stage(n).HELP}" for n in names]
    return (
        f"usage: {PROG} <command> [options]     ({PROG} <command> --help for its options)\n\n"
        "commands:\n" + "\n".join(lines)
    )


def build_parser(stage: Any, command: str) -> argparse.ArgumentParser:
    doc = (stage.__doc__ or "").strip()
    parser = argparse.ArgumentParser(
        prog=f"{PROG} {command}",
        description=stage.HELP if not doc else f"{stage.HELP}\n\n{doc}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stage.add_arguments(parser)
    return parser


def run_stage(stage: Any, args: argparse.Namespace, command: str) -> int:
    """Run a parsed command with the one error path described in the module docstring."""
    try:
        stage.run(args)
    except UserError as err:
        print(f"{PROG} {command}: error: {one_line(err)}", file=sys.stderr)
        return UserError.exit_code
    except _PATH_ERRORS as err:
        print(f"{PROG} {command}: error: {one_line(err)}", file=sys.stderr)
        return UserError.exit_code
    except StageFailed as err:
        print(f"{PROG} {command}: failed: {one_line(err)}", file=sys.stderr)
        return StageFailed.exit_code
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args:
        print(usage(), file=sys.stderr)
        return 2
    if args[0] in {"-h", "--help"}:
        print(usage())
        return 0
    if args[0] in {"-V", "--version"}:
        print(f"{PROG} {__version__}")
        return 0
    try:
        stage = load_stage(args[0])
    except KeyError:
        print(f"{PROG}: unknown command {args[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    command = command_name(stage.__name__.rsplit(".", 1)[1])
    try:
        parsed = build_parser(stage, command).parse_args(args[1:])
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2, message printed)
        return int(exit_.code or 0)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return run_stage(stage, parsed, command)


if __name__ == "__main__":
    raise SystemExit(main())
