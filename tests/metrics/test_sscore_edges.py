"""S-Score edges that the hand-computed tests of test_sscore.py leave open (DESIGN §4.1, docs/metrics.md):
option validation, the reference-only D, empty location strings, parse-rate summaries."""

from __future__ import annotations

import json
import math
import re

import pytest

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.metrics import evaluate
from srrg.metrics.sscore import location_bleu, score_pair, score_reports, structured_references
from srrg.report import Finding, StructuredReport
from srrg.settings.metrics import SScoreConfig


def rep(positive=(), negative=()) -> StructuredReport:
    return StructuredReport(tuple(positive), tuple(negative))


def js(positive=(), negative=()) -> str:
    return json.dumps({"positive": list(positive), "negative": list(negative)})


@pytest.mark.parametrize("weights", [(1.0, 0.0, 0.0), (0.0, 0.5, 0.5), (0.2, 0.3, 0.5), (1 / 3, 1 / 3, 1 / 3)])
def test_non_negative_weights_summing_to_one_are_accepted(weights):
    cfg = SScoreConfig(*weights)
    assert (cfg.w_prob, cfg.w_level, cfg.w_loc) == weights


@pytest.mark.parametrize("weights", [(-0.5, 1.0, 0.5), (0.5, 0.5, 0.1), (0.3, 0.3, 0.3), (1.0, 1e-6, 0.0)])
def test_negative_weights_or_a_sum_other_than_one_are_refused(weights):
    with pytest.raises(ValueError, match=r"^w_prob must be >= 0|^S-Score weights w_prob, w_level, w_loc must sum to 1"):
        SScoreConfig(*weights)


def test_d_over_option_is_checked_and_read_from_options():
    with pytest.raises(ValueError, match="^d_over must be one of union, reference, got 'hypothesis'"):
        SScoreConfig(d_over="hypothesis")
    assert from_dict(SScoreConfig, None) == SScoreConfig()
    assert from_dict(SScoreConfig, {"d_over": "reference"}).d_over == "reference"


def test_reference_only_d_with_an_empty_reference_is_one():
    """D over R_pos: nothing to describe in the reference -> D = 1 (the union option gives 0)."""
    hyp = rep([Finding("edema", 3)])
    assert score_pair(rep(), hyp, SScoreConfig(d_over="reference"))["d_score"] == 1.0
    assert score_pair(rep(), hyp)["d_score"] == 0.0


def test_reference_only_d_hand_computed():
    ref = rep([Finding("edema", 3, "mild", None)])
    hyp = rep([Finding("edema", 2, "mild", None), Finding("nodule", 3), Finding("mass", 3)])
    d_edema = (0.75 + 1 + 1) / 3
    assert score_pair(ref, hyp, SScoreConfig(d_over="reference"))["d_score"] == pytest.approx(d_edema)
    assert score_pair(ref, hyp)["d_score"] == pytest.approx(d_edema / 3)


@pytest.mark.parametrize(
    ("ref", "hyp", "expected"), [("", "", 1.0), ("", "left", 0.0), ("left", "", 0.0), ("...", "left", 0.0)]
)
def test_location_bleu_of_empty_token_lists(ref, hyp, expected):
    assert location_bleu(ref, hyp) == expected


def test_location_bleu_brevity_and_order():
    # hypothesis longer than the reference: no brevity penalty; order 2 = min(4, 2, 3)
    # p1 = 2/3, p2 = 1/2 -> (2/3 * 1/2) ** (1/2)
    assert location_bleu("left base", "left base bilaterally") == pytest.approx((2 / 3 * 1 / 2) ** 0.5)
    # shorter: brevity exp(1 - 3/2); order 2; p1 = 2/2, p2 = 1/1
    assert location_bleu("left lower base", "left lower") == pytest.approx(math.exp(1 - 3 / 2))


def test_score_reports_needs_aligned_lists():
    with pytest.raises(ValueError):
        score_reports([rep()], [rep(), rep()])
    out = score_reports([rep([Finding("edema", 3)]), rep()], [rep([Finding("edema", 1)]), rep()])
    assert out.per_report["s_prob"][0] == 0.0 and math.isnan(out.per_report["s_prob"][1])
    assert out.summary["s_prob"] == 0.0  # NaN reports are skipped, not counted as 0 or 1
    assert out.summary["s_score"] == pytest.approx((out.per_report["s_score"][0] + 1.0) / 2)


def test_summary_carries_hypothesis_parse_rates():
    refs = [js([{"name": "edema", "probability": 3, "level": None, "location": None}])] * 4
    hyps = [refs[0], js([{"name": "Edema", "probability": 3, "level": None, "location": None}]), "not json", "{"]
    out = evaluate(refs, hyps, ["s_score"])
    assert out["s_score_hyp_valid"] == 0.25 and out["s_score_hyp_repaired"] == 0.25
    assert out["s_score_hyp_unparseable"] == 0.5
    per = evaluate(refs, hyps, ["s_score"], per_report=True)
    assert per["s_score_hyp_status"] == ["valid", "repaired", "unparseable", "unparseable"]
    assert per["s_score"][:2] == [1.0, 1.0] and per["s_score"][2] == 0.25


def test_options_reach_the_metric():
    ref = js([{"name": "edema", "probability": 3, "level": None, "location": None}])
    hyp = js([{"name": "edema", "probability": 1, "level": None, "location": None}])
    out = evaluate([ref], [hyp], ["s_score"], options={"s_score": {"w_prob": 1.0, "w_level": 0.0, "w_loc": 0.0}})
    assert out["d_score"] == 0.0 and out["s_score"] == 0.5


def test_free_text_references_are_refused_naming_the_alternative():
    with pytest.raises(UserError, match="s_score_text"):
        evaluate(["Heart size is normal."], [js()], ["s_score"])


def test_a_missing_reference_is_refused_and_shown_as_none():
    with pytest.raises(UserError, match=r"1 of 2 references are not structured reports .*first at row 1: None"):
        structured_references([js(), None])
    long_text = "Heart size is normal. " * 10
    with pytest.raises(UserError, match="first at row 0: " + re.escape(repr(long_text[:60]))):
        structured_references([long_text])
