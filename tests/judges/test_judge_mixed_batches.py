"""Every judge summary on a batch that mixes parsed answers with each kind of failure.

A summary computed only on clean batches cannot show a wrong denominator (failed answers counted
in a mean or a share). Each expected value below is computed by hand from the parsed answers alone;
the failures only appear in the failure counts (docs/judges.md, "Failures").
"""

from __future__ import annotations

import math

import pytest
from judge_responses import FIVE_PAIRS, ScriptedClient, green_answer

from srrg.llm import LLMResponse
from srrg.metrics.judges.green import Green
from srrg.metrics.judges.proxy_rating import ProxyRating
from srrg.metrics.judges.vert import Vert


def ok(text: str) -> LLMResponse:
    return LLMResponse(text=text)


# one of each failure kind a judge records: no answer, an answer cut off at max_tokens, an answer
# that does not follow the format
FAILURES = [
    LLMResponse(status="no_response", error="connection refused"),
    LLMResponse(text="[Explanation]: The candidate", status="truncated", error="cut off at max_tokens=8"),
    ok("I cannot compare these reports."),
]


def judged(metric_cls, answers, **options):
    n = len(answers)
    return metric_cls(client=ScriptedClient(answers), max_failure_fraction=1.0, **options).compute(["r"] * n, ["h"] * n)


def test_green_summary_counts_only_parsed_answers():
    result = judged(Green, [ok(a) for a in FIVE_PAIRS] + FAILURES)
    s = result.summary
    # per-report GREEN of the five parsed answers: 0, 1/6, 1/3, 1/2, 1/4 -> mean 0.25
    assert s["green"] == pytest.approx(0.25)
    # population std of those five values (not of eight with zeros)
    values = [0, 1 / 6, 1 / 3, 1 / 2, 1 / 4]
    assert s["green_std"] == pytest.approx(math.sqrt(sum((v - 0.25) ** 2 for v in values) / 5))
    # share with zero significant (a) errors: 1 of the 5 parsed answers, not 1 of 8 (0.125) nor 4 of 8
    assert s["green_zero_sig_a"] == pytest.approx(1 / 5)
    assert s["green_zero_sig_c"] == pytest.approx(3 / 5)
    assert s["green_zero_sig_d"] == pytest.approx(4 / 5)
    assert s["green_n_parsed"] == 5
    assert (s["green_failures"], s["green_no_response"], s["green_truncated"], s["green_unparseable"]) == (3, 1, 1, 1)
    assert result.per_report["green_status"][5:] == ["no_response", "truncated", "unparseable"]
    assert all(math.isnan(v) for v in result.per_report["green"][5:])


def test_green_failures_anywhere_in_the_batch_give_the_same_summary():
    # the same answers with the failures interleaved: a summary that indexes by position would differ
    answers = [
        ok(FIVE_PAIRS[0]),
        FAILURES[0],
        ok(FIVE_PAIRS[1]),
        ok(FIVE_PAIRS[2]),
        FAILURES[2],
        ok(FIVE_PAIRS[3]),
        FAILURES[1],
        ok(FIVE_PAIRS[4]),
    ]
    s = judged(Green, answers).summary
    assert s["green"] == pytest.approx(0.25) and s["green_zero_sig_a"] == pytest.approx(1 / 5)
    assert s["green_failures"] == 3


def test_vert_summary_counts_only_parsed_answers():
    # two parsed answers: one (a) error and 1 match each, direct scores 0.5 and 0.9; then each failure
    answers = [
        ok(green_answer((1, 0, 0, 0, 0, 0), 1, score="0.5")),
        ok(green_answer((1, 0, 0, 0, 0, 0), 1, score="0.9")),
        *FAILURES,
    ]
    s = judged(Vert, answers).summary
    assert s["vert"] == pytest.approx(0.7)  # mean of 0.5 and 0.9
    assert s["vert_std"] == pytest.approx(0.2)  # population std of (0.5, 0.9)
    # GREEN formula from the counts: 1 / (1 + 1) for both parsed answers
    assert s["green_formula"] == pytest.approx(0.5)
    assert s["vert_failures"] == 3
    assert (s["vert_no_response"], s["vert_truncated"], s["vert_unparseable"]) == (1, 1, 1)


def test_proxy_rating_summary_counts_only_parsed_answers():
    answers = [
        ok('{"disease_prediction": 8, "detailed_descriptions": 6, "explanation": "close"}'),
        ok('{"disease_prediction": 2, "detailed_descriptions": 4}'),
        # a rating outside 0..scale_max is a parse failure, never clipped into range
        ok('{"disease_prediction": 11, "detailed_descriptions": 4}'),
        *FAILURES,
    ]
    result = judged(ProxyRating, answers)
    s = result.summary
    # (8 + 6) / 20 = 0.7 and (2 + 4) / 20 = 0.3 -> 0.5
    assert s["proxy_rating"] == pytest.approx(0.5)
    assert s["proxy_disease_prediction"] == pytest.approx(5.0)
    assert s["proxy_detailed_descriptions"] == pytest.approx(5.0)
    assert s["proxy_failures"] == 4
    assert s["proxy_unparseable"] == 2 and s["proxy_no_response"] == 1 and s["proxy_truncated"] == 1
    assert result.per_report["proxy_status"][:3] == ["ok", "ok", "unparseable"]


@pytest.mark.parametrize("scale_max, value, parses", [(10, 10, True), (10, 11, False), (5, 5, True), (5, 6, False)])
def test_proxy_rating_scale_bound_on_both_sides(scale_max, value, parses):
    answer = ok(f'{{"disease_prediction": {value}, "detailed_descriptions": 0}}')
    result = judged(ProxyRating, [answer], scale_max=scale_max)
    assert (result.per_report["proxy_status"][0] == "ok") is parses
    if parses:
        assert result.summary["proxy_rating"] == pytest.approx(value / (2 * scale_max))
