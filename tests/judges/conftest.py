"""Fixtures of the tests that point the LLM client at the scripted server (tests/openai_stub.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openai_stub import STUB_KEY, OpenAIStub, echo


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    """A scripted server that echoes each request's last user message (openai_stub.echo)."""
    with OpenAIStub(responder=echo) as s:
        yield s


@pytest.fixture
def stub_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """SRRG_TEST_KEY (the api_key_env of stub_llm_settings) set to STUB_KEY, which tests check never leaks."""
    monkeypatch.setenv("SRRG_TEST_KEY", STUB_KEY)
    return STUB_KEY
