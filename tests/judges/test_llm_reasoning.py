"""Requests for reasoning models (OpenAI o-series, gpt-5 family) against the scripted server: the
request body each model gets, the name pattern, the config switch, and the cache keys."""

from __future__ import annotations

import pytest
from openai_stub import stub_config

from srrg.llm import LLMClient, PromptTemplate
from srrg.llm.base import Decoding, LLMRequest, request_key
from srrg.settings.llm import LLMConfig

pytestmark = pytest.mark.usefixtures("stub_key")  # the stub and stub_key fixtures: tests/judges/conftest.py
ECHO = PromptTemplate("echo", "1", (("user", "{phrase}"),), ("phrase",))


def sent_body(stub, tmp_path, **over) -> dict:
    client = LLMClient(stub_config(stub.base_url, tmp_path, **over))
    out = client.complete([ECHO.render("x", phrase="apex", max_tokens=40)])
    assert out[0].ok and out[0].text == "answer: apex"
    return stub.requests[-1]


def test_reasoning_model_gets_max_completion_tokens_effort_and_no_temperature(stub, tmp_path):
    """An o-series model: max_completion_tokens carries the limit, reasoning_effort is sent, and
    neither max_tokens nor temperature (which such models reject with HTTP 400) is in the body."""
    body = sent_body(stub, tmp_path, model="o3-mini", reasoning_effort="low")
    assert body["max_completion_tokens"] == 40 and body["reasoning_effort"] == "low"
    assert "temperature" not in body and "max_tokens" not in body


def test_ordinary_model_request_is_unchanged(stub, tmp_path):
    """The body of an ordinary model is exactly the one sent before reasoning models were handled:
    the same fields, values and order (fails if a default reasoning field leaks into it). The
    previous backend's bodies for this request, json mode and a schema were compared with these
    byte for byte when the reasoning form was added."""
    body = sent_body(stub, tmp_path)
    assert list(body) == ["model", "messages", "max_tokens", "temperature"]
    assert body == {"model": "stub-model", "messages": [{"role": "user", "content": "apex"}], "max_tokens": 40,
                    "temperature": 0.0}  # fmt: skip


def test_extra_body_fields_are_passed_through(stub, tmp_path):
    """extra_body reaches the JSON body as given, for an ordinary and a reasoning model."""
    body = sent_body(stub, tmp_path, extra_body={"top_k": 5, "chat_template_kwargs": {"thinking": False}})
    assert body["top_k"] == 5 and body["chat_template_kwargs"] == {"thinking": False} and body["temperature"] == 0
    body = sent_body(stub, tmp_path / "r", model="gpt-5-mini", extra_body={"verbosity": "low"})
    assert body["verbosity"] == "low" and "temperature" not in body


def test_the_switch_overrides_the_name(stub, tmp_path):
    """reasoning: true makes any model a reasoning model (a deployment named "judge"), false turns
    the name rule off (an o-named local model that takes temperature)."""
    body = sent_body(stub, tmp_path, model="judge", reasoning=True)
    assert body["max_completion_tokens"] == 40 and "temperature" not in body
    body = sent_body(stub, tmp_path / "f", model="o1", reasoning=False)
    assert body["max_tokens"] == 40 and body["temperature"] == 0


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [("o1", True), ("o1-mini", True), ("o3", True), ("o4-mini-2025-04-16", True), ("gpt-5", True),
     ("gpt-5-mini", True), ("gpt-5.1", True), ("openai/o3", True), ("gpt-4o", False), ("gpt-4.1-mini", False),
     ("ollama-o1x", False), ("qwen2.5-7b", False), ("stub-model", False), ("gpt-50", False)],
)  # fmt: skip
def test_reasoning_name_pattern(model, reasoning):
    """The documented name rule: o<digit> or gpt-5 at the start of the name (or after a provider
    prefix), followed by the end, a dash, a dot or an underscore."""
    assert LLMConfig(backend="openai", model=model).is_reasoning is reasoning


def test_reasoning_settings_change_the_cache_key_only_when_set():
    """A key of an ordinary request is the one it always was; the reasoning form, an effort or
    extra fields each give another key (their answers differ)."""
    req = LLMRequest(({"role": "user", "content": "x"},), "t", "1")
    plain = request_key("openai", "m", req, Decoding(32, 0.0, False))
    assert plain == request_key("openai", "m", req, Decoding(32, 0.0, False, None, False, None, None))
    others = {
        request_key("openai", "m", req, Decoding(32, 0.0, False, reasoning=True)),
        request_key("openai", "m", req, Decoding(32, 0.0, False, reasoning=True, reasoning_effort="high")),
        request_key("openai", "m", req, Decoding(32, 0.0, False, extra_body='{"top_k":5}')),
    }
    assert len(others) == 3 and plain not in others


@pytest.mark.parametrize(
    ("over", "message"),
    [({"reasoning": "yes"}, "reasoning must be one of auto, True, False"),
     ({"reasoning_effort": ""}, "reasoning_effort must match"),
     ({"extra_body": {"model": "other"}}, r"extra_body must not set \['model'\]")],
)  # fmt: skip
def test_bad_reasoning_settings_are_one_line_errors(over, message):
    with pytest.raises(ValueError, match=message):
        LLMConfig(backend="openai", model="o3", **over)
