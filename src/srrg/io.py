"""File helpers every stage shares: atomic writes and reading the project's tabular formats.

How inputs are read (formats, identifiers as text, report cells, line-aligned .txt) is documented
in docs/inputs.md; every way an input can be unusable is a `UserError` naming the file, the row
and what is allowed.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import polars as pl

from srrg.errors import UserError
from srrg.text.decode import read_utf8

FORMATS = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".txt": "txt"}
_UMASK_LOCK = threading.Lock()
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux /proc); elsewhere
    set and restored under a lock, so threads of this process never see a wrong one."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


# the temporary files atomic_path creates: "." + the output's name + "." + 8 random characters + ".tmp"
_TEMP = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")


def remove_stale_temps(path: str | os.PathLike[str], folder: bool, deep: bool = False) -> list[Path]:
    """Delete the temporary files a killed writer left for the output `path` (docs/inputs.md,
    "Outputs"): beside a file output, those of its name; in a folder output, all of atomic_path's
    (in its sub-folders too when `deep`). Returns what was removed."""
    target = Path(path)
    if folder:
        found = list_files(target, suffix=".tmp", prefix=".", recursive=deep)
    else:
        found = list_files(target.parent, suffix=".tmp", prefix=f".{target.name}.")
    stale = [p for p in found if (m := _TEMP.fullmatch(p.name)) and (folder or m["name"] == target.name)]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds, so a
    killed stage never leaves a half-written output behind. The result gets the permissions of a
    plainly created file (0666 or 0777 less the umask), not the 0600 of the private temp file, so
    group members on a shared cluster can read it when the umask lets them."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        try:
            os.chmod(tmp, (0o777 if os.path.isdir(tmp) else 0o666) & ~current_umask())
        except OSError:  # a file system without Unix modes: the output still counts
            pass
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_parquet(path: str | os.PathLike[str], **kwargs: Any) -> pl.DataFrame:
    """A Parquet file read at exactly the path given: polars would otherwise expand `[1]`, `?` and
    `*` in it as a pattern and read other files (docs/inputs.md, "Paths are literal"). A file that
    is no Parquet (empty, cut off, another format, a folder) is a UserError naming it."""
    try:
        return pl.read_parquet(path, glob=False, **kwargs)
    except FileNotFoundError:
        raise
    except (pl.exceptions.ComputeError, OSError) as err:
        _unreadable(Path(path), "parquet", err)


def scan_parquet(path: str | os.PathLike[str], **kwargs: Any) -> pl.LazyFrame:
    """A LazyFrame of one Parquet file at exactly the path given (no pattern expansion)."""
    return pl.scan_parquet(path, glob=False, **kwargs)


def parquet_schema(path: str | os.PathLike[str]) -> dict[str, pl.DataType]:
    """The schema in one Parquet file's footer, opened as a file so its name is never a pattern."""
    with open(path, "rb") as fh:
        return dict(pl.read_parquet_schema(fh))


def read_csv(path: str | os.PathLike[str], **kwargs: Any) -> pl.DataFrame:
    """A CSV file read at exactly the path given (no pattern expansion)."""
    return pl.read_csv(path, glob=False, **kwargs)


def read_ndjson(path: str | os.PathLike[str], **kwargs: Any) -> pl.DataFrame:
    """A JSONL file read at exactly the path given: polars' reader has no switch for its pattern
    expansion, so it is given the open file."""
    with open(path, "rb") as fh:
        return pl.read_ndjson(fh, **kwargs)


def list_files(
    folder: str | os.PathLike[str], suffix: str = "", prefix: str = "", recursive: bool = False
) -> list[Path]:
    """The regular files in `folder` (and its subfolders when `recursive`) whose names start with
    `prefix` and end with `suffix`, sorted by path. The folder is listed, never matched as a
    pattern, and names are compared as text, so `[`, `?` and `*` in either are plain characters."""
    root = Path(folder)
    if recursive:
        found = [Path(d) / n for d, _, names in os.walk(root) for n in names]
    else:
        try:
            found = [root / e.name for e in os.scandir(root)]
        except (FileNotFoundError, NotADirectoryError):
            return []
    return sorted(p for p in found if p.name.startswith(prefix) and p.name.endswith(suffix) and p.is_file())


def _unwritable(path: str | os.PathLike[str], err: BaseException) -> NoReturn:
    """A full disk or a folder that turned read-only while writing: one line naming the output (the
    temporary file is removed; the previous output, if any, is kept)."""
    reason = err.strerror if isinstance(err, OSError) and err.strerror else _first_line(err)
    raise UserError(
        f"{path}: cannot be written ({reason}); check the free space and permissions of its folder"
    ) from None


def _io_failure(err: BaseException) -> bool:
    """An error of the file system, also when polars wraps it (its message then ends in 'os error N')."""
    return isinstance(err, OSError) or "os error" in str(err)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    except OSError as err:
        _unwritable(path, err)


def write_parquet(df: pl.DataFrame, path: str | os.PathLike[str], **kwargs: Any) -> None:
    try:
        with atomic_path(path) as tmp:
            df.write_parquet(tmp, compression="zstd", **kwargs)
    except (OSError, pl.exceptions.PolarsError) as err:
        if not _io_failure(err):
            raise
        _unwritable(path, err)


def is_id_column(name: str) -> bool:
    """Columns named `id` or `*_id` hold identifiers: text, never numbers ("007" stays "007")."""
    return name == "id" or name.endswith("_id")


def _input_file(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path and its format, or a UserError saying why it cannot be an input table."""
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if p.is_dir():
        raise UserError(f"{p}: is a folder; expected a table file ({', '.join(FORMATS)})")
    if not p.exists():
        raise UserError(f"{p}: no such file")
    if not p.is_file():  # a FIFO or device would block the reader forever, or read endless bytes
        raise UserError(f"{p}: not a regular file (a pipe, device or socket); give a file")
    if fmt is None:
        raise UserError(f"{p}: unknown table format {p.suffix!r}; use one of {', '.join(FORMATS)}")
    return p, fmt


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _txt_lines(p: Path) -> list[str]:
    """One report per line; a final newline does not start another report, blank lines are reports."""
    text = read_utf8(p)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _unicode(value: Any, where: str) -> None:
    """Refuse text holding a lone surrogate (an unpaired "\\ud800" escape): it is not Unicode, so
    no UTF-8 output (Parquet, JSON) could hold it."""
    if isinstance(value, str):
        bad = _SURROGATE.search(value)
        if bad:
            code = f"\\u{ord(bad.group()):04x}"
            raise UserError(f"{where} holds a lone surrogate escape ({code}), which is not Unicode text")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _unicode(k, where)
            _unicode(v, where)
    elif isinstance(value, list):
        for v in value:
            _unicode(v, where)


def _loads(text: str, p: Path, where: str) -> Any:
    """json.loads with Python's nesting limit as a user error, and lone surrogates refused."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise UserError(f"{p}: {where} nests deeper than the JSON reader allows; is this a table?") from None
    _unicode(value, f"{p}: {where}")
    return value


def _json_records(p: Path, fmt: str) -> list[tuple[str, Any]]:
    """(where, record) pairs of a JSONL file (one per non-blank line) or a JSON array file."""
    text = read_utf8(p)
    if fmt == "json":
        try:
            data = _loads(text, p, "the file")
        except json.JSONDecodeError as err:
            raise UserError(f"{p}: not valid JSON ({err})") from None
        if isinstance(data, Mapping) and all(isinstance(v, list) for v in data.values()):
            lengths = {len(v) for v in data.values()}
            if len(lengths) > 1:
                raise UserError(f"{p}: columns of different lengths {sorted(lengths)}")
            data = [dict(zip(data, row)) for row in zip(*data.values())]
        if not isinstance(data, list):
            raise UserError(f"{p}: expected a JSON array of row objects (or an object of equal-length columns)")
        return [(f"row {i + 1}", rec) for i, rec in enumerate(data)]
    records = []
    for i, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {i}", _loads(line, p, f"line {i}")))
        except json.JSONDecodeError as err:
            raise UserError(f"{p}: line {i} is not valid JSON ({err.msg}, column {err.colno})") from None
    return records


def id_text(value: Any, where: str) -> str:
    """One identifier as text: strings as written, integers (and integral floats, as JSON and
    pandas may store them) in plain decimal, so 7, 7.0 and "7" agree and 1000 is never "1e3"."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    shown = "null" if value is None else json.dumps(value, default=str)[:40]
    raise UserError(f"{where}: id {shown} is not usable; an id is a non-empty string or an integer")


def _id_column(s: pl.Series, where: str) -> pl.Series:
    """A read column of identifiers as strings (nulls stay null: the caller decides)."""
    if s.dtype == pl.String or s.dtype == pl.Null:
        return s.cast(pl.String)
    if s.dtype.is_integer():
        return s.cast(pl.String)
    if s.dtype.is_float():
        values = [None if v is None else id_text(v, f"{where}, row {i + 1}") for i, v in enumerate(s.to_list())]
        return pl.Series(s.name, values, dtype=pl.String)
    raise UserError(f"{where}: column {s.name!r} holds {s.dtype} values; ids must be strings or integers")


def read_table(path: str | os.PathLike[str], id_cols: Iterable[str] | None = None) -> pl.DataFrame:
    """Parquet, JSONL (.jsonl/.ndjson), JSON array (.json), CSV, or line-aligned text (.txt: columns
    study_id = line number, report), by extension. Identifier columns (`id_cols`, by default every
    column named `id` or `*_id`) come back as strings exactly as written: CSV ids are never type-guessed."""
    p, fmt = _input_file(path)
    wanted = (lambda c: c in set(id_cols)) if id_cols is not None else is_id_column  # noqa: E731
    try:
        if fmt == "txt":
            lines = _txt_lines(p)
            return pl.DataFrame(
                {"study_id": [str(i) for i in range(1, len(lines) + 1)], "report": lines},
                schema={"study_id": pl.String, "report": pl.String},
            )
        if fmt == "parquet":
            df = read_parquet(p)
        elif fmt == "jsonl":
            if _SURROGATE_ESCAPE.search(p.read_bytes()):  # the reader would turn them into NUL: refuse, naming the line
                _json_records(p, fmt)
            df = read_ndjson(p, infer_schema_length=None)
        elif fmt == "json":
            df = pl.DataFrame([rec for _, rec in _json_records(p, fmt)], infer_schema_length=None)
        else:
            header = read_csv(p, n_rows=0).columns
            df = read_csv(p, infer_schema_length=None, schema_overrides={c: pl.String for c in header if wanted(c)})
    except UserError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError, TypeError) as err:
        _unreadable(p, fmt, err)
    return df.with_columns(_id_column(df[c], str(p)) for c in df.columns if wanted(c))


def report_text(value: Any, where: str) -> str:
    """A report cell as text: a string as is, null as "" (an empty report), a structured-report
    object as its JSON (every key kept, so parsing sees exactly what was stored)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):  # Parquet text stored without its UTF-8 annotation
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where}: report bytes are not UTF-8 text") from None
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    kind = (
        "a list"
        if isinstance(value, (list, tuple))
        else "a boolean"
        if isinstance(value, bool)
        else "a number"
        if isinstance(value, (int, float))
        else "not text"
    )
    raise UserError(
        f"{where}: report is {kind} ({json.dumps(value, default=str)[:40]}); "
        "allowed: a string, a structured-report object or null"
    )


def read_reports(path: str | os.PathLike[str], id_col: str = "study_id", text_col: str = "report") -> pl.DataFrame:
    """Columns study_id (str) and report (str) of a reports file (docs/inputs.md): ids as text,
    reports as text or structured objects, no empty table, no missing or duplicate id. A .txt file
    has one report per line and line numbers as ids (id_col and text_col do not apply)."""
    p, fmt = _input_file(path)
    if fmt == "txt":
        df = read_table(p)
    elif fmt in ("jsonl", "json"):
        df = _reports_from_records(p, _json_records(p, fmt), id_col, text_col)
    else:
        df = _reports_from_frame(p, _read_frame(p, fmt), id_col, text_col)
    if df.height == 0:
        raise UserError(f"{p}: no reports (the file has no rows)")
    dupes = df.filter(pl.col("study_id").is_duplicated())["study_id"].unique().sort().to_list()
    if dupes:
        raise UserError(f"{p}: duplicate study ids {dupes[:5]} ({len(dupes)} in all); each id may appear once")
    return df


def _read_frame(p: Path, fmt: str) -> pl.DataFrame:
    """Parquet as stored; CSV with every column as text (ids and reports are never type-guessed)."""
    try:
        return read_parquet(p) if fmt == "parquet" else read_csv(p, infer_schema=False)
    except UserError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        _unreadable(p, fmt, err)


def _unreadable(p: Path, fmt: str, err: BaseException) -> NoReturn:
    """The UserError for a file the reader refused; for text formats, a line that is not UTF-8 is named."""
    if fmt in ("csv", "jsonl"):
        read_utf8(p)
    raise UserError(f"{p}: not a readable {fmt} table ({_first_line(err)})") from None


def _missing(p: Path, columns: Iterable[str], id_col: str, text_col: str) -> None:
    found = list(columns)
    missing = [c for c in (id_col, text_col) if c not in found]
    if missing:
        raise UserError(
            f"{p}: missing column(s) {missing}; found {found[:20]} "
            "(choose others with --id-col / --ref-col / --hyp-col)"
        )


def _reports_from_records(p: Path, records: list[tuple[str, Any]], id_col: str, text_col: str) -> pl.DataFrame:
    ids, reports = [], []
    for where, rec in records:
        if not isinstance(rec, Mapping):
            raise UserError(f"{p}: {where} is not a JSON object with {id_col!r} and {text_col!r}")
        _missing(p, rec, id_col, text_col)
        sid = id_text(rec[id_col], f"{p}: {where}")
        ids.append(sid)
        reports.append(report_text(rec[text_col], f"{p}: {where} ({id_col} {sid!r})"))
    return pl.DataFrame({"study_id": ids, "report": reports}, schema={"study_id": pl.String, "report": pl.String})


def _reports_from_frame(p: Path, df: pl.DataFrame, id_col: str, text_col: str) -> pl.DataFrame:
    _missing(p, df.columns, id_col, text_col)
    ids = _id_column(df[id_col], str(p))
    empty = ids.is_null() | (ids.str.strip_chars() == "")
    if empty.any():
        raise UserError(f"{p}: row {int(empty.arg_true()[0]) + 1}: empty {id_col}; every row needs an id")
    col = df[text_col]
    if col.dtype == pl.String:
        reports = col.fill_null("")
    else:  # structs, categoricals, binary, nulls ... and the types that are refused, row by row
        texts = [report_text(v, f"{p}: row {i + 1} ({id_col} {ids[i]!r})") for i, v in enumerate(col.to_list())]
        reports = pl.Series(texts, dtype=pl.String)
    return pl.DataFrame({"study_id": ids, "report": reports})


def load_config_arg(value: str | None) -> dict[str, Any]:
    """A stage's `--config`: inline JSON, or a path to a .json/.yaml file; absent -> {}.
    Duplicate keys and non-mappings are user errors (srrg.text.decode)."""
    from srrg.text.decode import config_value

    return config_value(value)


RESULTS_LOCK = ".srrg-workflow.lock"


def _lock_holder(path: Path) -> dict[str, Any] | None:
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return held if isinstance(held, dict) else None


def _alive(held: Mapping[str, Any]) -> bool:
    """Whether the process that holds a lock may still run: on another host we cannot tell (yes)."""
    import socket

    if held.get("host") != socket.gethostname() or not isinstance(held.get("pid"), int):
        return True
    try:
        os.kill(held["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def lock_results(results_dir: str | os.PathLike[str], workdir: str) -> Path:
    """Claim a results folder for the workflow run in `workdir` (docs/workflow.md). Snakemake locks
    only its working directory, so two working directories sharing one results_dir would write the
    same outputs at once; the second is refused with one line. A lock of the same working directory
    (Snakemake's own lock already orders those runs) or of a process that no longer runs on this
    host is taken over."""
    import socket

    root = Path(results_dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / RESULTS_LOCK
    me = {"workdir": workdir, "host": socket.gethostname(), "pid": os.getpid()}
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            held = _lock_holder(path)
            if held is not None and held.get("workdir") != workdir and _alive(held):
                raise UserError(
                    f"results_dir {results_dir} is in use by the workflow in {held.get('workdir')} "
                    f"(host {held.get('host')}, pid {held.get('pid')}); wait for it, give this run another "
                    f"results_dir, or delete {path} if that run is gone"
                ) from None
            path.unlink(missing_ok=True)  # ours, stale or unreadable: take it over
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(me, fh)
        return path
    raise UserError(f"results_dir {results_dir}: could not take {path} (another run keeps taking it)")


def unlock_results(results_dir: str | os.PathLike[str], workdir: str) -> None:
    """Release the lock of lock_results when this working directory holds it."""
    path = Path(results_dir) / RESULTS_LOCK
    held = _lock_holder(path)
    if held is not None and held.get("workdir") == workdir:
        path.unlink(missing_ok=True)
