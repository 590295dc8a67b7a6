"""S-Score: every branch of DESIGN §4.1 against hand-computed values."""

from __future__ import annotations

import json
import math

import pytest

from srrg.metrics import evaluate
from srrg.metrics.sscore import location_bleu, location_score, prob_score, score_pair, set_f1
from srrg.report import Finding, StructuredReport
from srrg.settings.metrics import SScoreConfig


def rep(positive=(), negative=()) -> StructuredReport:
    return StructuredReport(tuple(positive), tuple(negative))


def js(positive=(), negative=()) -> str:
    return json.dumps({"positive": list(positive), "negative": list(negative)})


EFF = Finding("pleural effusion", 3, "small", "in the left lung")


def test_set_f1_branches():
    assert set_f1(set(), set()) == 1.0
    assert set_f1({"a"}, set()) == 0.0
    assert set_f1(set(), {"a"}) == 0.0
    assert set_f1({"a"}, {"b"}) == 0.0
    assert set_f1({"a", "b"}, {"a", "c"}) == pytest.approx(0.5)
    assert set_f1({"a", "b"}, {"a"}) == pytest.approx(2 / 3)


def test_prob_score():
    assert prob_score(3, 3) == 1.0
    assert prob_score(3, 2) == pytest.approx(0.75)  # q = 1 vs 0.5
    assert prob_score(3, 1) == 0.0
    assert prob_score(1, 2) == pytest.approx(0.75)
    assert prob_score(3, None) == 0.0  # missing predicted probability
    assert prob_score(None, 3) == 0.0


@pytest.mark.parametrize(
    "ref, hyp, expected",
    [
        ("in the left lung", "in the left lung", 1.0),
        ("In the LEFT lung", "in the left lung", 1.0),  # lower-cased word tokens
        ("in the left lung", "in the left lung base", (0.8 * 0.75 * (2 / 3) * 0.5) ** 0.25),
        ("left lower lobe", "right lower lobe", ((2 / 3) * 0.5 * 0.1) ** (1 / 3)),  # smoothing method 1
        ("in the right lower zone", "right", math.exp(-4)),  # order 1, brevity penalty exp(1 - 5/1)
        ("apex", "base", 0.0),  # no unigram matches
    ],
)
def test_location_bleu(ref, hyp, expected):
    assert location_bleu(ref, hyp) == pytest.approx(expected, rel=1e-9)


def test_location_bleu_matches_nltk():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    pairs = [
        ("in the left lower zone", "in the lower zone of the left lung"),
        ("bilateral bases", "at the bases bilaterally"),
    ]
    for ref, hyp in pairs:
        r, h = ref.split(), hyp.split()
        n = min(4, len(r), len(h))
        want = sentence_bleu([r], h, weights=(1 / n,) * n, smoothing_function=SmoothingFunction().method1)
        assert location_bleu(ref, hyp) == pytest.approx(want)


def test_location_score_nulls():
    assert location_score(None, None) == 1.0
    assert location_score("in the left lung", None) == 0.0
    assert location_score(None, "in the left lung") == 0.0


def test_identical_reports_score_one():
    r = rep([EFF], ["pneumothorax"])
    s = score_pair(r, r)
    assert s == {
        "s_score": 1.0,
        "p_score": 1.0,
        "d_score": 1.0,
        "p_pos": 1.0,
        "p_neg": 1.0,
        "s_prob": 1.0,
        "s_level": 1.0,
        "s_loc": 1.0,
    }


def test_both_empty():
    s = score_pair(rep(), rep())
    assert (s["s_score"], s["p_score"], s["d_score"], s["p_pos"], s["p_neg"]) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert all(math.isnan(s[k]) for k in ("s_prob", "s_level", "s_loc"))


def test_one_side_empty():
    s = score_pair(rep([EFF]), rep())
    # P_pos = 0 (one empty), P_neg = 1 (both empty), D = 0 over U = {effusion}
    assert s["p_pos"] == 0.0 and s["p_neg"] == 1.0
    assert s["p_score"] == 0.5 and s["d_score"] == 0.0 and s["s_score"] == 0.25
    assert math.isnan(s["s_prob"])


def test_unmatched_names():
    s = score_pair(rep([Finding("atelectasis")]), rep([Finding("cardiomegaly")]))
    assert s["p_pos"] == 0.0 and s["d_score"] == 0.0 and s["s_score"] == 0.25


def test_partial_match_hand_computed():
    ref = rep([EFF, Finding("atelectasis", 2)], ["pneumothorax", "edema"])
    hyp = rep(
        [Finding("pleural effusion", 2, "small", "in the left lung"), Finding("cardiomegaly", 3)], ["pneumothorax"]
    )
    s = score_pair(ref, hyp)
    p = (0.5 + 2 / 3) / 2
    d_eff = (0.75 + 1 + 1) / 3
    assert s["p_pos"] == pytest.approx(0.5)
    assert s["p_neg"] == pytest.approx(2 / 3)
    assert s["p_score"] == pytest.approx(p)
    assert s["d_score"] == pytest.approx(d_eff / 3)  # union of 3 names
    assert s["s_score"] == pytest.approx((p + d_eff / 3) / 2)
    assert (s["s_prob"], s["s_level"], s["s_loc"]) == (pytest.approx(0.75), 1.0, 1.0)
    # option: D averages over the reference names only
    s_ref = score_pair(ref, hyp, SScoreConfig(d_over="reference"))
    assert s_ref["d_score"] == pytest.approx(d_eff / 2)


def test_null_level_and_location():
    ref = rep([Finding("edema", 3, None, None)])
    assert score_pair(ref, rep([Finding("edema", 3, None, None)]))["d_score"] == 1.0
    s = score_pair(ref, rep([Finding("edema", 3, "mild", "in both lungs")]))
    assert s["s_level"] == 0.0 and s["s_loc"] == 0.0
    assert s["d_score"] == pytest.approx(1 / 3)


def test_missing_probability_scores_zero():
    s = score_pair(rep([EFF]), rep([Finding("pleural effusion", None, "small", "in the left lung")]))
    assert s["s_prob"] == 0.0
    assert s["d_score"] == pytest.approx(2 / 3)


def test_custom_weights():
    cfg = SScoreConfig(w_prob=0.5, w_level=0.25, w_loc=0.25)
    s = score_pair(rep([EFF]), rep([Finding("pleural effusion", 2, "small", None)]), cfg)
    assert s["d_score"] == pytest.approx(0.5 * 0.75 + 0.25 * 1 + 0.25 * 0)
    with pytest.raises(ValueError, match="sum to 1"):
        SScoreConfig(w_prob=0.5, w_level=0.5, w_loc=0.5)
    with pytest.raises(ValueError, match="d_over"):
        SScoreConfig(d_over="hypothesis")


def test_duplicate_names_most_certain_wins_through_json():
    ref = js([{"name": "atelectasis", "probability": 3, "level": None, "location": None}])
    hyp = js(
        [
            {"name": "atelectasis", "probability": 1, "level": None, "location": None},
            {"name": "Atelectasis", "probability": 3, "level": None, "location": None},
        ]
    )
    out = evaluate([ref], [hyp], ["s_score"])
    assert out["s_score"] == 1.0 and out["s_prob"] == 1.0


def test_unparseable_hypothesis_is_empty_report():
    ref = js([{"name": "atelectasis", "probability": 3}], ["pneumothorax"])
    out = evaluate([ref], ["I cannot produce JSON {"], ["s_score"])
    assert out["p_pos"] == 0.0 and out["p_neg"] == 0.0 and out["d_score"] == 0.0 and out["s_score"] == 0.0


def test_corpus_means_skip_nan_subscores():
    refs = [js([{"name": "edema", "probability": 3}]), js()]
    hyps = [js([{"name": "edema", "probability": 2}]), js()]
    per = evaluate(refs, hyps, ["s_score"], per_report=True)
    assert per["s_prob"][0] == pytest.approx(0.75) and math.isnan(per["s_prob"][1])
    corpus = evaluate(refs, hyps, ["s_score"])
    assert corpus["s_prob"] == pytest.approx(0.75)  # NaN report left out
    assert corpus["s_score"] == pytest.approx((per["s_score"][0] + 1.0) / 2)


def test_free_text_references_are_refused_naming_s_score_text():
    from srrg.errors import UserError

    with pytest.raises(UserError, match=r"1 of 1 references are not structured reports.*s_score_text"):
        evaluate(["Large right pleural effusion and pneumothorax."], ["No acute cardiopulmonary process."], ["s_score"])
    with pytest.raises(UserError, match="row 1"):
        evaluate([js(), '{"impression": "clear"}'], [js(), js()], ["s_score"])


def test_summary_carries_hypothesis_parse_rates():
    ref = js([{"name": "edema", "probability": 3}])
    hyps = [ref, js([{"name": "Edema", "probability": "3"}]), "No acute process.", "{"]
    per = evaluate([ref] * 4, hyps, ["s_score"], per_report=True)
    assert per["s_score_hyp_status"] == ["valid", "repaired", "unparseable", "unparseable"]
    out = evaluate([ref] * 4, hyps, ["s_score"])
    assert (out["s_score_hyp_valid"], out["s_score_hyp_repaired"], out["s_score_hyp_unparseable"]) == (0.25, 0.25, 0.5)
    # an all-unparseable model against empty references: the agreement of two empty reports is visible as 0% parsed
    empty = evaluate([js()] * 2, ["text", "more text"], ["s_score"])
    assert empty["s_score"] == 1.0 and empty["s_score_hyp_unparseable"] == 1.0


def test_unknown_option_names_the_allowed_keys():
    from srrg.config import ConfigError

    with pytest.raises(ConfigError, match="d_overr.*allowed: d_over, w_level, w_loc, w_prob"):
        evaluate([js()], [js()], ["s_score"], options={"s_score": {"d_overr": "union"}})
