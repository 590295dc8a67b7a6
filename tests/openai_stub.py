"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests of anything that calls an LLM.

Usage:
    with OpenAIStub(responder=lambda body: Reply("in the right lung")) as stub:
        stub.enqueue(Status(429, headers={"Retry-After": "1"}), Status(500), Delay(2.0), Malformed())
        ... point the client at stub.base_url ...
        stub.requests  # parsed JSON bodies, in arrival order
Each POST /v1/chat/completions takes the next scripted action from the queue; when the queue is empty
the responder (a function of the parsed request body) decides. Actions: Reply (a valid completion),
Status (an HTTP error with optional headers), Delay (sleep, then another action: makes client
timeouts), Malformed (200 with a body that is not a chat completion), Drop (close the connection).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """cached_tokens: usage.prompt_tokens_details.cached_tokens, as OpenAI, vLLM and llama-server report
    the prompt tokens they served from their prompt cache (None: left out, as llama-cpp-python's server)."""

    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str = "stop"
    cached_tokens: int | None = None


@dataclass
class Status:
    code: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted error"


@dataclass
class Delay:
    seconds: float
    then: Action = field(default_factory=lambda: Reply("late answer"))


@dataclass
class Malformed:
    body: str = '{"id": "x", "choices": [ this is not json'


@dataclass
class Drop:
    """Close the connection without an HTTP response."""


Action = Reply | Status | Delay | Malformed | Drop


STUB_KEY = "sk-test-DO-NOT-LEAK-4242"  # what the stub_key fixture (tests/judges/conftest.py) puts in SRRG_TEST_KEY


def stub_llm_settings(base_url: str, tmp_path: Any, **over: Any) -> dict[str, Any]:
    """The `llm` settings of a client talking to a stub: the openai backend, a key read from
    SRRG_TEST_KEY, the cache under tmp_path, a wide per-request timeout (no request of a test may time
    out on a loaded machine) and quick retries; `over` replaces any of them."""
    return {
        "backend": "openai",
        "model": "stub-model",
        "base_url": base_url,
        "api_key_env": "SRRG_TEST_KEY",
        "cache_dir": str(tmp_path / "cache"),
        "timeout_s": 60.0,
        "max_retries": 1,
        "retry_base_delay_s": 0.01,
        "retry_max_delay_s": 0.02,
        **over,
    }


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request (handy in responders)."""
    users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def stub_config(base_url: str, tmp_path: Any, **over: Any) -> Any:
    """stub_llm_settings as the client's LLMConfig."""
    from srrg.settings.llm import LLMConfig

    return LLMConfig.from_dict(stub_llm_settings(base_url, tmp_path, **over))


def echo(body: dict[str, Any]) -> Reply:
    """A responder that answers "answer: <the last user message>", so a test sees which request got which answer."""
    return Reply("answer: " + last_user_message(body))


def completion_body(reply: Reply, model: str) -> dict[str, Any]:
    details = {} if reply.cached_tokens is None else {"prompt_tokens_details": {"cached_tokens": reply.cached_tokens}}
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": reply.finish_reason}
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            **details,
        },
    }


class OpenAIStub:
    """Start with start() (or a with block) on a free port; stop() shuts it down."""

    def __init__(self, responder: Callable[[dict[str, Any]], Action] | None = None, slots: int | None = None) -> None:
        """slots: answer GET /props with {"total_slots": slots} as llama.cpp's llama-server does (None: 404)."""
        self.responder = responder or (lambda body: Reply("ok"))
        self.slots = slots
        self.gets: list[str] = []  # paths of GET requests, in arrival order
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # per request, lower-case header names
        self._queue: deque[Action] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def enqueue(self, *actions: Action) -> None:
        with self._lock:
            self._queue.extend(actions)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("stub not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next_action(self, body: dict[str, Any]) -> Action:
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
        return self.responder(body)

    def start(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                with stub._lock:
                    stub.gets.append(self.path)
                if self.path.rstrip("/").endswith("/props") and stub.slots is not None:
                    self._send(200, {"total_slots": stub.slots})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with stub._lock:
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._act(stub._next_action(body), body)

            def _act(self, action: Action, body: dict[str, Any]) -> None:
                if isinstance(action, Delay):
                    time.sleep(action.seconds)
                    self._act(action.then, body)
                elif isinstance(action, Reply):
                    self._send(200, completion_body(action, str(body.get("model", "stub"))))
                elif isinstance(action, Status):
                    self._send(action.code, {"error": {"message": action.message, "type": "stub"}}, action.headers)
                elif isinstance(action, Malformed):
                    self._send_raw(200, action.body.encode("utf-8"), {})
                elif isinstance(action, Drop):
                    self.close_connection = True
                    self.connection.close()

            def _send(self, code: int, obj: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send_raw(code, json.dumps(obj).encode("utf-8"), headers or {})

            def _send_raw(self, code: int, data: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
