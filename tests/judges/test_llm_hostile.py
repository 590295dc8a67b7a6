"""The LLM client against hostile surroundings: proxy variables, absurd Retry-After values, answers
that must not be cached, answers cut off by max_tokens."""

from __future__ import annotations

import json
import math
import random
import socket
import sqlite3
import threading
import time
from functools import partial

import httpx
import pytest
from openai_stub import Delay, Malformed, OpenAIStub, Reply, Status, last_user_message, stub_config

from srrg import privacy as guard
from srrg.llm import LLMClient, LLMResponse, PromptTemplate, ResponseCache
from srrg.llm.base import Job
from srrg.llm.openai_backend import backoff_delay, parse_retry_after
from srrg.privacy import PrivacyError
from srrg.settings.llm import LLMConfig

ECHO = PromptTemplate("echo", "1", (("user", "{phrase}"),), ("phrase",))
PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


config = partial(stub_config, timeout_s=2.0, max_retries=3, retry_max_delay_s=0.05, concurrency=2)  # short, quick


class RecordingProxy:
    """A socket server on 127.0.0.1 that counts the connections it gets and closes them."""

    def __init__(self) -> None:
        self.connections = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self._sock.close()


def test_loopback_endpoint_bypasses_every_proxy_variable(tmp_path, monkeypatch):
    """issue 16 case 1: proxy variables must not carry loopback requests (and the reports in them)
    anywhere; a remote endpoint still needs allow_remote whatever the proxies."""
    proxy = RecordingProxy()
    try:
        for var in PROXY_VARS:
            monkeypatch.setenv(var, proxy.url)
        for var in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(var, raising=False)
        with OpenAIStub(responder=lambda body: Reply("A:" + last_user_message(body))) as stub:
            # the set-up is live: a plain client that trusts the environment does go to the proxy
            with pytest.raises(httpx.HTTPError):
                httpx.Client(timeout=1.0).post(stub.base_url + "/chat/completions", json={})
            seen_by_proxy = proxy.connections
            assert seen_by_proxy >= 1
            [resp] = LLMClient(config(stub.base_url, tmp_path)).complete([ECHO.render("x", phrase="left base")])
            assert resp.ok and resp.text == "A:left base"
            assert len(stub.requests) == 1 and proxy.connections == seen_by_proxy  # nothing reached the proxy
        remote = config("https://api.example.com/v1", tmp_path)
        with pytest.raises(PrivacyError, match="allow_remote"):
            LLMClient(remote)
    finally:
        proxy.close()


def test_retry_after_is_capped_and_non_finite_values_are_ignored(tmp_path, stub_key):
    """issue 16 case 4: Retry-After 86400 must not mean a day's sleep per retry, and inf / 1e400
    must not raise OverflowError out of a client that never raises."""
    assert parse_retry_after({"Retry-After": "inf"}) is None
    assert parse_retry_after({"Retry-After": "nan"}) is None
    assert parse_retry_after({"retry-after-ms": "1e400"}) is None
    assert parse_retry_after({"Retry-After": "-5"}) == 0.0
    rng = random.Random(0)
    assert backoff_delay(0, 1.0, 10.0, 86400.0, rng) == 10.0
    assert backoff_delay(0, 1.0, 10.0, 1e20, rng) == 10.0
    assert backoff_delay(10_000, 1.0, 10.0, None, rng) <= 10.0  # no overflow for absurd retry counts
    with OpenAIStub(responder=lambda body: Reply("fine")) as stub:
        stub.enqueue(
            Status(429, headers={"Retry-After": "86400"}),
            Status(503, headers={"Retry-After": "inf"}),
            Status(429, headers={"retry-after-ms": "1e400"}),
        )
        t0 = time.monotonic()
        [resp] = LLMClient(config(stub.base_url, tmp_path)).complete([ECHO.render("x", phrase="apex")])
        assert resp.ok and resp.text == "fine" and resp.attempts == 4
        assert time.monotonic() - t0 < 30.0  # capped waits take well under a second; uncapped, a day


class ScriptedBackend:
    name, model, has_model = "fake", "fake-1", True

    def __init__(self, answers: dict[str, LLMResponse]) -> None:
        self.answers = answers
        self.sent: list[str] = []

    def generate(self, jobs):
        for i, job in enumerate(jobs):
            content = job.messages[-1]["content"]
            self.sent.append(content)
            yield i, self.answers[content]


def test_only_complete_non_empty_answers_are_cached(tmp_path):
    """issue 16 case 8: empty, whitespace-only and cut-off answers are not good answers."""
    answers = {
        "empty": LLMResponse(text="", attempts=1),
        "blank": LLMResponse(text=" \n\t", attempts=1),
        "cut": LLMResponse(text="[Explanation]: the candidate", status="truncated", error="cut", attempts=1),
        "good": LLMResponse(text="in the left lung", attempts=1),
    }
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = ScriptedBackend(answers)
    client = LLMClient(LLMConfig(), backend=backend, cache=cache)
    out = client.complete([ECHO.render("x", phrase=p) for p in answers], progress=False)
    assert [r.status for r in out] == ["ok", "ok", "truncated", "ok"]
    assert out[2].text.startswith("[Explanation]")  # the cut-off text is returned, marked
    assert len(cache) == 1 and client.usage.of("x").truncated == 1
    again = LLMClient(LLMConfig(), backend=backend, cache=cache).complete(
        [ECHO.render("x", phrase=p) for p in answers], progress=False
    )
    assert [r.cached for r in again] == [False, False, False, True]
    assert backend.sent.count("empty") == 2 and backend.sent.count("good") == 1
    for bad in answers.values():
        if bad is not answers["good"]:
            with pytest.raises(ValueError, match="complete, non-empty"):
                cache.put("k", "b", "m", "t", "1", bad)
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:  # a blank row written by an older version
        conn.execute("INSERT INTO responses VALUES ('old', 'b', 'm', 't', '1', '  ', 0, 0, 0)")
    assert cache.get_many(["old"]) == {}


def test_answer_cut_off_by_max_tokens_is_truncated_and_not_cached(tmp_path, stub_key):
    with OpenAIStub(responder=lambda body: Reply("[Explanation]: The cand", finish_reason="length")) as stub:
        client = LLMClient(config(stub.base_url, tmp_path))
        [resp] = client.complete([ECHO.render("x", phrase="apex", max_tokens=5)])
        assert resp.status == "truncated" and resp.text == "[Explanation]: The cand" and not resp.ok
        assert "max_tokens=5" in resp.error and client.usage.of("x").truncated == 1
        assert len(ResponseCache(tmp_path / "cache" / "responses.sqlite")) == 0
        client.complete([ECHO.render("x", phrase="apex", max_tokens=5)])
        assert len(stub.requests) == 2  # asked again


def test_local_backend_marks_answers_without_stop_token_as_truncated(monkeypatch):
    import srrg.llm.local_backend as lb

    class Tok:
        eos_token_id, pad_token_id, chat_template = 0, 0, None

        def __call__(self, prompts, **kw):
            import torch

            class Enc(dict):
                def to(self, device):
                    return self

            return Enc(
                input_ids=torch.ones((len(prompts), 2), dtype=torch.long),
                attention_mask=torch.ones((len(prompts), 2), dtype=torch.long),
            )

        def decode(self, ids, skip_special_tokens=True):
            return " ".join(str(i) for i in ids)

    class Model:
        def generate(self, input_ids, attention_mask, max_new_tokens, **kw):
            import torch

            rows = [[1, 1, 5, 6, 7], [1, 1, 5, 0, 0]]  # row 0 used all 3 new tokens, row 1 stopped
            return torch.tensor(rows)

    monkeypatch.setattr(lb, "load_model", lambda *a: (Tok(), Model()))
    backend = lb.LocalBackend(LLMConfig(backend="local", model="fake"))
    from srrg.llm.base import Decoding

    jobs = [Job(({"role": "user", "content": c},), Decoding(3, 0.0, False)) for c in ("a", "b")]
    out = dict(backend.generate(jobs))
    assert out[0].status == "truncated" and "max_tokens=3" in out[0].error and out[0].text == "5 6 7"
    assert out[1].status == "ok" and out[1].completion_tokens == 1
    assert math.isclose(out[0].completion_tokens, 3)


class TricklingServer:
    """A loopback HTTP server that answers every request with a valid completion, one byte per
    `every` seconds (headers first), as a slow or hostile endpoint does."""

    def __init__(self, every: float) -> None:
        body = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "late"}, "finish_reason": "stop"}],
            }
        )
        self.payload = body.encode()
        self.every = every
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(self.payload)).encode()
                + b"\r\n\r\n"
            )
            for i in range(len(self.payload)):
                if self._stop.is_set():
                    break
                conn.sendall(self.payload[i : i + 1])
                time.sleep(self.every)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()


def test_timeout_bounds_the_whole_request_not_each_read(tmp_path):
    """issue 25 item 2: an endpoint trickling a byte every 0.1 s held a timeout_s: 2, max_retries: 0
    request for half a minute, and the late answer was cached."""
    server = TricklingServer(every=0.1)
    try:
        client = LLMClient(config(server.base_url, tmp_path, timeout_s=1.0, max_retries=0))
        t0 = time.monotonic()
        [resp] = client.complete([ECHO.render("x", phrase="apex")], progress=False)
        elapsed = time.monotonic() - t0
    finally:
        server.close()
    assert resp.status == "error" and "Timeout" in (resp.error or "")
    assert elapsed < 8.0  # one timeout_s (plus scheduling, wide for a loaded machine), not len(body) * 0.1 s = 17 s
    assert len(client.cache) == 0


def test_stage_timeout_bounds_every_request_of_a_stage(tmp_path):
    """issue 25 principle (b): the stage's requests together end by llm.stage_timeout_s; what is
    left is failed at once, not sent (and not retried)."""
    # budgets wide for a loaded machine: each answer takes >= 1 s, so at most 3 fit in the stage's 3 s,
    # and the first has 2 s to spare; without the stage deadline all 8 would be answered in >= 8 s
    with OpenAIStub(responder=lambda body: Delay(1.0, Reply("slow"))) as stub:
        client = LLMClient(
            config(stub.base_url, tmp_path, concurrency=1, stage_timeout_s=3.0, timeout_s=10.0, max_retries=3)
        )
        t0 = time.monotonic()
        answers = client.complete([ECHO.render("x", phrase=f"p{i}") for i in range(8)], progress=False)
        elapsed = time.monotonic() - t0
    assert elapsed < 7.0
    assert 1 <= sum(a.ok for a in answers) <= 3
    late = [a for a in answers if not a.ok]
    # the request in flight at the deadline is cut off (one retry finds the budget spent); the rest are never sent
    assert late and all("stage_timeout_s" in (a.error or "") and a.attempts <= 2 for a in late)
    assert len(stub.requests) <= sum(a.ok for a in answers) + 1


def test_answer_larger_than_the_cap_is_refused_and_not_cached(tmp_path):
    """issue 25 (Low): a 100 MB answer was scored and cached; the body is refused as it arrives."""
    with OpenAIStub(responder=lambda body: Reply("x" * 300_000)) as stub:
        client = LLMClient(config(stub.base_url, tmp_path, max_answer_bytes=100_000))
        [resp] = client.complete([ECHO.render("x", phrase="apex")], progress=False)
        assert resp.status == "error" and "max_answer_bytes" in (resp.error or "")
        assert resp.attempts == 1 and len(stub.requests) == 1  # not retried: the same answer would come again
        assert len(client.cache) == 0
        [small] = LLMClient(config(stub.base_url, tmp_path, max_answer_bytes=400_000)).complete(
            [ECHO.render("x", phrase="apex")]
        )
        assert small.ok and len(small.text) == 300_000


def test_deeply_nested_answer_body_is_a_malformed_answer_not_a_crash(tmp_path):
    """issue 25 (Low): a 200 body nested 100,000 deep raised RecursionError out of the client."""
    with OpenAIStub(responder=lambda body: Malformed("[" * 100_000 + "]" * 100_000)) as stub:
        [resp] = LLMClient(config(stub.base_url, tmp_path, max_retries=1)).complete([ECHO.render("x", phrase="apex")])
    assert resp.status == "error" and "MalformedResponse" in (resp.error or "")


def _resolver(monkeypatch, answers: dict[str, list[str]]) -> list[str]:
    """Replace the system resolver for the given names (others resolve as usual); returns the
    names asked, in order."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def fake(host, port, *args, **kwargs):
        if host in answers:
            asked.append(host)
            family = socket.AF_INET6 if ":" in answers[host][0] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (a, port or 0)) for a in answers[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    guard._resolved.cache_clear()
    return asked


def test_guard_decides_on_resolved_addresses(tmp_path, monkeypatch):
    """issue 25 item 3: any *.localhost name passed the guard unresolved; the client then asked the
    system resolver, which could send the prompt anywhere."""
    asked = _resolver(
        monkeypatch,
        {"evil.localhost": ["10.1.2.3"], "mixed.test": ["127.0.0.1", "192.0.2.7"], "box.test": ["127.0.0.1"]},
    )
    for url in ("http://evil.localhost:8000/v1", "http://mixed.test/v1"):
        assert not guard.is_local_url(url)
        with pytest.raises(PrivacyError, match="allow_remote"):
            LLMClient(config(url, tmp_path))
    assert guard.is_local_url("http://box.test/v1")
    assert guard.local_addresses("http://localhost:1/v1") == guard.LOCALHOST and "localhost" not in asked
    assert guard.local_addresses("http://[::1]:1/v1") == ("::1",)


def test_connection_goes_to_the_address_the_guard_checked(tmp_path, monkeypatch):
    """issue 25 item 3: one lookup per name; a resolver that later points elsewhere is never asked."""
    with OpenAIStub(responder=lambda body: Reply("pinned")) as stub:
        port = stub.base_url.rsplit(":", 1)[1]
        answers = {"llm.test": ["127.0.0.1"]}
        asked = _resolver(monkeypatch, answers)
        client = LLMClient(config(f"http://llm.test:{port}", tmp_path))
        answers["llm.test"] = ["192.0.2.9"]  # the resolver changes its mind after the check
        out = client.complete([ECHO.render("x", phrase=f"p{i}") for i in range(3)], progress=False)
    assert [a.text for a in out] == ["pinned"] * 3 and len(stub.requests) == 3
    assert asked == ["llm.test"]


def test_cache_file_follows_the_umask_so_a_group_can_share_it(tmp_path):
    """issue 25 (Low): the cache was created 0644 even under umask 002."""
    import os
    import stat

    previous = os.umask(0o002)
    try:
        cache = ResponseCache(tmp_path / "shared" / "responses.sqlite")
        cache.put("k", "b", "m", "t", "1", LLMResponse("answer"))
    finally:
        os.umask(previous)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "shared").iterdir()}
    assert modes["responses.sqlite"] == 0o664 and all(m == 0o664 for m in modes.values()), modes


@pytest.mark.parametrize("content", [b"not a database at all" * 50, None])
def test_a_file_that_is_not_the_cache_is_one_line_naming_it(tmp_path, content, capsys):
    """issue 25 (Low): a bad cache file gave a sqlite3 traceback that did not name the file."""
    from srrg.errors import UserError

    path = tmp_path / "responses.sqlite"
    if content is None:  # another program's SQLite file with a table of the same name
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE responses (a INTEGER)")
        conn.commit()
        conn.close()
    else:
        path.write_bytes(content)
    with pytest.raises(UserError, match=rf"{path}: not an LLM answer cache .*delete it"):
        ResponseCache(path)


def test_remote_endpoint_takes_the_environment_proxy_inside_the_same_bounds(monkeypatch):
    """A remote endpoint (allowed by llm.allow_remote) goes through the environment's proxy, chosen
    by srrg.llm.transport itself so that the request and answer bounds still apply."""
    from srrg.llm.transport import environment_proxy

    for var in PROXY_VARS + ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert environment_proxy("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert environment_proxy("https://api.example.com/v1") == "http://proxy.example:3128"
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert environment_proxy("https://api.example.com/v1") is None
