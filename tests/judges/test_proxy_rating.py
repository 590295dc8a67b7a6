"""LLM-proxy rating: JSON parsing and scaling, hand-computed."""

from __future__ import annotations

import math

import pytest

from srrg.metrics.judges.common import NO_RESPONSE, OK, UNPARSEABLE
from srrg.metrics.judges.proxy_rating import proxy_requests, score_responses
from srrg.settings.metrics import ProxyRatingConfig


def test_two_dimensions_scaled_to_unit_interval():
    res = score_responses(['{"disease_prediction": 8, "detailed_descriptions": 6, "explanation": "ok"}'])
    assert res.per_report["proxy_rating"] == [pytest.approx(14 / 20)]
    assert res.per_report["proxy_disease_prediction"] == [8.0] and res.per_report["proxy_explanation"] == ["ok"]


def test_noisy_json_and_string_numbers():
    text = 'Rating:\n```json\n{"disease_prediction": "4", "detailed_descriptions": 2,}\n```'
    res = score_responses([text], ProxyRatingConfig(scale_max=5))
    assert res.per_report["proxy_rating"] == [pytest.approx(6 / 10)] and res.per_report["proxy_status"] == [OK]


def test_failures_are_flagged():
    res = score_responses(
        ['{"disease_prediction": 11, "detailed_descriptions": 3}', "prose only", None, '{"disease_prediction": 5}']
    )
    assert res.per_report["proxy_status"] == [UNPARSEABLE, UNPARSEABLE, NO_RESPONSE, UNPARSEABLE]
    assert all(math.isnan(v) for v in res.per_report["proxy_rating"])
    assert res.summary["proxy_failures"] == 4


def test_prompt_names_both_dimensions_and_scale():
    content = proxy_requests(["r"], ["c"], ProxyRatingConfig(scale_max=5))[0].messages[0]["content"]
    assert "Disease Prediction" in content and "Detailed Descriptions" in content and "0 (worst) to 5 (best)" in content


def test_proxy_rating_end_to_end_through_openai_server(tmp_path, monkeypatch):
    from judge_responses import stub_llm_config
    from openai_stub import OpenAIStub, Reply

    from srrg.metrics import evaluate

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    with OpenAIStub(responder=lambda body: Reply('{"disease_prediction": 9, "detailed_descriptions": 7}')) as stub:
        options = {"proxy_rating": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        out = evaluate(["a", "b"], ["c", "d"], ["proxy_rating"], options=options)
        assert out["proxy_rating"] == pytest.approx(0.8) and out["proxy_failures"] == 0
        evaluate(["a", "b"], ["c", "d"], ["proxy_rating"], options=options)
        assert len(stub.requests) == 2
