"""Request options of the OpenAI backend (srrg.llm.openai_backend) combined, the kind issue 53 found
missing: extra_body together with a JSON schema (and with json mode, and a reasoning model), each
schema format, and the small readers of a server's answers. Each test's docstring names the bug."""

from __future__ import annotations

import json
from types import SimpleNamespace

import httpx
import pytest
from openai_stub import stub_config

from srrg.llm import LLMClient, PromptTemplate
from srrg.llm.base import Decoding
from srrg.llm.openai_backend import (
    in_flight,
    props_url,
    request_fields,
    response_format,
    reused_tokens,
    server_slots,
)

SCHEMA = json.dumps({"title": "my answer/v1", "type": "object", "properties": {"a": {"type": "integer"}}})
EXTRA = json.dumps({"top_k": 5, "chat_template_kwargs": {"thinking": False}})


def decoding(**over) -> Decoding:
    return Decoding(**{"max_tokens": 40, "temperature": 0.0, "json_mode": False, **over})


def test_extra_body_and_a_json_schema_are_sent_together():
    """Bug: extra_body dropped when a schema is set (an elif), or the schema dropped when extra_body
    is set: both options must reach one request."""
    fields = request_fields(decoding(json_schema=SCHEMA, extra_body=EXTRA, json_mode=True), "json_schema")
    assert fields["extra_body"] == json.loads(EXTRA)
    assert fields["response_format"]["type"] == "json_schema"
    assert fields["response_format"]["json_schema"]["schema"] == json.loads(SCHEMA)
    assert fields["max_tokens"] == 40 and fields["temperature"] == 0.0


def test_every_pair_of_request_options():
    """Bugs: json mode overriding a schema, a reasoning model losing the schema or extra_body,
    reasoning_effort sent when unset or lost when set, the schema format ignored."""
    both = request_fields(decoding(json_mode=True, extra_body=EXTRA), "json_schema")
    assert both["response_format"] == {"type": "json_object"} and both["extra_body"] == json.loads(EXTRA)
    reasoning = request_fields(decoding(reasoning=True, json_schema=SCHEMA, extra_body=EXTRA), "json_object")
    assert reasoning == {
        "max_completion_tokens": 40,
        "response_format": {"type": "json_object", "schema": json.loads(SCHEMA)},
        "extra_body": json.loads(EXTRA),
    }
    effort = request_fields(decoding(reasoning=True, reasoning_effort="high"), "json_schema")
    assert effort == {"max_completion_tokens": 40, "reasoning_effort": "high"}
    assert request_fields(decoding(temperature=0.7, max_tokens=9), "json_schema") == {"max_tokens": 9,
                                                                                      "temperature": 0.7}  # fmt: skip


def test_response_format_names_the_schema_safely():
    """Bugs: the schema's title sent unsanitised (OpenAI refuses names outside [A-Za-z0-9_-]) or
    uncut (64 characters at most); the fallback name lost; strict mode off."""
    out = response_format(SCHEMA, "json_schema")
    assert out["json_schema"]["name"] == "my_answer_v1" and out["json_schema"]["strict"] is True
    long = json.dumps({"title": "x" * 100})
    assert response_format(long, "json_schema")["json_schema"]["name"] == "x" * 64
    assert response_format(json.dumps({"type": "object"}), "json_schema")["json_schema"]["name"] == "answer"


def test_reused_tokens_reads_object_and_dict_details():
    """Bugs: a dict-shaped prompt_tokens_details ignored, a negative or boolean count reported."""
    assert reused_tokens(SimpleNamespace(prompt_tokens_details={"cached_tokens": 7})) == 7
    assert reused_tokens(SimpleNamespace(prompt_tokens_details=SimpleNamespace(cached_tokens=3))) == 3
    for bad in (0, -2, True, "5", None):
        assert reused_tokens(SimpleNamespace(prompt_tokens_details={"cached_tokens": bad})) == 0
    assert reused_tokens(None) == 0


class FakeHTTP:
    """An httpx-like client whose GET answers with a status and a JSON body (or raises)."""

    def __init__(self, status: int, body: object, error: Exception | None = None) -> None:
        self.status, self.body, self.error, self.urls = status, body, error, []

    def get(self, url: str, timeout: float) -> SimpleNamespace:
        self.urls.append((url, timeout))
        if self.error:
            raise self.error
        return SimpleNamespace(status_code=self.status, json=lambda: self.body)


def test_server_slots_and_in_flight():
    """Bugs: another field than total_slots read, a non-positive or non-integer count trusted, a
    404 or a refused connection taken as an answer; in_flight not capped at slots + 1."""
    client = FakeHTTP(200, {"total_slots": 4})
    assert server_slots(client, "http://127.0.0.1:8080/v1", 30.0) == 4
    assert client.urls[0][0] == "http://127.0.0.1:8080/props" and client.urls[0][1] <= 30.0
    for status, body in ((200, {"total_slots": 0}), (200, {"total_slots": "4"}), (404, {"total_slots": 4}),
                         (200, {"slots": 4}), (200, [4])):  # fmt: skip
        assert server_slots(FakeHTTP(status, body), "http://h/v1") is None, body
    assert server_slots(FakeHTTP(200, {}, httpx.ConnectError("refused")), "http://h/v1") is None
    assert (in_flight(8, None), in_flight(8, 2), in_flight(2, 8)) == (8, 3, 2)
    assert props_url("http://h:1/v1/") == props_url("http://h:1/v1") == "http://h:1/props"


pytestmark = pytest.mark.usefixtures("stub_key")  # the stub and stub_key fixtures: tests/judges/conftest.py
ECHO = PromptTemplate("echo", "1", (("user", "{phrase}"),), ("phrase",))


def test_extra_body_and_schema_reach_the_server_in_one_body(stub, tmp_path):
    """The same pair on the wire: a structured request of a client with llm.extra_body carries
    both the response_format and the extra fields (bug: one option silently replaces the other)."""
    client = LLMClient(stub_config(stub.base_url, tmp_path, extra_body={"top_k": 5}))
    schema = json.dumps({"title": "t", "type": "object"})
    client.complete([ECHO.render("x", phrase="apex", max_tokens=40, json_schema=schema)])
    body = stub.requests[-1]
    assert body["top_k"] == 5
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "t", "schema": {"title": "t",
                                       "type": "object"}, "strict": True}}  # fmt: skip
