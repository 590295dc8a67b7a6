"""Backend for any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI, vLLM, llama.cpp, Ollama).

Retries are ours, not the SDK's, so that they are the same for every server and testable: transient
faults (429, 408/409, 5xx, timeouts, connection errors, malformed bodies) are retried with capped
exponential backoff and jitter, waiting at least what Retry-After / retry-after-ms asks for but never
longer than retry_max_delay_s (a non-finite value is ignored: issue 16 case 4); other client errors
(400, 401, 404, ...) fail at once. Concurrency is bounded by a thread pool of llm.concurrency
workers, or of one more than the slots a llama.cpp server on this host reports (in_flight). An answer with
finish_reason "length" was cut off by max_tokens and comes back with status truncated. A request
with a JSON schema asks for schema-constrained decoding through `response_format`, in the shape
that llm.schema_format names (docs/judges.md "Structured answers").

HTTP goes through our own httpx client (srrg.llm.transport): for a loopback endpoint it ignores every
proxy variable (HTTP_PROXY, ALL_PROXY, ...), follows no redirect and connects only to the addresses the
privacy guard checked, so a request allowed as local cannot leave the machine (issue 16 case 1, issue 25);
each request is bounded in wall-clock time and answer size, and so is the stage (issue 25).
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any
from urllib.parse import urljoin

import httpx
import openai

from srrg.llm.base import OK, TRUNCATED, Decoding, Job, LLMResponse, cut_off, failed
from srrg.llm.transport import NotRetryable, http_client
from srrg.privacy import api_key, check_endpoint, connection_pins, redact
from srrg.settings.llm import LLMConfig

log = logging.getLogger(__name__)
RETRY_STATUS = frozenset({408, 409, 429})
_PROBE_S = 5.0  # the slot probe's limit: a server that is slow to say is asked nothing more


class MalformedResponse(ValueError):
    """The server answered 200 with something that is not a chat completion."""


def _finite_wait(seconds: float) -> float | None:
    """A wait in seconds, or None for inf/nan (which would overflow time.sleep)."""
    return max(0.0, seconds) if math.isfinite(seconds) else None


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: retry-after-ms, or Retry-After in seconds or as an HTTP
    date; None when absent, unreadable or not finite. Capping is backoff_delay's job."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return _finite_wait(float(lower["retry-after-ms"]) / 1000.0)
        value = lower.get("retry-after")
        if value is None:
            return None
        return _finite_wait(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(lower["retry-after"]).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _finite_wait(when - (time.time() if now is None else now))


def backoff_delay(attempt: int, base_s: float, cap_s: float, retry_after_s: float | None, rng: random.Random) -> float:
    """Wait before retry number attempt+1: equal-jitter exponential backoff min(cap, base*2^attempt)
    drawn in [half, full], and at least the server's Retry-After, which is itself capped by cap_s
    (a server asking for 86400 s must not stall a run for a day per retry)."""
    ceiling = min(cap_s, base_s * 2.0 ** min(attempt, 64))
    delay = ceiling / 2 + rng.uniform(0, ceiling / 2)
    return max(delay, min(retry_after_s or 0.0, cap_s))


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc.__cause__, NotRetryable):  # the stage's time is spent, the answer is too large
        return False
    if isinstance(exc, (openai.APIConnectionError, MalformedResponse)):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUS or exc.status_code >= 500
    return False


def reused_tokens(usage: Any) -> int:
    """Prompt tokens served from the server's prompt cache: usage.prompt_tokens_details.cached_tokens
    (OpenAI, vLLM, llama.cpp's llama-server); 0 where the server does not report it."""
    details = getattr(usage, "prompt_tokens_details", None)
    value = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    return value if type(value) is int and value > 0 else 0


def read_completion(completion: Any) -> tuple[str, int, int, bool]:
    """(text, prompt tokens, completion tokens, cut off by max_tokens) of a chat completion, or
    MalformedResponse."""
    try:
        choice = completion.choices[0]
        text = choice.message.content
    except (AttributeError, IndexError, TypeError, KeyError) as exc:
        raise MalformedResponse(f"no choices[0].message in the answer ({type(exc).__name__})") from exc
    if not isinstance(text, str):
        raise MalformedResponse("answer has no text content")
    usage = getattr(completion, "usage", None)
    pt = getattr(usage, "prompt_tokens", 0) or 0
    ct = getattr(usage, "completion_tokens", 0) or 0
    return text, int(pt), int(ct), getattr(choice, "finish_reason", None) == "length"


def make_sdk_client(cfg: LLMConfig, url: str, client: httpx.Client) -> openai.OpenAI:
    """The official client with SDK retries off (ours apply), the configured timeout and our
    HTTP client."""
    common = {"api_key": api_key(cfg), "timeout": cfg.timeout_s, "max_retries": 0, "http_client": client}
    if cfg.azure_api_version:
        return openai.AzureOpenAI(azure_endpoint=url, api_version=cfg.azure_api_version, **common)
    return openai.OpenAI(base_url=url, **common)


def props_url(url: str) -> str:
    """llama.cpp's llama-server answers GET /props at its root, beside /v1."""
    return urljoin(url.rstrip("/") + "/", "../props")


def server_slots(client: httpx.Client, url: str, timeout_s: float = _PROBE_S) -> int | None:
    """How many requests the server decodes at once: `total_slots` of llama-server's GET /props, or
    None for a server that does not say (llama-cpp-python's server, vLLM, Ollama: a 404)."""
    try:
        response = client.get(props_url(url), timeout=min(timeout_s, _PROBE_S))
        slots = response.json().get("total_slots") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):  # no server yet, not JSON, not an object
        return None
    return slots if type(slots) is int and slots > 0 else None


def in_flight(concurrency: int, slots: int | None) -> int:
    """Requests sent at once: llm.concurrency, but at most one more than the server's slots (one
    waits ready for the next free slot); more would only wait in the server's queue, where
    llm.timeout_s runs and the send order (srrg.llm.client.prefix_order) is lost."""
    return concurrency if slots is None else min(concurrency, slots + 1)


def response_format(schema_json: str, schema_format: str) -> dict[str, Any]:
    """The request's `response_format` for schema-constrained decoding, in the shape the server
    reads (llm.schema_format): OpenAI's json_schema (also vLLM, Ollama, llama.cpp's llama-server)
    or json_object with a schema (llama-cpp-python's server, which rejects json_schema)."""
    schema = json.loads(schema_json)
    if schema_format == "json_object":
        return {"type": "json_object", "schema": schema}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "answer"))[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def request_fields(decoding: Decoding, schema_format: str) -> dict[str, Any]:
    """The chat request's fields after model and messages. An ordinary model: max_tokens and
    temperature; a reasoning model (o-series, gpt-5; llm.reasoning): max_completion_tokens, no
    temperature (they reject both older fields) and reasoning_effort when set. Then the answer
    format, and llm.extra_body passed through as the SDK's extra_body (merged into the JSON body)."""
    if decoding.reasoning:
        fields: dict[str, Any] = {"max_completion_tokens": decoding.max_tokens}
        if decoding.reasoning_effort is not None:
            fields["reasoning_effort"] = decoding.reasoning_effort
    else:
        fields = {"max_tokens": decoding.max_tokens, "temperature": decoding.temperature}
    if decoding.json_schema is not None:
        fields["response_format"] = response_format(decoding.json_schema, schema_format)
    elif decoding.json_mode:
        fields["response_format"] = {"type": "json_object"}
    if decoding.extra_body is not None:
        fields["extra_body"] = json.loads(decoding.extra_body)
    return fields


class OpenAIBackend:
    """supports_schema: the judges' structured answers (docs/judges.md) are on by default here."""

    name = "openai"
    has_model = True
    supports_schema = True

    def __init__(self, cfg: LLMConfig, sleep: Callable[[float], None] = time.sleep, seed: int | None = None) -> None:
        if not cfg.model:
            raise ValueError("llm.model is required for the openai backend (the endpoint's model name)")
        self.cfg = cfg
        self.model = cfg.model
        url = check_endpoint(cfg)
        pins = connection_pins(url)
        self._http = http_client(url, cfg.timeout_s, cfg.stage_timeout_s, cfg.max_answer_bytes, pins)
        self._client = make_sdk_client(cfg, url, self._http)
        self._url, self._local = url, pins is not None
        self.slots: int | None = None
        self.workers: int | None = None  # set when the first requests go out (a warm rerun asks nothing)
        self._secret = api_key(cfg)
        self._sleep = sleep
        self._rng = random.Random(seed)

    def _call(self, job: Job) -> LLMResponse:
        extra = request_fields(job.decoding, self.cfg.schema_format)
        attempt = 0
        while True:
            try:
                completion = self._client.chat.completions.create(
                    model=self.model, messages=[dict(m) for m in job.messages], **extra
                )
                text, pt, ct, cut = read_completion(completion)
                return LLMResponse(
                    text=text,
                    status=TRUNCATED if cut else OK,
                    error=cut_off(job.decoding.max_tokens) if cut else None,
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    attempts=attempt + 1,
                    reused_prompt_tokens=reused_tokens(getattr(completion, "usage", None)),
                )
            except (
                openai.OpenAIError,
                ValueError,
                RecursionError,
            ) as exc:  # a body that is not JSON, or nested too deep
                error = (
                    exc if isinstance(exc, openai.OpenAIError) else MalformedResponse(str(exc) or type(exc).__name__)
                )
                why = f" ({exc.__cause__})" if isinstance(exc.__cause__, NotRetryable) else ""
                message = redact(f"{type(error).__name__}: {error}{why}", self._secret)
                if not is_retryable(error) or attempt >= self.cfg.max_retries:
                    return failed(message, attempts=attempt + 1)
                headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else None
                delay = backoff_delay(
                    attempt,
                    self.cfg.retry_base_delay_s,
                    self.cfg.retry_max_delay_s,
                    parse_retry_after(headers),
                    self._rng,
                )
                log.info("llm retry %d/%d in %.2fs after %s", attempt + 1, self.cfg.max_retries, delay, message)
                self._sleep(delay)
                attempt += 1

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]:
        if not jobs:
            return
        if self.workers is None:  # a server on this host is asked how many requests it decodes at once
            self.slots = server_slots(self._http, self._url, self.cfg.timeout_s) if self._local else None
            self.workers = in_flight(self.cfg.concurrency, self.slots)
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
            futures = {pool.submit(self._call, job): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                yield futures[future], future.result()
