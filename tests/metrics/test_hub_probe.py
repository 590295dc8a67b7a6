"""The hub reachability probe before RadEval loads weights by name (srrg.models_fetch.hub_unreachable,
use_hub_or_caches): without HF_HUB_OFFLINE and without a hub, a model-backed metric fails in one line
at once instead of going through huggingface_hub's retry loop. Network only to loopback: the "hub"
is a closed 127.0.0.1 port or a server this file starts on 127.0.0.1."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from srrg import models_fetch as mf
from srrg.errors import UserError
from srrg.metrics import radeval as rv


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub(http.server.BaseHTTPRequestHandler):
    """Answers every HEAD with 200, as the hub's front page does."""

    def do_HEAD(self) -> None:  # http.server's method name
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:  # keep the test log quiet
        pass


@pytest.fixture
def hub_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def hub_state(monkeypatch):
    """Probe results are cached per process: each test starts without any; the hub client's offline
    flag is restored after the test."""
    from huggingface_hub import constants

    probe = mf.hub_unreachable  # a test may replace it
    probe.cache_clear()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield constants
    probe.cache_clear()


def test_a_closed_port_is_unreachable_at_once_and_a_listening_hub_is_not(hub_state, hub_server) -> None:
    start = time.monotonic()
    reason = mf.hub_unreachable(f"http://127.0.0.1:{closed_port()}", timeout_s=30.0)
    assert reason is not None and reason.startswith("ConnectError") and "\n" not in reason
    # refused, not waited for: one attempt, no retries (well under timeout_s=30 however loaded the machine)
    assert time.monotonic() - start < 10.0
    assert mf.hub_unreachable(hub_server, timeout_s=30.0) is None


def test_unreachable_hub_turns_the_hub_client_offline_for_this_process_only(hub_state, monkeypatch) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setattr(hub_state, "ENDPOINT", endpoint)
    monkeypatch.setenv(mf.MODELS_ENV, "/nonexistent/srrg-models")
    why = mf.prepare_offline("chexbert")
    assert why.startswith(f"the hub {endpoint} does not answer (ConnectError") and hub_state.HF_HUB_OFFLINE is True
    assert "HF_HUB_OFFLINE" not in os.environ and not mf.offline()  # the user's switch is left alone


def test_a_reachable_hub_or_a_metric_without_weights_changes_nothing(hub_state, hub_server, monkeypatch) -> None:
    monkeypatch.setattr(hub_state, "ENDPOINT", hub_server)
    monkeypatch.setenv(mf.MODELS_ENV, "/nonexistent/srrg-models")
    assert mf.prepare_offline("chexbert") is None and hub_state.HF_HUB_OFFLINE is False

    def no_probe(*args) -> None:
        raise AssertionError("a metric without weights must not probe the hub")

    monkeypatch.setattr(mf, "hub_unreachable", no_probe)
    assert mf.prepare_offline("radeval_rouge") is None


def test_the_load_error_names_the_unreachable_hub_in_one_line(hub_state, monkeypatch) -> None:
    registry = pytest.importorskip("radeval.metrics._registry")
    monkeypatch.setattr(hub_state, "ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv(mf.MODELS_ENV, "/nonexistent/srrg-models")

    class NoWeights:
        def __init__(self) -> None:
            raise OSError("We couldn't connect to the hub to load the files.\nCheck your connection.")

    monkeypatch.setattr(registry, "get_metric_class", lambda name: NoWeights)
    with pytest.raises(UserError) as err:
        rv.radeval_metric("f1chexbert", "chexbert")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("chexbert: RadEval could not load its weights (the hub http://127.0.0.1:")
    assert "does not answer (ConnectError" in message and "srrg models fetch" in message


@pytest.mark.slow
def test_score_chexbert_without_a_hub_is_one_line_without_retries(tmp_path: Path) -> None:
    """The real RadEval CheXbert loader, HF_HUB_OFFLINE unset, the endpoint a closed loopback port and
    every cache empty: before the probe this printed ~100 retry warnings over minutes."""
    pytest.importorskip("radeval")
    (tmp_path / "r.jsonl").write_text('{"study_id": "s1", "report": "No pleural effusion."}\n')
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")}
    env.update(
        HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}",
        HF_HOME=str(tmp_path / "hf"),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
        SRRG_MODELS_DIR=str(tmp_path / "models"),
    )
    cmd = [
        sys.executable,
        "-m",
        "srrg",
        "score",
        "--refs",
        "r.jsonl",
        "--hyps",
        "r.jsonl",
        "--metrics",
        "chexbert",
        "--out",
        "out",
    ]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False)
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1, err[-2000:]
    assert "does not answer (ConnectError" in err and "srrg models fetch" in err
    assert "Retry" not in err and "Retrying" not in done.stdout
