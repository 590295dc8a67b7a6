"""Unit tests of the LLM client layer: keys, backoff, Retry-After, config, privacy guard, cache, usage."""

from __future__ import annotations

import multiprocessing as mp
import random
from collections.abc import Iterator, Sequence

import pytest

from srrg.llm import LLMClient, LLMRequest, LLMResponse, PromptTemplate, ResponseCache
from srrg.llm.base import Decoding, Job, request_key
from srrg.llm.client import prefix_order
from srrg.llm.openai_backend import backoff_delay, parse_retry_after
from srrg.llm.usage import UsageLedger
from srrg.privacy import is_local_url, redact
from srrg.settings.llm import LLMConfig

MSG = ({"role": "user", "content": "left base"},)


def req(content: str = "left base", **kw) -> LLMRequest:
    return LLMRequest(({"role": "user", "content": content},), "t", "1", **kw)


def test_request_key_depends_on_what_determines_the_answer_only():
    d = Decoding(32, 0.0, False)
    base = request_key("openai", "m", req(), d)
    assert base == request_key("openai", "m", req(purpose="other stage"), d)  # purpose is accounting only
    variants = [
        request_key("local", "m", req(), d),
        request_key("openai", "m2", req(), d),
        request_key("openai", "m", LLMRequest(MSG, "t", "2"), d),
        request_key("openai", "m", LLMRequest(MSG, "u", "1"), d),
        request_key("openai", "m", req("right base"), d),
        request_key("openai", "m", req(), Decoding(33, 0.0, False)),
        request_key("openai", "m", req(), Decoding(32, 0.5, False)),
        request_key("openai", "m", req(), Decoding(32, 0.0, True)),
    ]
    assert len({base, *variants}) == 9


def test_request_validates_messages():
    with pytest.raises(ValueError):
        LLMRequest((), "t", "1")
    with pytest.raises(ValueError):
        LLMRequest(({"role": "user", "text": "x"},), "t", "1")


def test_backoff_is_exponential_capped_jittered_and_honours_retry_after():
    rng = random.Random(0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 10.0)]:
        d = backoff_delay(attempt, 1.0, 10.0, None, rng)
        assert ceiling / 2 <= d <= ceiling
    assert backoff_delay(0, 1.0, 10.0, 7.5, rng) == 7.5
    assert 0.5 <= backoff_delay(0, 1.0, 10.0, 0.1, rng) <= 1.0


def test_parse_retry_after():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


def test_config_defaults_and_errors():
    cfg = LLMConfig.from_dict(None)
    assert cfg.backend == "rules" and cfg.concurrency == 8 and cfg.temperature == 0.0 and not cfg.allow_remote
    with pytest.raises(ValueError, match=r"unknown key\(s\) llm\.concurency "):
        LLMConfig.from_dict({"concurency": 3})
    with pytest.raises(ValueError, match="backend"):
        LLMConfig.from_dict({"backend": "gpt"})
    with pytest.raises(ValueError, match="concurrency"):
        LLMConfig.from_dict({"concurrency": 0})
    for secret_key in ("api_key", "openai_api_key", "token", "password"):
        with pytest.raises(ValueError, match="environment variable"):
            LLMConfig.from_dict({secret_key: "sk-x"})
    assert LLMConfig.from_dict({"max_new_tokens": 5}).max_new_tokens == 5  # "tokens" is not a secret


def test_is_local_url():
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1", "http://127.0.0.5/v1"):
        assert is_local_url(url)
    for url in (
        "https://api.openai.com/v1",
        "http://10.0.0.5:8000/v1",
        "https://x.openai.azure.com",
        "http://localhost.evil.com/v1",
    ):
        assert not is_local_url(url)
    assert redact("key sk-abcdef leaked", "sk-abcdef") == "key *** leaked"


def test_prompt_template_sends_only_declared_fields():
    t = PromptTemplate(
        "p", "3", (("system", 'Answer as JSON like {"a": 1}.'), ("user", "Phrase: {phrase}")), ("phrase",)
    )
    r = t.render("normalize", phrase="left base", max_tokens=9)
    assert r.messages == (
        {"role": "system", "content": 'Answer as JSON like {"a": 1}.'},
        {"role": "user", "content": "Phrase: left base"},
    )
    assert (r.template, r.template_version, r.purpose, r.max_tokens) == ("p", "3", "normalize", 9)
    with pytest.raises(ValueError, match="undeclared"):
        t.render("normalize", phrase="x", report="the whole report")
    with pytest.raises(ValueError, match="missing"):
        t.render("normalize")


def test_usage_cost_from_configured_prices():
    ledger = UsageLedger(price_input_per_1m=2.0, price_output_per_1m=8.0)
    ledger.record_tokens("a", 1000, 500)
    ledger.record_tokens("b", 500_000, 0)
    assert ledger.of("a").cost_usd == pytest.approx(0.002 + 0.004)
    assert ledger.total().cost_usd == pytest.approx(1.006)
    assert ledger.to_dict()["total"]["prompt_tokens"] == 501_000


class ScriptedBackend:
    """Answers 'A:<content>' except for contents starting with 'fail'."""

    name, model, has_model = "fake", "fake-1", True

    def __init__(self) -> None:
        self.seen: list[str] = []

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]:
        for i in reversed(range(len(jobs))):  # out of order on purpose
            content = jobs[i].messages[-1]["content"]
            self.seen.append(content)
            if content.startswith("fail"):
                yield i, LLMResponse(status="error", error="scripted", attempts=1)
            else:
                yield i, LLMResponse(text="A:" + content, prompt_tokens=3, completion_tokens=2, attempts=1)


def test_client_orders_dedupes_caches_good_answers_only(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = ScriptedBackend()
    client = LLMClient(LLMConfig(), backend=backend, cache=cache)
    out = client.complete([req("x"), req("fail"), req("x"), req("y")], progress=False)
    assert [r.text for r in out] == ["A:x", "", "A:x", "A:y"]
    assert [r.status for r in out] == ["ok", "error", "ok", "ok"]
    assert sorted(backend.seen) == ["fail", "x", "y"] and len(cache) == 2
    assert out[2].cached and not out[0].cached and out[2].prompt_tokens == 0
    u = client.usage.of("default")
    assert (u.requests, u.sent, u.errors, u.cache_hits, u.prompt_tokens) == (4, 3, 1, 0, 6)
    again = LLMClient(LLMConfig(), backend=backend, cache=cache).complete([req("x"), req("fail")], progress=False)
    assert again[0].cached and again[0].text == "A:x" and backend.seen[-1] == "fail" and len(backend.seen) == 4


def test_prefix_order_walks_shared_prefixes_depth_first():
    """Sorted message by message: the two GREEN prompts on reference r1 follow each other, then the
    GREEN prompt on r2, then the VERT ones; a system message orders by its role before any text."""
    prompts = [
        [{"role": "user", "content": "VERT r2"}],
        [{"role": "user", "content": "GREEN r1 c2"}],
        [{"role": "user", "content": "VERT r1"}],
        [{"role": "user", "content": "GREEN r1 c1"}],
        [{"role": "user", "content": "GREEN r2 c1"}],
        [{"role": "system", "content": "Z"}, {"role": "user", "content": "A"}],
    ]
    assert prefix_order(prompts) == [5, 3, 1, 4, 2, 0]
    assert prefix_order([[{"role": "user", "content": "same"}]] * 3) == [0, 1, 2]  # ties keep their order
    assert prefix_order([]) == []


class RecordingBackend:
    """Answers 'A:<content>' in the order it gets the jobs, and records that order."""

    name, model, has_model = "fake", "fake-1", True

    def __init__(self) -> None:
        self.seen: list[str] = []

    def generate(self, jobs: Sequence[Job]) -> Iterator[tuple[int, LLMResponse]]:
        for i, job in enumerate(jobs):
            self.seen.append(job.messages[-1]["content"])
            yield i, LLMResponse(text="A:" + job.messages[-1]["content"], attempts=1)


def test_client_sends_in_prefix_order_and_answers_in_request_order(tmp_path):
    backend = RecordingBackend()
    client = LLMClient(LLMConfig(), backend=backend, cache=ResponseCache(tmp_path / "c.sqlite"))
    out = client.complete([req("ref2 c1"), req("ref1 c2"), req("ref2 c1"), req("ref1 c1")], progress=False)
    assert backend.seen == ["ref1 c1", "ref1 c2", "ref2 c1"]  # the duplicate is sent once
    assert [r.text for r in out] == ["A:ref2 c1", "A:ref1 c2", "A:ref2 c1", "A:ref1 c1"]


def test_rules_backend_answers_no_model_and_keeps_no_cache(tmp_path):
    client = LLMClient(LLMConfig(cache_dir=str(tmp_path / "c")))
    [r] = client.complete([req()], progress=False)
    assert not client.has_model and r.status == "error" and "no model" in r.error
    assert client.cache is None and not (tmp_path / "c").exists()
    assert client.usage.of("default").sent == 0


def _writer(path: str, worker: int, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"k{worker}-{i}", "b", "m", "t", "1", LLMResponse(text=f"{worker}:{i}"))
        cache.put("shared", "b", "m", "t", "1", LLMResponse(text="same"))


def test_cache_is_safe_under_concurrent_process_writers(tmp_path):
    path = str(tmp_path / "c.sqlite")
    ResponseCache(path)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 3 * 40 + 1
    assert cache.get_many(["k2-39", "shared", "missing"]).keys() == {"k2-39", "shared"}
    with pytest.raises(ValueError):
        cache.put("e", "b", "m", "t", "1", LLMResponse(status="error", error="boom"))


def test_prefix_reuse_adds_up_the_servers_prefix_lines():
    """llama-cpp-python's verbose log has one line per prompt that reused a prefix, none for one that
    reused nothing, so the share is taken of all prompt tokens of the requests (their usage)."""
    from llama_server import PrefixReuse, prefix_reuse

    log = (
        "INFO: POST /v1/chat/completions 200\n"  # the first prompt: nothing reused, no line
        "Llama.generate: 253 prefix-match hit, remaining 358 prompt tokens to eval\n"
        "llama_perf_context_print: prompt eval time = 5608.59 ms / 358 tokens\n"
        "Llama.generate: 254 prefix-match hit, remaining 352 prompt tokens to eval\n"
    )
    reuse = prefix_reuse(log)
    assert reuse == PrefixReuse(hits=2, reused=507, evaluated=710)
    assert reuse.share(552 + 611 + 606) == 507 / 1769 and PrefixReuse().share(0) == 0.0
    assert reuse - PrefixReuse(1, 253, 358) == PrefixReuse(1, 254, 352)
