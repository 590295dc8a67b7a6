"""The persistent LLM answer cache (srrg.llm.cache): what it stores, returns and refuses, and the
SQLite settings its docstring promises (WAL journal, busy timeout, one connection per thread)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from srrg.llm.base import OK, LLMResponse
from srrg.llm.cache import ResponseCache


def test_round_trip_of_text_and_token_counts(tmp_path):
    cache = ResponseCache(tmp_path / "deep" / "er" / "c.sqlite")  # parent folders are created
    cache.put("k1", "openai", "gpt-x", "green", "v2", LLMResponse(text="answer", prompt_tokens=11, completion_tokens=7))
    got = cache.get_many(["k1", "missing"])
    assert list(got) == ["k1"]
    assert got["k1"] == LLMResponse(text="answer", status=OK, prompt_tokens=11, completion_tokens=7, cached=True)


def test_row_records_where_the_answer_came_from(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    before = time.time()
    cache.put("k", "local", "smollm2", "vert", "3", LLMResponse(text="t"))
    cache.close()
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT key, backend, model, template, template_version, text, created FROM responses"
        ).fetchone()
    assert row[:6] == ("k", "local", "smollm2", "vert", "3", "t")
    assert before - 1 <= row[6] <= time.time() + 1


def test_a_repeated_key_replaces_the_answer(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "b", "m", "t", "1", LLMResponse(text="old", prompt_tokens=1))
    cache.put("k", "b", "m", "t", "1", LLMResponse(text="new", prompt_tokens=2))
    assert len(cache) == 1
    assert (cache.get_many(["k"])["k"].text, cache.get_many(["k"])["k"].prompt_tokens) == ("new", 2)


@pytest.mark.parametrize(
    "response",
    [
        LLMResponse(text="partial", status="error"),
        LLMResponse(text="cut", status="truncated"),
        LLMResponse(text=""),
        LLMResponse(text="  \n "),
    ],
)
def test_only_complete_non_empty_answers_are_stored(tmp_path, response):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(ValueError, match="only complete, non-empty"):
        cache.put("k", "b", "m", "t", "1", response)
    assert len(cache) == 0


def test_a_blank_row_reads_as_a_miss(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("good", "b", "m", "t", "1", LLMResponse(text="ok"))
    with sqlite3.connect(path) as conn:  # as an older version could have left it
        conn.execute("INSERT INTO responses VALUES ('blank', 'b', 'm', 't', '1', ' ', 0, 0, 0)")
    assert list(ResponseCache(path).get_many(["blank", "good"])) == ["good"]


def test_many_keys_duplicates_and_chunks(tmp_path):
    """More keys than one SQLite statement may bind (chunks of 500), duplicates asked once."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    for i in range(1203):
        cache.put(f"k{i}", "b", "m", "t", "1", LLMResponse(text=str(i), completion_tokens=i))
    keys = [f"k{i}" for i in range(1203)] + ["k5", "k1202", "absent"]
    got = cache.get_many(keys)
    assert len(got) == 1203 and len(cache) == 1203
    assert all(
        got[f"k{i}"].text == str(i) and got[f"k{i}"].completion_tokens == i for i in (0, 499, 500, 999, 1000, 1202)
    )
    assert cache.get_many([]) == {}


def test_answers_persist_across_instances_and_close(tmp_path):
    path = tmp_path / "c.sqlite"
    first = ResponseCache(path)
    first.put("k", "b", "m", "t", "1", LLMResponse(text="kept"))
    first.close()
    first.close()  # closing twice is harmless
    assert first.get_many(["k"])["k"].text == "kept"  # a closed cache reconnects on use
    assert ResponseCache(path).get_many(["k"])["k"].text == "kept"


def test_sqlite_settings_for_concurrent_writers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", busy_timeout_s=2.5)
    conn = cache._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 2500
    assert ResponseCache(tmp_path / "d.sqlite")._conn().execute("PRAGMA busy_timeout").fetchone()[0] == 60000


def test_each_thread_gets_its_own_connection(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("main", "b", "m", "t", "1", LLMResponse(text="from main"))
    seen: dict[str, object] = {}

    def worker() -> None:
        seen["conn"] = cache._conn()
        cache.put("thread", "b", "m", "t", "1", LLMResponse(text="from thread"))
        seen["main"] = cache.get_many(["main"])["main"].text

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["main"] == "from main" and seen["conn"] is not cache._conn()
    assert cache.get_many(["thread"])["thread"].text == "from thread"
