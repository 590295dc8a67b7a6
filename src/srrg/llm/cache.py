"""Persistent SQLite cache of good LLM answers, shared by every stage and safe under concurrent writers.

Several Snakemake jobs (and several threads) may write at once: WAL journaling plus a busy timeout
lets readers proceed while one writer commits, and INSERT OR REPLACE makes a duplicate answer
harmless. Only complete, non-empty answers are stored (issue 16 case 8), so a failed, cut-off or
blank answer is asked again on the next run; a blank row left by an older version reads as a miss.

The file is created by us with the mode of any plainly created file (0666 less the umask), so a group
sharing a cache under umask 002 can write it (SQLite alone would make it 0644; its -wal and -shm
files take the database file's mode). A file that is not such a cache is one line naming it, and
so is a cache that cannot be written (llm.cache_dir a file, a read-only folder or file): checked
when the cache opens, before any request is sent.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

from srrg.errors import UserError
from srrg.llm.base import OK, LLMResponse, cacheable

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    template TEXT NOT NULL,
    template_version TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def _cannot_write(err: sqlite3.DatabaseError) -> bool:
    """SQLite's errors of a file or folder that cannot be written (not of a file that is no cache)."""
    name = getattr(err, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_FULL", "SQLITE_IOERR"))


class ResponseCache:
    """Key -> answer text and token counts. One connection per thread (sqlite3 objects are not shared)."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise UserError(f"{folder}: llm.cache_dir is a file, expected a folder for the LLM answer cache") from None
        except OSError as err:
            raise UserError(f"{folder}: llm.cache_dir cannot be created ({err.strerror or err})") from None
        if self.path.is_dir():
            raise UserError(f"{self.path}: is a folder, expected the LLM answer cache file (set llm.cache_dir)")
        try:
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o666))  # the umask applies, as for any new file
        except OSError as err:
            self._unwritable(err.strerror or str(err))
        self._timeout = busy_timeout_s
        self._local = threading.local()
        try:
            with self._conn() as conn:
                conn.execute(_SCHEMA)
                conn.execute("SELECT key, text, prompt_tokens, completion_tokens FROM responses LIMIT 0")
                conn.execute("DELETE FROM responses WHERE 0")  # a write: a read-only cache is named now
        except sqlite3.DatabaseError as err:  # not SQLite, truncated, or another program's table
            self.close()
            if _cannot_write(err):
                self._unwritable(str(err))
            raise UserError(
                f"{self.path}: not an LLM answer cache ({err}); delete it (its answers are then asked again) "
                f"or point llm.cache_dir elsewhere"
            ) from None

    def _unwritable(self, reason: str) -> NoReturn:
        raise UserError(
            f"{self.path}: the LLM answer cache cannot be written ({reason}); llm.cache_dir "
            f"{self.path.parent} must be a folder this user can write (the database and its -wal file)"
        ) from None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._timeout)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get_many(self, keys: Iterable[str]) -> dict[str, LLMResponse]:
        """Cached answers for the keys that have one (marked cached=True)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, LLMResponse] = {}
        conn = self._conn()
        chunk = 500  # stays under SQLite's bound-parameter limit
        for start in range(0, len(keys), chunk):
            part = keys[start : start + chunk]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT key, text, prompt_tokens, completion_tokens FROM responses WHERE key IN ({marks})", part
            )
            for key, text, pt, ct in rows:
                if not text.strip():
                    continue
                found[key] = LLMResponse(text=text, status=OK, prompt_tokens=pt, completion_tokens=ct, cached=True)
        return found

    def put(
        self, key: str, backend: str, model: str, template: str, template_version: str, response: LLMResponse
    ) -> None:
        """Store a complete answer; errors, cut-off and blank answers are refused (retried later)."""
        if not cacheable(response):
            raise ValueError(f"only complete, non-empty answers are cached (status {response.status})")
        row = (key, backend, model, template, template_version, response.text)
        try:
            with self._conn() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*row, response.prompt_tokens, response.completion_tokens, time.time()),
                )
        except sqlite3.OperationalError as err:  # made read-only (or its disk full) while the stage ran
            if not _cannot_write(err):
                raise
            self._unwritable(str(err))

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
