"""The LLM layer's settings and files as one line each (issue 39): an endpoint the privacy guard
refuses, a base_url holding whitespace, an llm.cache_dir that is a file or cannot be written.
Before, each was a traceback (PrivacyError was a RuntimeError; httpx's InvalidURL; FileExistsError
from mkdir; sqlite3's "attempt to write a readonly database" at the first answer)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from srrg.cli import main
from srrg.errors import UserError
from srrg.llm import LLMResponse, ResponseCache
from srrg.llm import cache as cache_module


def _score(tmp_path, llm: dict) -> list[str]:
    refs = tmp_path / "r.jsonl"
    refs.write_text(json.dumps({"study_id": "1", "report": "Small left pleural effusion."}) + "\n")
    config = json.dumps({"green": {"llm": {"backend": "openai", "model": "m", **llm}}})
    return ["score", "--refs", str(refs), "--hyps", str(refs), "--metrics", "green", "--out", str(tmp_path / "o")] + [
        "--config",
        config,
    ]


def test_a_remote_endpoint_refused_by_the_guard_is_one_line(tmp_path, capsys):
    """Bug: the guard's PrivacyError (a RuntimeError) left `srrg score --metrics green` as a traceback."""
    assert main(_score(tmp_path, {"base_url": "https://api.example.com/v1"})) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("srrg score: error: llm endpoint https://api.example.com/v1 is not on this host")
    assert "allow_remote" in err and "\n" not in err


@pytest.mark.parametrize(
    ("url", "char", "at"), [("http://127.0.0.1:9/v1\nx", "\\n", 21), ("http://127.0.0.1:9/v1 ", "' '", 21)]
)
def test_a_base_url_with_whitespace_is_one_line(tmp_path, capsys, url, char, at):
    """Bug: a base_url with a line break passed the guard (its host is loopback) and httpx raised
    InvalidURL out of the command; a trailing space was sent as part of the path."""
    assert main(_score(tmp_path, {"base_url": url})) == 2
    err = capsys.readouterr().err.strip()
    assert "llm.base_url" in err and f"{char}" in err and f"at position {at}" in err and "\n" not in err


def test_a_cache_dir_that_is_a_file_is_one_line(tmp_path):
    """Bug: mkdir of llm.cache_dir raised FileExistsError (a traceback) when the name was a file."""
    taken = tmp_path / "cache"
    taken.write_text("notes")
    with pytest.raises(UserError, match=rf"^{taken}: llm.cache_dir is a file, expected a folder"):
        ResponseCache(taken / "responses.sqlite")
    assert taken.read_text() == "notes"


def _read_only(monkeypatch) -> None:
    """Every connection the cache opens is read-only (what a read-only file or mount gives; the
    tests run as root, whom file modes do not stop)."""
    real = sqlite3.connect

    def connect(path, timeout=5.0):
        return real(f"file:{path}?mode=ro", timeout=timeout, uri=True)

    monkeypatch.setattr(cache_module.sqlite3, "connect", connect)


def test_a_read_only_cache_is_named_when_it_opens(tmp_path, monkeypatch):
    """Bug: a read-only cache read as "not an LLM answer cache" (delete it!) or, past the open,
    raised sqlite3.OperationalError at the first answer, after requests were paid for."""
    path = tmp_path / "responses.sqlite"
    ResponseCache(path).close()
    _read_only(monkeypatch)
    with pytest.raises(UserError, match=rf"^{path}: the LLM answer cache cannot be written \(attempt to write a"):
        ResponseCache(path)


def test_a_cache_made_read_only_while_the_stage_runs_is_one_line(tmp_path, monkeypatch):
    """Bug: put() let sqlite3.OperationalError out, a traceback in the middle of a judge run."""
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put("k1", "b", "m", "t", "1", LLMResponse("first"))
    cache.close()
    _read_only(monkeypatch)
    with pytest.raises(UserError, match=rf"^{path}: the LLM answer cache cannot be written"):
        cache.put("k2", "b", "m", "t", "1", LLMResponse("second"))
    assert cache.get_many(["k1"])["k1"].text == "first"  # reading still works


def test_a_file_that_is_no_cache_still_says_so(tmp_path):
    """Bug: the new read-only branch swallows the "not an LLM answer cache" case."""
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"not a database at all" * 50)
    with pytest.raises(UserError, match="not an LLM answer cache"):
        ResponseCache(path)
