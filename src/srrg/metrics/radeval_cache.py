"""Per-report cache of the model-backed RadEval metrics (docs/metrics.md, "RadEval metrics"): a
model pass over thousands of reports is what the judges' answer cache is for LLM calls, so a rerun
(another table, one more system, a resumed job) scores only the pairs it has not seen.

The key is the sha256 of the metric's signature and the texts it reads, so another model, label
set or srrg version never reuses a value. Only finite values are stored: a report RadEval could not
score is asked again next time. SQLite with WAL journaling, as the LLM cache, so parallel Snakemake
jobs may share one file.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

_SCHEMA = "CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
_CHUNK = 500  # stays under SQLite's bound-parameter limit


def cache_key(signature: str, *texts: str) -> str:
    digest = hashlib.sha256(signature.encode("utf-8"))
    for text in texts:
        digest.update(b"\x1f" + text.encode("utf-8"))
    return digest.hexdigest()


class ScoreCache:
    """key -> a list of numbers (one report's values) in `<folder>/radeval.sqlite`."""

    def __init__(self, folder: str | Path, busy_timeout_s: float = 60.0) -> None:
        path = Path(folder) / "radeval.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, timeout=busy_timeout_s)
        self.conn.execute("PRAGMA journal_mode=WAL")
        with self.conn:
            self.conn.execute(_SCHEMA)

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), _CHUNK):
            part = keys[start : start + _CHUNK]
            rows = self.conn.execute(f"SELECT key, value FROM scores WHERE key IN ({','.join('?' * len(part))})", part)
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Store the rows whose values are all finite numbers."""
        good = [
            (k, json.dumps(list(v)))
            for k, v in items
            if all(isinstance(x, (int, float)) and math.isfinite(x) for x in v)
        ]
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)", good)

    def close(self) -> None:
        self.conn.close()
