"""Request/response types shared by every LLM backend, and the cache key that identifies a request.

A request carries everything that determines the answer (messages, template id + version, decoding
parameters), so two requests with the same key may share one cached answer whatever stage sent them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

OK, ERROR, TRUNCATED = "ok", "error", "truncated"
_FIELD = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One chat completion. `purpose` tags the stage for usage accounting and is not part of the key.

    max_tokens / temperature of None take the client's configured defaults. json_schema, when set,
    is a JSON schema (canonical JSON text) the answer must follow: a backend with schema-constrained
    decoding (openai) sends it to the server; see docs/judges.md "Structured answers".
    """

    messages: tuple[Mapping[str, str], ...]
    template: str
    template_version: str
    purpose: str = "default"
    max_tokens: int | None = None
    temperature: float | None = None
    json_mode: bool = False
    json_schema: str | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("an LLM request needs at least one message")
        for m in self.messages:
            if set(m) != {"role", "content"} or not isinstance(m["content"], str):
                raise ValueError(f"a message is {{'role': str, 'content': str}}, got {dict(m)!r}")
        object.__setattr__(self, "messages", tuple(dict(m) for m in self.messages))


@dataclass(frozen=True, slots=True)
class Decoding:
    """Resolved decoding parameters of a request (client defaults filled in). reasoning: the model
    takes the reasoning-model request form (max_completion_tokens, no temperature); reasoning_effort
    and extra_body (canonical JSON of further request fields) come from the `llm` slice."""

    max_tokens: int
    temperature: float
    json_mode: bool
    json_schema: str | None = None
    reasoning: bool = False
    reasoning_effort: str | None = None
    extra_body: str | None = None


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """status ok: `text` is the complete answer; status truncated: `text` was cut off by the
    max_tokens limit (finish_reason "length", or a local model that used every new token without a
    stop token); status error: `error` says why. Only complete, non-empty answers are cached.
    reused_prompt_tokens: prompt tokens the server says it took from its own prompt cache (0 when
    it does not say; docs/judges.md "Throughput")."""

    text: str = ""
    status: str = OK
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    attempts: int = 0
    reused_prompt_tokens: int = 0

    @property
    def ok(self) -> bool:
        return self.status == OK


def failed(error: str, attempts: int = 0) -> LLMResponse:
    return LLMResponse(status=ERROR, error=error, attempts=attempts)


def cut_off(max_tokens: int) -> str:
    """The error text of a truncated answer (its text is kept; callers decide what to do with it)."""
    return f"answer cut off at max_tokens={max_tokens}"


def cacheable(response: LLMResponse) -> bool:
    """Complete and non-empty: an error, a cut-off answer or a blank one is asked again next run."""
    return response.ok and bool(response.text.strip())


def schema_text(schema: Mapping[str, object]) -> str:
    """A JSON schema as the compact text a request carries. Key order is kept, not sorted: it is
    the order in which a schema-constrained decoder writes the fields."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))


def request_key(backend: str, model: str, request: LLMRequest, decoding: Decoding) -> str:
    """Stable hash of what determines an answer: backend, model, template version, messages, decoding."""
    payload = {
        "backend": backend,
        "model": model,
        "template": request.template,
        "template_version": request.template_version,
        "messages": [[m["role"], m["content"]] for m in request.messages],
        "max_tokens": decoding.max_tokens,
        "temperature": decoding.temperature,
        "json_mode": decoding.json_mode,
    }
    if decoding.json_schema is not None:  # only then: keys of requests without a schema stay as they were
        payload["json_schema"] = decoding.json_schema
    # likewise: an ordinary model's keys stay as they were; these change what the model answers
    if decoding.reasoning:
        payload["reasoning"] = True
    if decoding.reasoning_effort is not None:
        payload["reasoning_effort"] = decoding.reasoning_effort
    if decoding.extra_body is not None:
        payload["extra_body"] = decoding.extra_body
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Job:
    """A request as a backend sees it: messages plus resolved decoding parameters."""

    messages: tuple[Mapping[str, str], ...]
    decoding: Decoding


class Backend(Protocol):
    """A backend answers jobs; it yields (index, response) as answers complete, in any order."""

    name: str
    model: str
    has_model: bool

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]: ...


@dataclass
class PromptTemplate:
    """A versioned chat prompt whose only variable text is its declared fields.

    The privacy guard rests on this: a stage can send nothing but the template text and the values
    of the fields it declares (e.g. a location phrase), because render() refuses any other field.
    """

    id: str
    version: str
    messages: tuple[tuple[str, str], ...]
    fields: tuple[str, ...] = field(default=())

    def render(
        self,
        purpose: str,
        max_tokens: int | None = None,
        json_mode: bool = False,
        json_schema: str | None = None,
        **values: str,
    ) -> LLMRequest:
        missing = set(self.fields) - set(values)
        extra = set(values) - set(self.fields)
        if missing or extra:
            raise ValueError(
                f"prompt {self.id!r} declares fields {list(self.fields)}; "
                f"missing {sorted(missing)}, undeclared {sorted(extra)}"
            )

        def fill(text: str) -> str:
            return _FIELD.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), text)

        msgs = tuple({"role": role, "content": fill(text)} for role, text in self.messages)
        return LLMRequest(msgs, self.id, self.version, purpose, max_tokens, None, json_mode, json_schema)
