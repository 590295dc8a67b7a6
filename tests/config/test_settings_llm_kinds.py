"""The llm settings (srrg.settings.llm) of reasoning-model requests, the kinds issue 53 found missing:
each cross-field refusal named by its own key, the model rule only for the openai backend, the
reasoning-model name rule on names with a provider prefix and in any case. Each test's docstring
names the bug it catches."""

from __future__ import annotations

import pytest

from srrg.settings.fields import SettingsError
from srrg.settings.llm import REASONING_MODEL, LLMConfig


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [
        ({"extra_body": {"model": "x", "top_k": 1}}, "llm.extra_body", "must not set ['model']"),
        ({"extra_body": {"n": 2, "stream": True}}, "llm.extra_body", "must not set ['n', 'stream']"),
        ({"extra_body": ["top_k"]}, "llm.extra_body", "must be a mapping of request fields"),
        ({"backend": "openai", "base_url": "http://127.0.0.1:8080/v1"}, "llm.model", "is required for the openai"),
        ({"base_url": "http://h:99999/v1"}, "llm.base_url", "is not a URL"),
        ({"base_url": "ftp://h/v1"}, "llm.base_url", "ftp://h/v1"),
    ],
)
def test_each_rule_names_its_own_key(data, key, words):
    """Bugs: a refusal filed under the wrong key (its message passed as the key), an own field such
    as model slipping through extra_body, a bad URL accepted."""
    with pytest.raises(SettingsError) as err:
        LLMConfig.from_dict(data)
    assert str(err.value).startswith(key + " ") and words in str(err.value)


def test_a_model_is_required_only_by_the_openai_backend():
    """Bug: the backend test dropped from the model rule, so the rules and local backends (which
    need no endpoint model name) are refused."""
    for backend in ("rules", "local"):
        assert LLMConfig.from_dict({"backend": backend}).model == ""
    assert LLMConfig.from_dict({"backend": "openai", "model": "m"}).model == "m"
    assert LLMConfig.from_dict({"extra_body": {"top_k": 5}}).extra_body == {"top_k": 5}


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [("o3-mini", True), ("O1", True), ("openai/o4-mini", True), ("gpt-5", True), ("GPT-5.1-chat", True),
     ("gpt-4o", False), ("solo3", False), ("o", False), ("gpt-50", False), ("llama-o1x", False)],
)  # fmt: skip
def test_reasoning_models_by_name(model, reasoning):
    """Bugs: the name rule case-sensitive (O1 missed), blind to a provider prefix, or matching a
    substring (gpt-4o, solo3)."""
    assert bool(REASONING_MODEL.search(model)) is reasoning
    assert LLMConfig(model=model).is_reasoning is reasoning
    assert LLMConfig(model=model, reasoning=not reasoning).is_reasoning is (not reasoning)
