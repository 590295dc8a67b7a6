"""S-Score of free-text pairs through the project's extractor, hand-computed."""

from __future__ import annotations

import math

import pytest

from srrg.metrics import evaluate
from srrg.report import Finding, StructuredReport


def test_free_text_pair_hand_computed():
    out = evaluate(
        ["Small left pleural effusion. No pneumothorax."],
        ["Small right pleural effusion. No pneumothorax."],
        ["s_score_text"],
        per_report=True,
    )
    # names agree (P = 1); effusion: prob 1, level small = small -> 1, location left vs right -> BLEU 0
    assert out["p_score_text"] == [1.0]
    assert out["d_score_text"] == [pytest.approx(2 / 3)]
    assert out["s_score_text"] == [pytest.approx((1 + 2 / 3) / 2)]
    assert out["s_loc_text"] == [0.0] and out["s_score_text_status"] == ["ok"]


def test_empty_sides_are_statuses_and_count_as_empty_reports():
    out = evaluate(["", "Heart size is normal."], ["Mild cardiomegaly.", None], ["s_score_text"], per_report=True)
    assert out["s_score_text_status"] == ["ref:empty_text", "hyp:empty_text"]
    # ref empty vs hyp {cardiomegaly}: P_pos 0, P_neg 1 (both empty), D 0 -> S = 0.25
    assert out["s_score_text"][0] == pytest.approx(0.25)
    assert math.isnan(out["s_prob_text"][0])


def test_structured_side_is_parsed_not_extracted():
    ref = StructuredReport((Finding("pleural effusion", 3, "small", "left"),), ("pneumothorax",)).to_json()
    out = evaluate([ref], ["Small left pleural effusion. No pneumothorax."], ["s_score_text"], per_report=True)
    assert out["s_score_text"] == [1.0]


def test_summary_and_options():
    out = evaluate(["Small left pleural effusion."] * 2, ["Small left pleural effusion.", "Large left pleural effusion."], ["s_score_text"], options={"s_score_text": {"w_prob": 0.0, "w_level": 1.0, "w_loc": 0.0}})
    # second pair: level small vs large -> d = 0 with all weight on level; S = (1 + 0) / 2
    assert out["s_score_text"] == pytest.approx((1.0 + 0.5) / 2)
    assert out["s_score_text_failures"] == 0


def test_hypothesis_parse_rates_count_free_text_apart():
    ref = StructuredReport((Finding("pleural effusion", 3),), ()).to_json()
    hyps = [
        ref,  # valid JSON
        '```json\n{"positive": [{"name": "effusion"}], "negative": []}\n```',  # repaired (fence, missing keys)
        '{"positive": [',  # broken JSON: repaired to the empty report
        '{"findings": []}',  # a JSON object but no report
        "Small left pleural effusion.",
        None,  # no text: extracted as empty free text
    ]
    out = evaluate([ref] * len(hyps), hyps, ["s_score_text"])
    assert out["s_score_text_hyp_valid"] == pytest.approx(1 / 6)
    assert out["s_score_text_hyp_repaired"] == pytest.approx(2 / 6)
    assert out["s_score_text_hyp_unparseable"] == pytest.approx(1 / 6)
    assert out["s_score_text_hyp_free_text"] == pytest.approx(2 / 6)
