"""GREEN's derived columns (srrg.metrics.judges.green: GREEN-EC, GREEN-F1) on partial answers and the
summary's every key, the kinds issue 53 found missing. Each test's docstring names the bug it catches."""

from __future__ import annotations

import math

import pytest
from judge_responses import green_answer

from srrg.metrics.judges.common import ErrorReport
from srrg.metrics.judges.green import green_ec, green_f1, green_value, score_responses

# an answer without its [Clinically Insignificant Errors] section: partial, its counts read as 0
PARTIAL_NO_INSIG = (
    "[Explanation]:\nCompared.\n\n"
    "[Clinically Significant Errors]:\n(a) x: 1.\n(b) x: 1.\n(c) x: 0.\n(d) x: 0.\n(e) x: 0.\n(f) x: 0.\n\n"
    "[Matched Findings]:\n2. effusion; edema\n"
)
# an answer without its [Matched Findings] section: partial, matched read as 0
PARTIAL_NO_MATCHED = (
    "[Explanation]:\nCompared.\n\n"
    "[Clinically Significant Errors]:\n(a) x: 0.\n(b) x: 0.\n(c) x: 3.\n(d) x: 0.\n(e) x: 0.\n(f) x: 0.\n\n"
    "[Clinically Insignificant Errors]:\n(a) x: 1.\n(b) x: 0.\n(c) x: 0.\n(d) x: 0.\n(e) x: 0.\n(f) x: 0.\n"
)


def test_derived_columns_of_partial_answers_are_computed_not_nan():
    """Bug: GREEN-EC / GREEN-F1 treat a partial answer (a section missing) as failed (NaN, or EC 0
    "no errors") while GREEN scores it; or they read another count than the significant total.
    First: S = 2, M = 2: GREEN 2/4, EC 2, F1 4/6. Second: S = 3, M = 0: GREEN 0, EC 3, F1 0."""
    res = score_responses([PARTIAL_NO_INSIG, PARTIAL_NO_MATCHED])
    per = res.per_report
    assert per["green_status"] == ["partial", "partial"]
    assert per["green"] == [0.5, 0.0]
    assert per["green_ec"] == [2.0, 3.0]
    assert per["green_f1"] == [pytest.approx(4 / 6), 0.0]
    assert res.summary["green_ec"] == 2.5 and res.summary["green_f1"] == pytest.approx(2 / 6)
    assert res.summary["green_partial"] == 2.0 and res.summary["green_n_parsed"] == 2.0


def test_the_derived_functions_follow_the_parsed_flag_not_the_ok_status():
    """Bug: green_ec / green_f1 / green_value test `status == "ok"` (partial answers lost) or
    ignore the status (a failed answer's zero counts scored as a perfect report)."""
    [partial] = score_responses([PARTIAL_NO_INSIG]).per_report["green_ec"]
    assert partial == 2.0
    part = ErrorReport(significant=(1, 0, 0, 0, 0, 1), insignificant=(0, 2, 0, 0, 0, 0), matched=3, status="partial")
    failed = ErrorReport(matched=3, status="unparseable")
    assert (green_value(part), green_ec(part), green_f1(part)) == (0.6, 2.0, pytest.approx(6 / 8))
    assert all(math.isnan(f(failed)) for f in (green_value, green_ec, green_f1))


def test_every_summary_key_by_hand():
    """Bugs: a summary value stored under another key (green_std as the mean, green_ec as GREEN),
    a mean replaced by a sum, the zero-error share over all answers instead of the parsed ones.
    GREEN of the two parsed answers 1/2 and 1/4: mean 3/8, population std 1/8; EC 1 and 3; F1 2/3
    and 2/5; category (a) has an error in both, (b) in one, (c) in one; one unparseable answer."""
    res = score_responses([green_answer((1, 0, 0, 0, 0, 0), 1), "no answer here", green_answer((1, 1, 1, 0, 0, 0), 1)])
    s = res.summary
    assert s["green"] == pytest.approx(3 / 8)
    assert s["green_std"] == pytest.approx(1 / 8)
    assert s["green_ec"] == pytest.approx(2.0)
    assert s["green_f1"] == pytest.approx((2 / 3 + 2 / 5) / 2)
    zero = [s[f"green_zero_sig_{c}"] for c in "abcdef"]
    assert zero == [0.0, 0.5, 0.5, 1.0, 1.0, 1.0]
    assert s["green_n_parsed"] == 2.0 and s["green_partial"] == 0.0
    assert s["green_unparseable"] == 1.0 and s["green_failures"] == 1.0
    per = res.per_report
    assert per["green_status"] == ["ok", "unparseable", "ok"]
