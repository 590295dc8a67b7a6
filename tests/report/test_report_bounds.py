"""Parsing at the edges of the format (README "The structured report", DESIGN §3): a probability is
an integer 1..3, anything else is dropped (missing) and the status says `repaired`; negatives are
plain names; a report that already meets the format parses `valid` and unchanged."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srrg.metrics.sscore import score_pair
from srrg.report import REPAIRED, VALID, Finding, StructuredReport, parse_report

# explicit synonym map: the expectations below do not depend on the packaged vocabulary
SYN = {"effusion": "pleural effusion", "pleural effusion": "pleural effusion"}


def one_finding(probability: object) -> str:
    return json.dumps(
        {"positive": [{"name": "edema", "probability": probability, "level": None, "location": None}], "negative": []}
    )


@pytest.mark.parametrize("probability", [1, 2, 3])
def test_integer_probabilities_1_to_3_are_valid(probability):
    report, status = parse_report(one_finding(probability), SYN)
    assert status == VALID
    assert report.positive == (Finding("edema", probability, None, None),)


@pytest.mark.parametrize(
    "probability", [0, 4, -1, 5, 100, "0", "4", " 4 ", 0.0, 4.0, 2.5, True, False, "two", [2], None]
)
def test_out_of_range_or_mistyped_probability_is_dropped_and_repaired(probability):
    report, status = parse_report(one_finding(probability), SYN)
    assert status == REPAIRED
    assert report.positive == (Finding("edema", None, None, None),)


@pytest.mark.parametrize(("probability", "expected"), [("1", 1), (" 2 ", 2), ("3", 3), (1.0, 1), (3.0, 3)])
def test_safely_coerced_probability_is_kept_and_repaired(probability, expected):
    report, status = parse_report(one_finding(probability), SYN)
    assert status == REPAIRED
    assert report.positive[0].probability == expected


@pytest.mark.parametrize("probability", [0, 4, -3, 9])
def test_out_of_range_probability_scores_like_a_missing_one(probability):
    """S-Score's s_prob lies in [0, 1]; a dropped probability scores 0 against any reference."""
    ref = StructuredReport((Finding("edema", 3, None, None),), ())
    hyp, _ = parse_report(one_finding(probability), SYN)
    scores = score_pair(ref, hyp)
    assert scores["s_prob"] == 0.0
    # D = (0 + 1 + 1) / 3 over one matched name; P = (1 + 1) / 2
    assert scores["d_score"] == pytest.approx(2 / 3)
    assert scores["s_score"] == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.parametrize("null", ["", "  ", "null", "None", "NULL"])
def test_null_spelled_as_text_is_null(null):
    obj = {"positive": [{"name": "edema", "probability": 3, "level": null, "location": null}], "negative": []}
    report, status = parse_report(json.dumps(obj), SYN)
    assert status == REPAIRED and report.positive == (Finding("edema", 3, None, None),)


def test_dict_shaped_negatives_are_read_and_marked_repaired():
    text = json.dumps({"positive": [], "negative": [{"name": "pneumothorax"}, {"name": "Consolidation"}]})
    report, status = parse_report(text, SYN)
    assert status == REPAIRED
    assert report.negative == ("pneumothorax", "consolidation")


def test_dict_shaped_negative_without_a_name_is_dropped_and_repaired():
    report, status = parse_report(json.dumps({"positive": [], "negative": [{"label": "x"}, "pneumothorax"]}), SYN)
    assert status == REPAIRED and report.negative == ("pneumothorax",)


@pytest.mark.parametrize(
    "obj",
    [
        {"positive": [], "negative": ["Pneumothorax"]},  # not lower-case
        {"positive": [], "negative": [" pneumothorax"]},  # untrimmed
        {"positive": [], "negative": ["pneumothorax", "pneumothorax"]},  # duplicate
        {"positive": [], "negative": ["effusion"]},  # synonym
        {"positive": [{"name": "edema", "probability": 3, "level": None, "location": None}], "negative": ["edema"]},
        {"positive": [{"name": "edema", "probability": 3, "level": None, "location": None, "x": 1}], "negative": []},
        {"positive": [{"name": "edema", "level": None, "location": None}], "negative": []},  # probability key missing
        {"positive": [{"name": "edema", "probability": 3, "level": "Mild", "location": None}], "negative": []},
        {"positive": [{"name": "edema", "probability": 3, "level": None, "location": "left  lung"}], "negative": []},
        {"positive": [{"name": "edema", "probability": 3, "level": "null", "location": None}], "negative": []},
        {"positive": [{"name": "edema", "probability": 3, "level": 2, "location": None}], "negative": []},
        {"positive": ["edema"], "negative": []},  # bare string finding
        {"positive": [5, None], "negative": []},  # entries that are no finding at all
        {"positive": [], "negative": ["", "pneumothorax"]},  # an empty name
        {"positive": [], "negative": [7, "pneumothorax"]},  # a name that is no text
        {"positive": [{"probability": 3, "level": None, "location": None}], "negative": []},  # nameless
        {"positive": [], "negative": [], "impression": "x"},  # extra top-level key
        {"positive": {"name": "edema", "probability": 3, "level": None, "location": None}, "negative": []},
        {"positive": [], "negative": "pneumothorax"},
    ],
)
def test_anything_not_already_canonical_is_repaired(obj):
    assert parse_report(json.dumps(obj), SYN)[1] == REPAIRED


NAMES = ["pleural effusion", "edema", "atelectasis", "cardiomegaly", "pneumothorax", "nodule", "consolidation"]
WORDS = st.lists(
    st.sampled_from(["left", "right", "lower", "upper", "lobe", "zone", "mild", "small", "in", "the"]),
    min_size=1,
    max_size=4,
).map(" ".join)


@st.composite
def canonical_reports(draw) -> StructuredReport:
    """Reports that meet the format exactly: canonical unique names, probability 1..3, normalized
    level/location text or null, negatives disjoint from positives."""
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=len(NAMES)))
    n_pos = draw(st.integers(0, len(names)))
    positive = tuple(
        Finding(n, draw(st.integers(1, 3)), draw(st.none() | WORDS), draw(st.none() | WORDS)) for n in names[:n_pos]
    )
    return StructuredReport(positive, tuple(names[n_pos:]))


@settings(max_examples=60, deadline=None)
@given(canonical_reports())
def test_well_formed_reports_parse_valid_and_unchanged(report):
    parsed, status = parse_report(report.to_json(), SYN)
    assert status == VALID
    assert parsed == report


@settings(max_examples=40, deadline=None)
@given(canonical_reports(), st.sampled_from([0, 4, -1, 7]))
def test_one_bad_probability_repairs_only_that_finding(report, bad):
    if not report.positive:
        return
    obj = report.to_dict()
    obj["positive"][0]["probability"] = bad
    parsed, status = parse_report(json.dumps(obj), SYN)
    assert status == REPAIRED
    assert parsed.positive[0].probability is None
    assert parsed.positive[1:] == report.positive[1:] and parsed.negative == report.negative
    scores = score_pair(report, parsed)
    assert all(math.isnan(scores[k]) or 0.0 <= scores[k] <= 1.0 for k in scores)
