"""srrg.llm.transport's deadlines on a fake clock (issue 38): a request still running when the
stage's time budget (llm.stage_timeout_s) ends is cut off there, not at its own llm.timeout_s, and
no request is sent once the budget is spent. The clock is the transport's own `clock` argument,
advanced by the scripted server while it answers: no wall-clock wait, so load cannot change it."""

from __future__ import annotations

import httpx
import pytest
from openai_stub import OpenAIStub, Reply

from srrg.llm.transport import BoundedTransport, StageDeadline

PINS = {"127.0.0.1": ("127.0.0.1",)}  # a loopback endpoint, as the privacy guard pins it
BODY = {"model": "m", "messages": [{"role": "user", "content": "apex"}]}


class Clock:
    """Seconds that pass only when a test (or the stub answering) says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(clock: Clock):
    """A transport with a 30 s request budget inside a 10 s stage budget that began at 1000."""
    transport = BoundedTransport(request_s=30.0, stage_s=10.0, max_bytes=1 << 20, pins=PINS, clock=clock)
    with httpx.Client(transport=transport, trust_env=False, timeout=30.0) as c:
        yield c


def test_a_request_running_when_the_stage_budget_ends_is_cut_off(clock: Clock, client: httpx.Client) -> None:
    """At 1002 the request's own budget runs to 1032 but the stage's ends at 1010; the server takes
    until 1015. Bug caught: a request deadline of now + timeout_s alone (min with the stage's
    deadline dropped) lets this answer through."""
    passes = iter([0.0, 13.0])  # the first answer is instant, the second takes 13 s

    def answer(body: dict) -> Reply:
        clock.now += next(passes)
        return Reply("fine")

    with OpenAIStub(responder=answer) as stub:
        url = stub.base_url + "/chat/completions"
        clock.now = 1002.0
        assert client.post(url, json=BODY).status_code == 200  # inside both budgets
        with pytest.raises(httpx.TimeoutException, match="deadline"):
            client.post(url, json=BODY)
        assert clock.now == 1015.0 and len(stub.requests) == 2


@pytest.mark.parametrize("at", [1010.0, 1011.5])
def test_no_request_is_sent_once_the_stage_budget_is_spent(clock: Clock, client: httpx.Client, at: float) -> None:
    """At the stage's deadline (1010) and after it: StageDeadline before anything is sent. Bugs
    caught: `now > deadline` (a request sent at exactly 1010), or the stage's deadline taken from
    each request's start (clock() + stage_s per request) instead of the transport's creation."""
    with OpenAIStub(responder=lambda body: Reply("fine")) as stub:
        url = stub.base_url + "/chat/completions"
        clock.now = 1009.0
        assert client.post(url, json=BODY).status_code == 200
        clock.now = at
        with pytest.raises(StageDeadline, match="stage_timeout_s"):
            client.post(url, json=BODY)
        assert len(stub.requests) == 1
