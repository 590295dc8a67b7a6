"""One LLM client for the whole project (docs/judges.md): every LLM use goes through `LLMClient.complete`.

    from srrg.llm import LLMClient, PromptTemplate
    from srrg.settings.llm import LLMConfig
    client = LLMClient(LLMConfig.from_dict(config["llm"]))
    answers = client.complete([template.render("green", reference=r, candidate=c) for r, c in pairs])

Backends: rules (no model), openai (OpenAI-compatible HTTP), local (transformers). Answers are cached
in SQLite; remote endpoints need `allow_remote: true`; keys come from an environment variable.
"""

from srrg.llm.base import ERROR, OK, LLMRequest, LLMResponse, PromptTemplate
from srrg.llm.cache import ResponseCache
from srrg.llm.client import LLMClient, make_backend
from srrg.llm.usage import Usage, UsageLedger

__all__ = [
    "ERROR",
    "OK",
    "LLMClient",
    "LLMRequest",
    "LLMResponse",
    "PromptTemplate",
    "ResponseCache",
    "Usage",
    "UsageLedger",
    "make_backend",
]
