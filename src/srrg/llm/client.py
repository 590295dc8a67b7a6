"""The one LLM client every stage uses: cache lookup, de-duplication, backend dispatch, usage.

complete(requests) returns one response per request, in order. Identical requests in a batch are
sent once; answers already in the cache are not sent at all (a warm rerun sends zero requests);
each complete, non-empty answer is written to the cache as soon as it arrives, so an interrupted
run keeps them; a cut-off answer (status truncated) comes back with its text but is never cached.
Requests are sent in prefix order (prefix_order), so a server's prompt cache stays hot.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence

from srrg.llm.base import (
    TRUNCATED,
    Backend,
    Decoding,
    Job,
    LLMRequest,
    LLMResponse,
    cacheable,
    failed,
    request_key,
    schema_text,
)
from srrg.llm.cache import ResponseCache
from srrg.llm.usage import UsageLedger
from srrg.progress import Progress
from srrg.settings.llm import LLMConfig

log = logging.getLogger(__name__)


class RulesBackend:
    """No model: stages with a deterministic fallback use it; every request answers 'no model'."""

    name = "rules"
    model = "none"
    has_model = False

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]:
        for i in range(len(jobs)):
            yield i, failed("rules backend: no model")


def prefix_order(prompts: Sequence[Sequence[Mapping[str, str]]]) -> list[int]:
    """Positions of the prompts in the order they are sent: sorted message by message (role, then
    text), which walks the prompts' prefix tree depth first, so prompts sharing a prefix (a judge's
    instructions, then a reference that several candidates share) follow one another and a server
    that keeps the last prompt's KV state reuses it (docs/judges.md "Throughput"). Ties keep their order."""
    return sorted(range(len(prompts)), key=lambda i: [(m["role"], m["content"]) for m in prompts[i]])


def make_backend(cfg: LLMConfig) -> Backend:
    """The configured backend; heavy modules (openai, transformers) load only when chosen."""
    if cfg.backend == "openai":
        from srrg.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(cfg)
    if cfg.backend == "local":
        from srrg.llm.local_backend import LocalBackend

        return LocalBackend(cfg)
    return RulesBackend()


class LLMClient:
    """Batched completion through the configured backend and the shared response cache."""

    def __init__(self, cfg: LLMConfig, backend: Backend | None = None, cache: ResponseCache | None = None) -> None:
        self.cfg = cfg
        self.backend = backend if backend is not None else make_backend(cfg)
        if cache is None and self.backend.has_model:
            cache = ResponseCache(cfg.cache_path)
        self.cache = cache
        self.usage = UsageLedger(cfg.price_input_per_1m, cfg.price_output_per_1m)

    @property
    def has_model(self) -> bool:
        return self.backend.has_model

    def describe(self) -> str:
        """Where the answers come from, for one-line failure messages (never holds a key)."""
        if self.backend.name == "openai":
            from srrg.privacy import OPENAI_DEFAULT_URL

            return f"openai endpoint {self.cfg.base_url or OPENAI_DEFAULT_URL} (model {self.backend.model})"
        return f"{self.backend.name} model {self.backend.model}"

    def decoding(self, request: LLMRequest) -> Decoding:
        """The request's decoding with the client's defaults and the openai backend's request form
        (reasoning models, reasoning_effort, extra_body; docs/judges.md "Reasoning models")."""
        openai = self.backend.name == "openai"
        return Decoding(
            max_tokens=request.max_tokens if request.max_tokens is not None else self.cfg.max_new_tokens,
            temperature=request.temperature if request.temperature is not None else self.cfg.temperature,
            json_mode=request.json_mode,
            json_schema=request.json_schema,
            reasoning=openai and self.cfg.is_reasoning,
            reasoning_effort=self.cfg.reasoning_effort if openai else None,
            extra_body=schema_text(self.cfg.extra_body) if openai and self.cfg.extra_body else None,
        )

    def complete(self, requests: Sequence[LLMRequest], progress: bool = True) -> list[LLMResponse]:
        """One response per request, in order; failures come back as status 'error', never raised."""
        decodings = [self.decoding(r) for r in requests]
        keys = [request_key(self.backend.name, self.backend.model, r, d) for r, d in zip(requests, decodings)]
        for r in requests:
            self.usage.of(r.purpose).requests += 1
        answers: dict[str, LLMResponse] = self.cache.get_many(keys) if self.cache is not None else {}
        for r, k in zip(requests, keys):
            if k in answers:
                self.usage.of(r.purpose).cache_hits += 1
        todo: dict[str, int] = {}  # key -> index of the first request with that key
        for i, k in enumerate(keys):
            if k not in answers:
                todo.setdefault(k, i)
        first = list(todo.values())
        pending = [first[j] for j in prefix_order([requests[i].messages for i in first])]  # keeps a prefix hot
        if pending:
            jobs = [Job(requests[i].messages, decodings[i]) for i in pending]
            bar = Progress(len(jobs), f"llm {self.backend.name}", "req", disable=not progress)
            for j, response in self.backend.generate(jobs):
                i = pending[j]
                self._account(requests[i], response)
                if cacheable(response) and self.cache is not None:
                    self.cache.put(
                        keys[i],
                        self.backend.name,
                        self.backend.model,
                        requests[i].template,
                        requests[i].template_version,
                        response,
                    )
                answers[keys[i]] = response
                bar.update(1)
            bar.close()
        errors = sum(answers[keys[i]].status not in ("ok", TRUNCATED) for i in pending)
        cut = sum(answers[keys[i]].status == TRUNCATED for i in pending)
        log.info(
            "llm %s/%s: %d requests, %d unique sent, %d errors, %d cut off by max_tokens",
            self.backend.name,
            self.backend.model,
            len(requests),
            len(pending),
            errors,
            cut,
        )
        sent = set(pending)
        return [answers[k] if i in sent or answers[k].cached else _shared(answers[k]) for i, k in enumerate(keys)]

    def _account(self, request: LLMRequest, response: LLMResponse) -> None:
        u = self.usage.of(request.purpose)
        if self.backend.has_model:
            u.sent += 1
            u.attempts += response.attempts
        if response.status == TRUNCATED:
            u.truncated += 1
        elif not response.ok:
            u.errors += 1
        self.usage.record_tokens(
            request.purpose, response.prompt_tokens, response.completion_tokens, response.reused_prompt_tokens
        )


def _shared(response: LLMResponse) -> LLMResponse:
    """A duplicate of a request answered in this batch: same answer, no usage of its own."""
    return LLMResponse(response.text, response.status, response.error, 0, 0, cacheable(response), 0)
