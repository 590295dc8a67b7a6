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
    trees: dict[str, str | None] | None = None,
    clean: bool = True,
) -> None:
    """Option -> path of a stage's inputs and outputs (None: not given), checked before any work
    (docs/cli.md, "Outputs never replace inputs"). Refused, each a UserError naming both options:
    an output that is one of the inputs; an output inside an input folder (`cases --out` in the
    dataset folder would replace a shard); an output folder that holds an input directly (where the
    command writes its files) or, for `trees` (folders the command writes and prunes at any depth,
    as the dataset commands their split folders), anywhere below; two outputs on one path; a file
    output on a folder, device, pipe or socket (as root, `--out /dev/null` would replace the
    system's node), or a folder output on anything but a folder. Inputs in sub-folders of an
    ordinary output folder are other stages' files (the workflow's judge/<run>/subset/). Paths are
    compared resolved (symbolic links and `..` followed), so another spelling of the same file is
    caught too. Once all pass, the temporary files a killed run left in the outputs are removed,
    unless `clean` is False: a folder that jobs running at once write into (the shard jobs' split
    folders) holds their live temporary files too, so such a job removes only its own."""
    import os
    import stat

    from srrg.errors import UserError
    from srrg.io import remove_stale_temps

    def real(path: str) -> str:
        return os.path.realpath(os.path.expanduser(path))

    def under(path: str, folder: str) -> bool:
        return path.startswith(folder.rstrip(os.sep) + os.sep)

    given = {opt: real(p) for opt, p in inputs.items() if p}
    outs = [(opt, p, "file") for opt, p in (files or {}).items() if p]
    outs += [(opt, p, "folder") for opt, p in (folders or {}).items() if p]
    outs += [(opt, p, "tree") for opt, p in (trees or {}).items() if p]
    seen: dict[str, str] = {}
    for option, path, kind in outs:
        target = real(path)
        if target in seen:
            raise UserError(f"{option} {path}: is also {seen[target]}; each output needs its own path")
        seen[target] = option
        for in_option, source in given.items():
            if source == target:
                raise UserError(f"{option} {path}: is also the input {in_option}; an output must not replace an input")
            if os.path.isdir(source) and under(target, source):
                raise UserError(
                    f"{option} {path}: is inside the input folder {in_option} {inputs[in_option]}; "
                    "choose an output outside the inputs"
                )
            if (kind == "folder" and os.path.dirname(source) == target) or (kind == "tree" and under(source, target)):
                raise UserError(
                    f"{option} {path}: holds the input {in_option} {inputs[in_option]}; "
                    "choose an output outside the inputs"
                )
        mode = os.stat(target).st_mode if os.path.exists(target) else None
        if kind == "file" and mode is not None and stat.S_ISDIR(mode):
            raise UserError(f"{option} {path}: is a folder, expected a file to write")
        if kind == "file" and mode is not None and not stat.S_ISREG(mode):
            raise UserError(f"{option} {path}: is a device, pipe or socket, not a file to write; give a file path")
        if kind != "file" and mode is not None and not stat.S_ISDIR(mode):
            raise UserError(f"{option} {path}: is a file, expected a folder to write into")
    for _, path, kind in outs if clean else ():
        remove_stale_temps(real(path), folder=kind != "file", deep=kind == "tree")
