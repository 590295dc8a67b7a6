"""The openai backend against a scripted OpenAI-compatible server on 127.0.0.1: faults, retries,
Retry-After, cache contents, warm rerun, privacy of keys."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from functools import partial

import pytest
from openai_stub import STUB_KEY as SECRET
from openai_stub import Delay, Drop, Malformed, OpenAIStub, Reply, Status, last_user_message, stub_config

from srrg.llm import LLMClient, PromptTemplate
from srrg.llm.openai_backend import in_flight, props_url
from srrg.privacy import PrivacyError
from srrg.settings.llm import LLMConfig

pytestmark = pytest.mark.usefixtures("stub_key")  # the stub and stub_key fixtures: tests/judges/conftest.py
ECHO = PromptTemplate("echo", "1", (("system", "Repeat the phrase."), ("user", "{phrase}")), ("phrase",))
config = partial(stub_config, max_retries=5, retry_max_delay_s=0.05, concurrency=4)  # room for the scripted faults


def cache_rows(tmp_path) -> list[tuple]:
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as conn:
        return conn.execute("SELECT template, text FROM responses ORDER BY text").fetchall()


def test_recovers_from_every_fault_and_caches_only_the_good_answer(stub, tmp_path):
    stub.enqueue(
        Status(429, headers={"Retry-After": "1"}),
        Status(500),
        Delay(60.0),  # 20 times timeout_s=3: times out however loaded the machine is
        Malformed(),
        Reply("in the right lung", prompt_tokens=7, completion_tokens=3),
    )
    # the cap also bounds Retry-After; timeout_s=3 leaves each answered attempt seconds to spare under load
    client = LLMClient(config(stub.base_url, tmp_path, timeout_s=3.0, retry_max_delay_s=2.0))
    t0 = time.monotonic()
    [resp] = client.complete([ECHO.render("normalize", phrase="right lung")])
    elapsed = time.monotonic() - t0
    assert resp.ok and resp.text == "in the right lung" and not resp.cached
    assert resp.attempts == 5 and (resp.prompt_tokens, resp.completion_tokens) == (7, 3)
    assert elapsed >= 1.0  # Retry-After: 1 was honoured although backoff alone is <= 0.05 s
    assert len(stub.requests) == 5 and stub.pending == 0
    assert cache_rows(tmp_path) == [("echo", "in the right lung")]
    u = client.usage.of("normalize")
    assert (u.requests, u.sent, u.attempts, u.errors, u.cache_hits) == (1, 1, 5, 0, 0)

    warm = LLMClient(config(stub.base_url, tmp_path))
    [again] = warm.complete([ECHO.render("normalize", phrase="right lung")])
    assert again.cached and again.text == "in the right lung"
    assert len(stub.requests) == 5  # zero requests on the warm rerun
    assert warm.usage.of("normalize").sent == 0 and warm.usage.of("normalize").cache_hits == 1


def test_exhausted_retries_give_an_error_that_is_not_cached(stub, tmp_path):
    stub.enqueue(Status(503), Drop(), Status(502))
    client = LLMClient(config(stub.base_url, tmp_path, max_retries=2))
    [resp] = client.complete([ECHO.render("x", phrase="left base")])
    assert resp.status == "error" and "502" in resp.error and resp.attempts == 3
    assert cache_rows(tmp_path) == []
    # the next run asks again and now succeeds
    [resp2] = LLMClient(config(stub.base_url, tmp_path)).complete([ECHO.render("x", phrase="left base")])
    assert resp2.ok and resp2.text == "answer: left base" and len(stub.requests) == 4


def test_client_errors_are_not_retried(stub, tmp_path):
    stub.enqueue(Status(400, message="bad request"))
    [resp] = LLMClient(config(stub.base_url, tmp_path)).complete([ECHO.render("x", phrase="apex")])
    assert resp.status == "error" and resp.attempts == 1 and "400" in resp.error
    assert len(stub.requests) == 1


def slow_responder(answer):
    """A responder that takes 50 ms per request and records the most requests it held at once
    (`peak[0]`), so a test can bound the client's concurrency."""
    lock, active, peak = threading.Lock(), [0], [0]

    def slow(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return Reply(answer(body))

    return slow, peak


def test_batch_keeps_order_dedupes_and_bounds_concurrency(tmp_path):
    slow, peak = slow_responder(lambda body: last_user_message(body).upper())
    with OpenAIStub(responder=slow) as stub:
        phrases = [f"phrase {i % 12}" for i in range(30)]
        client = LLMClient(config(stub.base_url, tmp_path, concurrency=3))
        out = client.complete([ECHO.render("x", phrase=p) for p in phrases])
        assert [r.text for r in out] == [p.upper() for p in phrases]
        assert len(stub.requests) == 12  # duplicates inside a batch are sent once
        assert peak[0] <= 3
        u = client.usage.of("x")
        assert (u.requests, u.sent, u.cache_hits) == (30, 12, 0)
        assert sum(not r.cached for r in out) == 12


def test_request_body_carries_decoding_parameters(stub, tmp_path):
    client = LLMClient(config(stub.base_url, tmp_path, max_new_tokens=17))
    client.complete([ECHO.render("x", phrase="hilum"), ECHO.render("x", phrase="apex", max_tokens=5, json_mode=True)])
    bodies = sorted(stub.requests, key=lambda b: b["messages"][-1]["content"])
    assert bodies[0]["max_tokens"] == 5 and bodies[0]["response_format"] == {"type": "json_object"}
    assert bodies[1]["max_tokens"] == 17 and bodies[1]["temperature"] == 0 and "response_format" not in bodies[1]
    assert bodies[1]["model"] == "stub-model"
    assert bodies[1]["messages"] == [
        {"role": "system", "content": "Repeat the phrase."},
        {"role": "user", "content": "hilum"},
    ]


def test_key_goes_only_to_the_authorization_header(stub, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    stub.enqueue(Status(500, message=f"echoing your key {SECRET}"))
    cfg = config(stub.base_url, tmp_path)
    client = LLMClient(cfg)
    client.complete([ECHO.render("x", phrase="heart")])
    assert stub.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in str(cfg.to_dict()) and SECRET not in caplog.text
    assert SECRET.encode() not in (tmp_path / "cache" / "responses.sqlite").read_bytes()
    assert SECRET not in str(client.usage.to_dict())


def test_remote_endpoint_is_refused_unless_allowed(tmp_path):
    cfg = LLMConfig(
        backend="openai",
        model="gpt-x",
        base_url="https://api.example.com/v1",
        api_key_env="SRRG_TEST_KEY",
        cache_dir=str(tmp_path),
    )
    with pytest.raises(PrivacyError, match="allow_remote"):
        LLMClient(cfg)
    with pytest.raises(PrivacyError, match="allow_remote"):
        LLMClient(LLMConfig(backend="openai", model="gpt-x", cache_dir=str(tmp_path)))  # default endpoint is OpenAI
    allowed = LLMConfig(
        backend="openai",
        model="gpt-x",
        base_url="https://api.example.com/v1",
        api_key_env="SRRG_TEST_KEY",
        allow_remote=True,
        cache_dir=str(tmp_path),
    )
    assert LLMClient(allowed).backend.name == "openai"  # constructed; nothing sent


def test_remote_endpoint_without_key_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("SRRG_TEST_KEY")
    cfg = LLMConfig(
        backend="openai",
        model="m",
        base_url="https://api.example.com/v1",
        api_key_env="SRRG_TEST_KEY",
        allow_remote=True,
        cache_dir=str(tmp_path),
    )
    with pytest.raises(PrivacyError, match="SRRG_TEST_KEY"):
        LLMClient(cfg)


def test_in_flight_is_at_most_one_more_than_the_servers_slots():
    assert [in_flight(8, slots) for slots in (None, 1, 4, 8)] == [8, 2, 5, 8]
    assert in_flight(2, 4) == 2  # never above llm.concurrency
    assert (
        props_url("http://127.0.0.1:8080/v1") == props_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/props"
    )


@pytest.mark.parametrize(("slots", "workers"), [(1, 2), (None, 8)])
def test_concurrency_follows_the_slots_a_llama_server_reports(tmp_path, slots, workers):
    """A server reporting 1 slot (llama-server's /props) gets 2 requests at a time, not 8; one that
    reports nothing (a 404, as llama-cpp-python's server) gets llm.concurrency; a warm rerun asks
    nothing, not even /props."""
    slow, peak = slow_responder(lambda body: "answer")
    with OpenAIStub(responder=slow, slots=slots) as stub:
        requests = [ECHO.render("x", phrase=f"phrase {i}") for i in range(10)]
        client = LLMClient(config(stub.base_url, tmp_path, concurrency=8))
        assert all(r.ok for r in client.complete(requests))
        assert client.backend.workers == workers and stub.gets == ["/props"]
        assert peak[0] <= workers and (slots is None or peak[0] == 2)
        warm = LLMClient(config(stub.base_url, tmp_path, concurrency=8))
        assert all(r.cached for r in warm.complete(requests)) and stub.gets == ["/props"] and len(stub.requests) == 10


def test_prompt_tokens_the_server_reused_are_counted_where_it_reports_them(tmp_path):
    """OpenAI, vLLM and llama-server report usage.prompt_tokens_details.cached_tokens; a server that
    leaves it out (llama-cpp-python's) counts 0 reused, never a guess."""

    def reply(body):
        phrase = last_user_message(body)
        return Reply(phrase, prompt_tokens=40, cached_tokens=32 if phrase == "apex" else None)

    with OpenAIStub(responder=reply) as stub:
        client = LLMClient(config(stub.base_url, tmp_path))
        apex, base = client.complete([ECHO.render("x", phrase="apex"), ECHO.render("x", phrase="base")])
    assert (apex.reused_prompt_tokens, base.reused_prompt_tokens) == (32, 0)
    usage = client.usage.of("x")
    assert (usage.prompt_tokens, usage.reused_prompt_tokens) == (80, 32)
    assert client.usage.to_dict()["total"]["reused_prompt_tokens"] == 32
