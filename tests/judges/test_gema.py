"""GEMA-Score: agent JSON parsing and the objective/subjective arithmetic, hand-computed."""

from __future__ import annotations

import json
import math

import pytest

from srrg.metrics.judges.common import NO_RESPONSE, OK, UNPARSEABLE
from srrg.metrics.judges.gema import (
    gema_requests,
    objective_scores,
    parse_entities,
    parse_subjective,
    score_answers,
    subjective_score,
)
from srrg.settings.metrics import GemaConfig

W = GemaConfig().dimension_weights
A = GemaConfig().aspect_weights


def entities(*items):
    return json.dumps({"entities": [dict(zip(("disease", "location", "severity", "uncertainty"), i)) for i in items]})


REF = entities(("pleural effusion", "left", "small", "certain"), ("atelectasis", "left lower lobe", None, "probable"))
HYP = entities(("Pleural Effusion", "right", "small", "certain"), ("cardiomegaly", None, "mild", "certain"))


def test_objective_hand_computed():
    """REF {effusion left small, atelectasis}, HYP {effusion right small, cardiomegaly}: disease P
    1/2, R 1/2 -> 0.5; location: no entity agrees on disease and location -> 0; severity and
    uncertainty: the effusion only, 1 of 2 each side -> 0.5. Fails if attributes were scored on
    the shared finding alone (severity 1.0)."""
    ref, _ = parse_entities(REF)
    hyp, _ = parse_entities(HYP)
    s = objective_scores(ref, hyp, W, "paper")
    assert s["disease"] == pytest.approx(0.5)
    assert s["location"] == 0.0
    assert s["severity"] == pytest.approx(0.5)
    assert s["uncertainty"] == pytest.approx(0.5)
    assert s["obj"] == pytest.approx(0.25 * (0.5 + 0 + 0.5 + 0.5))
    old = objective_scores(ref, hyp, W, "shared_findings")  # attributes on the one shared finding
    assert (old["disease"], old["location"], old["severity"], old["uncertainty"]) == (0.5, 0.0, 1.0, 1.0)


def test_asymmetric_rates_harmonic_mean():
    ref, _ = parse_entities(entities(("a", None, None, "certain")))
    hyp, _ = parse_entities(
        entities(("a", None, None, "certain"), ("b", None, None, "certain"), ("c", None, None, "certain"))
    )
    # S(x, x^) = 1, S(x^, x) = 1/3 -> harmonic mean 0.5
    assert objective_scores(ref, hyp, W, "paper")["disease"] == pytest.approx(0.5)
    assert objective_scores((), (), W, "paper")["obj"] == 1.0 and objective_scores(ref, (), W, "paper")["obj"] == 0.0
    assert objective_scores((), hyp, W, "paper")["obj"] == 0.0


FIVE_REF = [
    ("pleural effusion", "left", "small", "certain"),
    ("atelectasis", "left lower lobe", None, "probable"),
    ("cardiomegaly", None, "mild", "certain"),
    ("pulmonary edema", None, "moderate", "certain"),
    ("pneumothorax", "right apex", "small", "certain"),
]
# the five cases of the paper's definition: (candidate entities, S_obj paper, S_obj shared_findings)
CASES = {
    # 1 of 5 found with correct attributes: P 1, R 1/5 in every dimension -> 1/3 each
    "omission": ([FIVE_REF[0]], 1 / 3, 0.25 * (1 / 3) + 0.75),
    # one reference finding reported twice: any-match gives P 2/2, R 1/1 -> 1 (old: disease 2/3)
    "repeat": ([FIVE_REF[0], FIVE_REF[0]], 1.0, 0.25 * (2 / 3) + 0.75),
    # the one finding at the wrong location: location P 0, R 0; the rest 1
    "wrong_attribute": ([("pleural effusion", "right", "small", "certain")], 0.75, 0.75),
    # one extra finding: P 1/2, R 1 -> 2/3 in every dimension (old: disease 2/3, attributes 1)
    "extra_finding": ([FIVE_REF[0], ("pneumonia", "right lower lobe", None, "certain")], 2 / 3, 0.25 * (2 / 3) + 0.75),
    "perfect": (FIVE_REF, 1.0, 1.0),
}
CASE_REF = {"omission": FIVE_REF, "perfect": FIVE_REF}  # the other cases have the one effusion as reference


@pytest.mark.parametrize("case", sorted(CASES))
def test_paper_objective_on_the_five_cases(case):
    """S_obj of the paper's per-dimension P/R (default) and of the shared_findings option, by hand.
    Fails if an omission cost only the disease weight (omission 0.833), if repeats were paired one
    to one (repeat 0.917), or if the options were swapped."""
    hyp, paper, shared = CASES[case]
    ref = CASE_REF.get(case, FIVE_REF[:1])
    assert objective_scores(ref, hyp, W, "paper")["obj"] == pytest.approx(paper)
    assert objective_scores(ref, hyp, W, "shared_findings")["obj"] == pytest.approx(shared)


def test_omission_costs_every_dimension():
    """1 of 5 reference findings reported: each of the four dimensions is 2 * 1 * 0.2 / 1.2 = 1/3."""
    s = objective_scores(FIVE_REF, [FIVE_REF[0]], W, "paper")
    assert [s[d] for d in ("disease", "location", "severity", "uncertainty")] == pytest.approx([1 / 3] * 4)


def test_objective_option_reaches_the_score_and_the_signature():
    """gema's `objective` option selects the reading in score_answers and names it in the signature."""
    from srrg.metrics.judges.gema import Gema

    sub = '{"fluency_errors": 0, "grammar_errors": 0, "terminology_errors": 0}'
    ref, hyp = entities(*FIVE_REF), entities(FIVE_REF[0])
    paper = score_answers([ref], [hyp], [sub]).per_report["gema_obj"][0]
    old = score_answers([ref], [hyp], [sub], GemaConfig(objective="shared_findings")).per_report["gema_obj"][0]
    assert (paper, old) == (pytest.approx(1 / 3), pytest.approx(0.25 / 3 + 0.75))
    assert "|objective:paper|" in Gema().signature("gema")
    assert "|objective:shared_findings|" in Gema(objective="shared_findings").signature("gema")


def test_subjective_rounding():
    assert subjective_score({"fluency": 0, "grammar": 0, "terminology": 0}, A) == 1.0
    # (1 + 0.9 + 0.5) / 3 = 0.8
    assert subjective_score({"fluency": 0, "grammar": 2, "terminology": 10}, A) == 0.8
    # (0.95 + 0.95 + 0.95) / 3 = 0.95 -> nearest 0.2 step is 1.0
    assert subjective_score({"fluency": 1, "grammar": 1, "terminology": 1}, A) == 1.0
    # (0 + 0 + 0.65)/3 = 0.2167 -> 0.2
    assert subjective_score({"fluency": 30, "grammar": 20, "terminology": 7}, A) == 0.2


def test_subjective_rounding_midpoints_round_up():
    # exact midpoints of the 0.2 grid: (0.9 * 3) / 3 = 0.9 -> 1.0; (0.7 * 3) / 3 = 0.7 -> 0.8;
    # (0.5 * 3) / 3 = 0.5 -> 0.6; (0.3 * 3) / 3 = 0.3 -> 0.4 (the float sum is 0.29999999999999993)
    assert subjective_score({"fluency": 2, "grammar": 2, "terminology": 2}, A) == 1.0
    assert subjective_score({"fluency": 6, "grammar": 0, "terminology": 0}, A) == 1.0
    assert subjective_score({"fluency": 6, "grammar": 6, "terminology": 6}, A) == 0.8
    assert subjective_score({"fluency": 10, "grammar": 10, "terminology": 10}, A) == 0.6
    assert subjective_score({"fluency": 14, "grammar": 14, "terminology": 14}, A) == 0.4
    # just off a midpoint still goes to the nearest step: (1 + 1 + 0.65) / 3 = 0.8833 -> 0.8
    assert subjective_score({"fluency": 0, "grammar": 0, "terminology": 7}, A) == 0.8


def test_gema_blend_and_explanations_kept():
    sub = (
        '```json\n{"fluency_errors": 0, "grammar_errors": "two", "terminology_errors": 10, "explanation": "terse"}\n```'
    )
    res = score_answers([REF], [HYP], [sub])
    s_obj = 0.25 * (0.5 + 0 + 0.5 + 0.5)  # test_objective_hand_computed
    assert res.per_report["gema_sub"] == [0.8]
    assert res.per_report["gema"] == [pytest.approx(0.8 * s_obj + 0.2 * 0.8)]
    assert res.per_report["gema_status"] == [OK]
    assert "missing: atelectasis" in res.per_report["gema_explanation"][0]
    assert res.per_report["gema_explanation"][0].endswith("terse")
    assert json.loads(res.per_report["gema_hyp_entities"][0])[0]["disease"] == "pleural effusion"


def test_failures_are_recorded_not_scored():
    res = score_answers(
        [REF, "not json", REF],
        [HYP, HYP, HYP],
        ['{"fluency_errors": 0, "grammar_errors": 0, "terminology_errors": 0}', None, "{}"],
    )
    assert res.per_report["gema_status"][0] == OK
    assert res.per_report["gema_status"][1] == "no_response:ref_entities,subjective"  # worst failure first
    assert res.per_report["gema_status"][2] == "unparseable:subjective"
    assert math.isnan(res.per_report["gema"][1]) and math.isnan(res.per_report["gema"][2])
    assert res.summary["gema_failures"] == 2
    assert parse_subjective(None)[2] == NO_RESPONSE and parse_subjective("[1, 2]")[2] == UNPARSEABLE


def test_entity_parsing_tolerates_noise():
    text = (
        'Here you go: {"entities": [{"disease": "Edema", "uncertainty": "possible"}, {"location": "x"}, "junk", '
        '{"disease": "edema"}]}'
    )
    ents, status = parse_entities(text)
    assert status == OK and ents == (("edema", None, None, "uncertain"), ("edema", None, None, None))
    assert parse_entities('{"entities": []}') == ((), OK)
    assert parse_entities("nothing")[1] == UNPARSEABLE


def test_requests_deduplicate_report_texts():
    entity, texts, subjective = gema_requests(["same", "same"], ["other", "same"], GemaConfig())
    assert texts == ["same", "other"] and len(entity) == 2 and len(subjective) == 2
    assert all(r.json_mode for r in entity)


def test_config_validation():
    with pytest.raises(ValueError, match="dimension_weights"):
        GemaConfig(dimension_weights={"disease": 1.0})
    with pytest.raises(ValueError, match="alpha"):
        GemaConfig(alpha=1.5)
    with pytest.raises(ValueError, match="objective must be one of"):
        GemaConfig(objective="shared")


def test_gema_end_to_end_through_openai_server(tmp_path, monkeypatch):
    from judge_responses import stub_llm_config
    from openai_stub import OpenAIStub, Reply, last_user_message

    from srrg.metrics import evaluate

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")

    def responder(body):
        prompt = last_user_message(body)
        if "Count the candidate's problems" in prompt:
            return Reply('{"fluency_errors": 0, "grammar_errors": 0, "terminology_errors": 0, "explanation": "clear"}')
        return Reply(REF if "Small left effusion" in prompt else HYP)

    with OpenAIStub(responder=responder) as stub:
        options = {"gema": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        refs, hyps = ["Small left effusion."] * 2, ["Right effusion, mild cardiomegaly."] * 2
        out = evaluate(refs, hyps, ["gema"], per_report=True, options=options)
        assert out["gema"] == pytest.approx([0.8 * 0.375 + 0.2 * 1.0] * 2)  # S_obj of test_objective_hand_computed
        assert len(stub.requests) == 3  # two distinct report texts + one distinct pair
        evaluate(refs, hyps, ["gema"], options=options)
        assert len(stub.requests) == 3


def test_diseases_match_through_the_vocabulary():
    ref, _ = parse_entities(
        entities(("effusion", "left", "small", "certain"), ("enlarged heart", None, "mild", "certain"))
    )
    hyp, _ = parse_entities(
        entities(
            ("Pleural effusions", "left", "Small", "certain"),
            ("small left effusion", None, None, "certain"),
            ("cardiomegaly", None, "mildly", "certain"),
        )
    )
    assert [e[0] for e in ref] == ["pleural effusion", "cardiomegaly"]
    assert [e[0] for e in hyp] == ["pleural effusion", "pleural effusion", "cardiomegaly"]
    assert hyp[2][2] == "mild"  # severity words map onto the vocabulary's levels
    s = objective_scores(ref, hyp, W, "paper")
    # any-match: both reference entities and all three candidate entities find their disease
    assert s["disease"] == 1.0
    # location: ref effusion-left found (hyp 1), ref cardiomegaly-null found (hyp 3): R 2/2; hyp 2
    # (effusion, null) has no reference effusion without location: P 2/3 -> 0.8
    assert s["location"] == pytest.approx(0.8)
    # severity: hyp 2 (effusion, no severity) unmatched as well -> 0.8; uncertainty all agree -> 1
    assert s["severity"] == pytest.approx(0.8) and s["uncertainty"] == 1.0
    old = objective_scores(ref, hyp, W, "shared_findings")  # one-to-one: 2 pairs of 2 and 3 entities
    assert old["disease"] == pytest.approx(0.8) and old["location"] == 1.0 and old["severity"] == 1.0


def test_repeated_diseases_any_match_and_the_one_to_one_option():
    """Two reference nodules, one candidate nodule (left lower lobe): any-match gives disease 1
    (P 1/1, R 2/2) and location 2/3 (P 1/1, R 1/2); the shared_findings option pairs one to one
    (disease 2/3) and compares the location on the pair that agrees (1)."""
    ref, _ = parse_entities(
        entities(("nodule", "right upper lobe", None, "certain"), ("nodule", "left lower lobe", None, "certain"))
    )
    hyp, _ = parse_entities(entities(("nodule", "left lower lobe", None, "certain")))
    s = objective_scores(ref, hyp, W, "paper")
    assert s["disease"] == 1.0 and s["location"] == pytest.approx(2 / 3)
    old = objective_scores(ref, hyp, W, "shared_findings")
    assert old["disease"] == pytest.approx(2 * 1 / 3)  # one of two nodules found
    assert old["location"] == 1.0  # the found nodule pairs with the one in the same place


def test_cut_off_entity_list_is_truncated_not_repaired():
    from srrg.metrics.judges.common import Reply

    cut = Reply(
        '{"entities": [{"disease": "pleural effusion", "location": "le', "truncated", "answer cut off at max_tokens=16"
    )
    assert parse_entities(cut) == ((), "truncated")
    sub = '{"fluency_errors": 0, "grammar_errors": 0, "terminology_errors": 0}'
    res = score_answers([REF], [cut], [sub])
    assert res.per_report["gema_status"] == ["truncated:hyp_entities"] and math.isnan(res.per_report["gema"][0])
    assert res.summary["gema_failures"] == 1 and res.summary["gema_truncated"] == 1
