"""Failed judge answers are never numbers: NaN counts, excluded from means and count-level P/R/F1,
counted in the summary, and a run with too many of them raises JudgeFailed (a StageFailed)."""

from __future__ import annotations

import math

import pytest
from judge_responses import ScriptedClient as FakeClient
from judge_responses import green_answer

from srrg.errors import StageFailed
from srrg.llm import LLMResponse
from srrg.metaeval.counts import category_prf
from srrg.metrics.judges.common import JudgeFailed, Reply
from srrg.metrics.judges.green import Green, score_responses
from srrg.metrics.judges.proxy_rating import ProxyRating
from srrg.metrics.judges.vert import Vert


def ok(text):
    return LLMResponse(text=text)


def test_failed_answers_do_not_count_as_no_errors_in_category_prf():
    # three answers agree with the humans on one (a) error each; the fourth report has 4 human
    # (a) errors but its answer failed: writing 0 there would drop recall from 3/3 to 3/7
    answers = [green_answer((1, 0, 0, 0, 0, 0), 1)] * 3 + [Reply(None, "no_response", "connection refused")]
    res = score_responses(answers)
    assert math.isnan(res.per_report["green_sig_a"][3]) and math.isnan(res.per_report["green_matched"][3])
    judge = {c: res.per_report[f"green_sig_{c}"] for c in "abcdef"}
    human = {c: [1.0, 1.0, 1.0, 4.0] if c == "a" else [0.0] * 4 for c in "abcdef"}
    prf = category_prf(judge, human)
    assert prf["a"]["recall"] == 1.0 and prf["a"]["fn"] == 0.0
    assert res.summary["green"] == pytest.approx(0.5) and res.summary["green_no_response"] == 1


def test_too_many_failures_raise_with_the_partial_result():
    good = ok(green_answer((1, 0, 0, 0, 0, 0), 1))
    cut = LLMResponse(text="[Explanation]: The cand", status="truncated", error="answer cut off at max_tokens=1024")
    metric = Green(client=FakeClient([good] * 9 + [cut]))
    result = metric.compute(["r"] * 10, ["h"] * 10)  # 1 of 10 is within the default 10 %
    assert result.summary["green_truncated"] == 1
    metric = Green(client=FakeClient([good] * 8 + [cut] * 2))
    with pytest.raises(JudgeFailed) as err:
        metric.compute(["r"] * 10, ["h"] * 10)
    assert isinstance(err.value, StageFailed)
    message = str(err.value)
    assert (
        "green: 2 of 10 judge answers failed (2 truncated; allowed share 0.1, max_tokens 1024) from fake endpoint"
        in message
    )
    assert "\n" not in message
    assert err.value.result.per_report["green_status"].count("truncated") == 2
    lenient = Green(client=FakeClient([good] * 8 + [cut] * 2), max_failure_fraction=0.5)
    assert lenient.compute(["r"] * 10, ["h"] * 10).summary["green_failures"] == 2


def test_a_dead_endpoint_fails_whatever_the_allowed_share():
    dead = LLMResponse(status="error", error="APIConnectionError: Connection error.")
    with pytest.raises(JudgeFailed, match="first error: APIConnectionError"):
        ProxyRating(client=FakeClient([dead, dead]), max_failure_fraction=1.0).compute(["a", "b"], ["c", "d"])


def test_vert_pair_fails_when_its_direct_score_fails():
    no_score = ok(green_answer((0,) * 6, 2))  # counts fine, no [Score] section
    with pytest.raises(JudgeFailed, match="vert: 1 of 1 judge answers failed \\(1 unparseable"):
        Vert(client=FakeClient([no_score])).compute(["r"], ["h"])
    score_only = ok("[Score]:\n0.75")  # what a tuned VERT judge answers: no counts, a valid score
    result = Vert(client=FakeClient([score_only])).compute(["r"], ["h"])
    assert result.per_report["vert"] == [0.75] and result.summary["vert_failures"] == 0
    assert result.summary["vert_count_failures"] == 1 and math.isnan(result.per_report["vert_sig_a"][0])


def test_judge_max_tokens_defaults_fit_real_answers():
    from srrg.settings.metrics import GemaConfig, GreenConfig, ProxyRatingConfig, VertConfig

    assert GreenConfig().max_tokens >= 1024 and VertConfig().max_tokens >= 1024
    assert GemaConfig().max_tokens >= 1024 and ProxyRatingConfig().max_tokens >= 256
    with pytest.raises(ValueError, match="max_failure_fraction"):
        GreenConfig(max_failure_fraction=1.5)
