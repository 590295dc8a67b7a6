"""Property: arbitrary strings as hypotheses never make a metric raise, and scores stay in range."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srrg.metrics import evaluate
from srrg.report import STATUSES, parse_report

REF = json.dumps(
    {
        "positive": [
            {"name": "pleural effusion", "probability": 2, "level": "small", "location": "in the left lung base"}
        ],
        "negative": ["pneumothorax"],
    }
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["positive", "negative", "name", "probability", "level", "location", "x"]),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)
HYPOTHESES = st.text(max_size=200) | JSONISH.map(json.dumps) | JSONISH.map(lambda o: json.dumps(o)[:-1])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HYPOTHESES)
def test_parse_never_raises(text):
    report, status = parse_report(text)
    assert status in STATUSES
    assert all(f.probability in (None, 1, 2, 3) for f in report.positive)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HYPOTHESES, min_size=1, max_size=3))
def test_scores_in_unit_interval(hyps):
    refs = [REF] * len(hyps)
    for per_report in (False, True):
        out = evaluate(refs, hyps, ["s_score", "bleu", "rouge_l"], per_report=per_report)
        values = [
            v
            for k, vs in out.items()
            if not k.endswith(("_status", "_truncated"))
            for v in (vs if per_report else [vs])
        ]
        assert all(math.isnan(v) or 0.0 <= v <= 1.0 + 1e-9 for v in values), out
        if per_report:
            assert all(s in STATUSES for s in out["s_score_hyp_status"]) and set(out["rouge_l_status"]) <= {
                "ok",
                "truncated",
            }
        else:
            rates = [out[f"s_score_hyp_{s}"] for s in STATUSES]
            assert sum(rates) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HYPOTHESES, min_size=1, max_size=3))
def test_ce_never_raises_and_stays_in_range(hyps):
    per = evaluate([REF] * len(hyps), hyps, ["ce"], per_report=True)
    # REF is positive for Pleural Effusion (probability 2): each pair has it as a true positive or a false negative
    assert all(tp + fn == 1.0 for tp, fn in zip(per["ce_tp"], per["ce_fn"]))
    summary = evaluate([REF] * len(hyps), hyps, ["ce"])
    assert all(0.0 <= v <= 1.0 for k, v in summary.items() if k != "ce_failures")
