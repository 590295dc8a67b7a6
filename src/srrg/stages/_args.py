"""Options that several commands share, worded for users (docs/cli.md)."""

from __future__ import annotations

import argparse


def config(parser: argparse.ArgumentParser, section: str, what: str | None = None) -> None:
    """--config: the settings of one config.yaml section."""
    parser.add_argument(
        "--config",
        metavar="JSON|FILE",
        help=what
        or f"settings of the `{section}` section of config.yaml, as inline JSON or a .json/.yaml file "
        "(unset keys take their defaults, listed in docs/config.md)",
    )


def mapping(value: str | None) -> dict:
    """A JSON/YAML mapping argument that is no config section (a stage records or forwards it as it
    is: --upstream-config, an adapter's --options); settings go through srrg.config.stage_config."""
    from srrg.text.decode import config_value

    return config_value(value)


def progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="do not draw progress bars (logs, batch jobs)")


def report_columns(parser: argparse.ArgumentParser) -> None:
    """Column names of the reference/hypothesis tables that `srrg score` joins."""
    parser.add_argument(
        "--id-col", default="study_id", help="column that identifies a study in both tables (default: study_id)"
    )
    parser.add_argument("--ref-col", default="report", help="column of the reference reports (default: report)")
    parser.add_argument("--hyp-col", default="report", help="column of the generated reports (default: report)")


def require_inputs(files: dict[str, str] | None = None, folders: dict[str, str] | None = None) -> None:
    """Option -> path of the inputs a stage reads, checked before it imports torch or spaCy: under
    load those imports take most of a minute before a mistyped path would be reported."""
    from pathlib import Path

    from srrg.errors import UserError

    for option, path in (files or {}).items():
        if not Path(path).is_file():
            why = (
                "is a folder, expected a file"
                if Path(path).is_dir()
                else "not a regular file (a pipe, device or socket)"
                if Path(path).exists()
                else "no such file"
            )
            raise UserError(f"{option} {path}: {why}")
    for option, path in (folders or {}).items():
        if not Path(path).is_dir():
            raise UserError(
                f"{option} {path}: {'is a file, expected a folder' if Path(path).exists() else 'no such folder'}"
            )


def check_outputs(
    inputs: dict[str, str | None],
    files: dict[str, str | None] | None = None,
    folders: dict[str, str | None] | None = None,
) -> None:
    """Option -> path of a stage's inputs and outputs (None: not given), checked before any work:
    an output that is one of the inputs, or an output folder that holds one directly (where the
    command writes its files), would replace or mix with what the stage reads (`infer --out
    model.pt`, `score --out` around its `--refs`); inputs in sub-folders of an output folder are
    other stages' files (the workflow's judge/<run>/subset/). Two outputs on one path would
    overwrite each other; a file output on an existing folder (or the reverse) cannot be written.
    Each is a UserError naming both options (docs/cli.md). Paths are compared resolved (symbolic
    links followed), so another spelling of the same file is caught too."""
    import os

    from srrg.errors import UserError

    def real(path: str) -> str:
        return os.path.realpath(os.path.expanduser(path))

    given = {opt: real(p) for opt, p in inputs.items() if p}
    outs = [(opt, p, "file") for opt, p in (files or {}).items() if p]
    outs += [(opt, p, "folder") for opt, p in (folders or {}).items() if p]
    seen: dict[str, str] = {}
    for option, path, kind in outs:
        target = real(path)
        if target in seen:
            raise UserError(f"{option} {path}: is also {seen[target]}; each output needs its own path")
        seen[target] = option
        for in_option, source in given.items():
            if source == target:
                raise UserError(f"{option} {path}: is also the input {in_option}; an output must not replace an input")
            if kind == "folder" and os.path.dirname(source) == target:
                raise UserError(
                    f"{option} {path}: holds the input {in_option} {inputs[in_option]}; "
                    "choose an output outside the inputs"
                )
        if kind == "file" and os.path.isdir(target):
            raise UserError(f"{option} {path}: is a folder, expected a file to write")
        if kind == "folder" and os.path.exists(target) and not os.path.isdir(target):
            raise UserError(f"{option} {path}: is a file, expected a folder to write into")
