"""The HTTP transport under the openai SDK: wall-clock bounds, an answer size cap, pinned addresses.

httpx's timeout bounds each socket operation, so a server trickling one byte per second holds a
request forever. Here every request has one deadline, `llm.timeout_s` from its start (connect, send,
headers and body together), and every request of a stage also ends by the stage's deadline
(`llm.stage_timeout_s` from the moment the backend was built). Each socket wait is cut to what is
left of the deadline, so a request never outlives it by more than the OS's own scheduling. An answer
body larger than `llm.max_answer_bytes` is refused while it arrives, before it is parsed or cached.

For an endpoint the privacy guard found on this host, the connection goes to the addresses the guard
checked (srrg.privacy.local_addresses), never to a fresh name lookup: a host name that resolves to
loopback once and elsewhere later cannot carry a prompt off the machine (docs/judges.md).
"""

from __future__ import annotations

import threading
import time
import typing
import urllib.request
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import httpcore
import httpx

_CURRENT = threading.local()  # the deadline of the request this thread is sending


class NotRetryable(httpx.TransportError):
    """A failure that another attempt cannot fix (the stage's time is spent, the answer is too large)."""


class StageDeadline(NotRetryable):
    """The stage's wall-clock budget (llm.stage_timeout_s) is spent: no further request is sent."""


class AnswerTooLarge(NotRetryable):
    """The answer body passed llm.max_answer_bytes."""


def _left(timeout: float | None, clock: Callable[[], float]) -> float | None:
    """The socket timeout cut to what is left of this thread's request deadline."""
    deadline = getattr(_CURRENT, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - clock()
    if left <= 0:
        raise httpcore.ReadTimeout("request deadline (llm.timeout_s) passed")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    """A socket stream whose every wait ends by the current request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, clock: Callable[[], float]) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, self._clock))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, self._clock))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: typing.Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _left(timeout, self._clock))
        return _BoundedStream(inner, self._clock)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _PinnedBackend(httpcore.SyncBackend):
    """Connects to the checked addresses of a host (pins: host -> addresses), bounded by the deadline."""

    def __init__(self, pins: dict[str, tuple[str, ...]] | None, clock: Callable[[], float]) -> None:
        self._pins = pins
        self._clock = clock

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses: tuple[str, ...] = (host,)
        if self._pins is not None:
            if host not in self._pins:
                raise httpcore.ConnectError(f"host {host} was not checked by the privacy guard; not connecting")
            addresses = self._pins[host]
        error: Exception | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(address, port, _left(timeout, self._clock), local_address, socket_options)
                return _BoundedStream(stream, self._clock)
            except httpcore.ConnectError as exc:  # try the next checked address (127.0.0.1, then ::1)
                error = exc
        raise error or httpcore.ConnectError(f"no address for {host}")


class _CappedBody(httpx.SyncByteStream):
    """The response body, refused once it passes max_bytes or the request deadline."""

    def __init__(
        self, inner: httpx.SyncByteStream, max_bytes: int, deadline: float, clock: Callable[[], float]
    ) -> None:
        self._inner = inner
        self._max = max_bytes
        self._deadline = deadline
        self._clock = clock

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            seen += len(chunk)
            if seen > self._max:
                raise AnswerTooLarge(f"answer larger than llm.max_answer_bytes={self._max}")
            if self._clock() > self._deadline:
                raise httpx.ReadTimeout("request deadline (llm.timeout_s) passed while the answer arrived")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class BoundedTransport(httpx.BaseTransport):
    """httpx transport with one wall-clock deadline per request and per stage and a body size cap."""

    def __init__(
        self,
        request_s: float,
        stage_s: float,
        max_bytes: int,
        pins: dict[str, tuple[str, ...]] | None,
        proxy: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._inner = httpx.HTTPTransport(trust_env=pins is None, proxy=proxy)
        pool = getattr(self._inner, "_pool", None)
        if not isinstance(pool, httpcore.ConnectionPool) or not hasattr(pool, "_network_backend"):
            raise RuntimeError(f"httpx {httpx.__version__}: cannot bound its connections (srrg.llm.transport)")
        pool._network_backend = _PinnedBackend(pins, clock)
        self._request_s = request_s
        self._stage_deadline = clock() + stage_s
        self._max = max_bytes
        self._clock = clock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        now = self._clock()
        if now >= self._stage_deadline:
            raise StageDeadline("the stage's llm time budget (llm.stage_timeout_s) is spent")
        deadline = min(now + self._request_s, self._stage_deadline)
        _CURRENT.deadline = deadline
        response = self._inner.handle_request(request)
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            extensions=response.extensions,
            stream=_CappedBody(response.stream, self._max, deadline, self._clock),
        )

    def close(self) -> None:
        self._inner.close()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment (HTTPS_PROXY, ALL_PROXY, NO_PROXY, ...) names for a remote URL."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


def http_client(
    url: str, request_s: float, stage_s: float, max_bytes: int, pins: dict[str, tuple[str, ...]] | None
) -> httpx.Client:
    """The client for one stage. pins (a loopback endpoint): no proxy from the environment, no
    redirect, connections only to the checked addresses; None (a remote endpoint the config allowed):
    the environment's proxy applies, inside the same bounds."""
    local = pins is not None
    transport = BoundedTransport(request_s, stage_s, max_bytes, pins, None if local else environment_proxy(url))
    return httpx.Client(transport=transport, trust_env=False, follow_redirects=not local, timeout=request_s)
