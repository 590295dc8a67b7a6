"""CRIMSON: the published score on hand-written answers (each significance level, attribute errors, the
negative branch, patient context), the answer reader on canned official-format answers (compared
with RadEval's copy of the official parser where it is installed), the published prompt byte for
byte, structured answers, and `srrg score --metrics crimson` against the loopback OpenAI stub."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from judge_responses import ScriptedClient, stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message

from srrg.cli import main as srrg_main
from srrg.metrics.base import get_metric, score_all
from srrg.metrics.judges.common import Reply as JudgeReply
from srrg.metrics.judges.crimson import SCHEMA, Crimson, crimson_requests, read_answer, score_answer, score_responses
from srrg.settings.metrics import CrimsonConfig

URGENT, ACTIONABLE, MINOR, BENIGN = "urgent", "actionable_not_urgent", "not_actionable_not_urgent", "benign_expected"


def answer(refs=(), preds=(), matched=(), false=(), missing=(), attributes=()) -> dict:
    """An answer object in the published Output Format: refs/preds are (id, level) pairs, matched
    (ref_id, pred_id) pairs, attributes (ref_id, pred_id, severity, error types)."""
    return {
        "reference_findings": [{"id": i, "finding": f"finding {i}", "clinical_significance": s} for i, s in refs],
        "predicted_findings": [{"id": i, "finding": f"finding {i}", "clinical_significance": s} for i, s in preds],
        "matched_findings": [{"ref_id": r, "pred_id": p} for r, p in matched],
        "errors": {
            "false_findings": list(false),
            "missing_findings": list(missing),
            "attribute_errors": [
                {"ref_id": r, "pred_id": p, "severity": sev, "error_types": list(types), "explanation": "differs"}
                for r, p, sev, types in attributes
            ],
        },
    }


# hand-computed from the published formula (docs/judges.md, CRIMSON): weights urgent 1, actionable 0.5,
# not actionable 0.25, benign 0; S = (correct - E_false) / N_G
@pytest.mark.parametrize(
    ("level", "expected"),
    [(URGENT, 1 / 2), (ACTIONABLE, 1 / 1.5), (MINOR, 1 / 1.25), (BENIGN, 1.0)],
)
def test_a_missing_finding_costs_its_significance_weight(level, expected):
    # R1 (urgent) found, R2 of `level` missed: correct 1, N_G = 1 + w
    obj = answer(refs=[("R1", URGENT), ("R2", level)], preds=[("P1", URGENT)], matched=[("R1", "P1")], missing=["R2"])
    result = score_answer(obj)
    assert result.status == "ok" and result.score == pytest.approx(round(expected, 4), abs=0)


@pytest.mark.parametrize(("level", "expected"), [(URGENT, 0.0), (ACTIONABLE, 0.5), (MINOR, 0.75), (BENIGN, 1.0)])
def test_a_false_finding_costs_its_significance_weight(level, expected):
    # R1 (urgent) found, P2 of `level` invented: (1 - w) / 1
    obj = answer(refs=[("R1", URGENT)], preds=[("P1", URGENT), ("P2", level)], matched=[("R1", "P1")], false=["P2"])
    assert score_answer(obj).score == expected


def test_more_weighted_errors_than_correct_findings_score_minus_x_over_one_plus_x():
    # R1 (actionable) missed, two urgent false findings: S = (0 - 2) / 0.5 < 0, x = 2 - 0 -> -2/3
    obj = answer(refs=[("R1", ACTIONABLE)], preds=[("P1", URGENT), ("P2", URGENT)], false=["P1", "P2"], missing=["R1"])
    assert score_answer(obj).score == round(-2 / 3, 4)
    # one urgent false finding beside one matched urgent and one missed urgent: S = 0 -> 0
    obj = answer(
        refs=[("R1", URGENT), ("R2", URGENT)],
        preds=[("P1", URGENT), ("P2", URGENT)],
        matched=[("R1", "P1")],
        false=["P2"],
        missing=["R2"],
    )
    assert score_answer(obj).score == 0.0


@pytest.mark.parametrize(
    ("level", "severities", "expected"),
    [
        (URGENT, ["significant"], 1 * 1 / 1.5),  # w * w / (w + 0.5)
        (URGENT, ["significant", "negligible"], 1 * 1 / 1.5),  # a negligible error weighs 0
        (URGENT, ["significant", "significant"], 1 * 1 / 2),
        (URGENT, ["moderate"], 1 * 1 / 1.25),  # an unknown severity weighs 0.25 (official)
        (ACTIONABLE, ["significant"], (0.5 * 0.5 / 1.0) / 0.5),  # divided by N_G = 0.5
        (BENIGN, ["significant"], 1.0),  # N_G = 0, no false or missing finding
    ],
)
def test_attribute_errors_give_partial_credit(level, severities, expected):
    attributes = [("R1", "P1", s, ["location"]) for s in severities]
    obj = answer(refs=[("R1", level)], preds=[("P1", level)], matched=[("R1", "P1")], attributes=attributes)
    result = score_answer(obj)
    assert result.score == round(expected, 4)
    assert result.counts[2] == len(severities) and result.counts[3] == len(severities)  # attribute, location


def test_one_reference_matched_twice_counts_once_and_counts_per_error_type():
    obj = answer(
        refs=[("R1", URGENT), ("R2", MINOR)],
        preds=[("P1", URGENT), ("P2", URGENT), ("P3", MINOR)],
        matched=[("R1", "P1"), ("R1", "P2"), ("R2", "P3")],
        attributes=[("R2", "P3", "significant", ["severity", "temporal"])],
    )
    result = score_answer(obj)
    # correct = 1 + 0.25 * 0.25 / 0.75; N_G = 1.25
    assert result.score == round((1 + 0.25 * 0.25 / 0.75) / 1.25, 4)
    counts = dict(zip(("false", "missing", "attribute", "location", "severity"), result.counts))
    assert counts == {"false": 0, "missing": 0, "attribute": 1, "location": 0, "severity": 1}
    assert result.counts[-1] == 1  # temporal
    assert result.weights == (0.0, 0.0, 0.5, 1.25, pytest.approx(1 + 0.25 * 0.25 / 0.75))


def test_no_reference_findings():
    assert score_answer(answer()).score == 1.0  # both normal
    # one urgent false finding, N_G = 0: S = -(1 + 0 + 1), x = 1 -> -1/2
    assert score_answer(answer(preds=[("P1", URGENT)], false=["P1"])).score == -0.5
    assert score_answer(answer(preds=[("P1", BENIGN)], false=["P1"])).score == 1.0  # a benign extra costs nothing
    unknown = answer(refs=[("R1", "critical")], preds=[("P1", URGENT)], matched=[("R1", "P1")])
    assert score_answer(unknown).weights[3] == 0.25  # an unknown level weighs 0.25 (official)


# canned answers as a judge writes them -> the score the official formula gives
OK_ANSWER = answer(
    refs=[("R1", URGENT), ("R2", ACTIONABLE)],
    preds=[("P1", URGENT), ("P2", MINOR)],
    matched=[("R1", "P1")],
    false=["P2"],
    missing=["R2"],
)
OK_SCORE = round((1 - 0.25) / 1.5, 4)
PLAIN = json.dumps(OK_ANSWER)
CANNED = {
    "plain": (PLAIN, OK_SCORE),
    "fenced": ("Here is the evaluation:\n```json\n" + json.dumps(OK_ANSWER, indent=2) + "\n```", OK_SCORE),
    "prose around": ("Evaluation follows. " + PLAIN + " Done.", OK_SCORE),
    "smart quotes in a text": (PLAIN.replace('"differs"', '"the \u201cleft\u201d side"'), OK_SCORE),
    "invalid escape": (PLAIN.replace('"finding R1"', '"finding\\_R1"'), OK_SCORE),
    "unescaped quote in a text": (PLAIN.replace('"finding P2"', '"finding "small" P2"'), OK_SCORE),
    "trailing comma": (PLAIN.replace('["R2"]', '["R2",]'), OK_SCORE),
    # the first of repeated keys wins: the second reference list would make R2 benign (score 0.75)
    "repeated key": (
        PLAIN[:-1] + ', "reference_findings": [{"id": "R1", "clinical_significance": "urgent"}]}',
        OK_SCORE,
    ),
}
FAILED = {
    "prose": "The candidate misses the effusion.",
    "empty object": "{}",  # official: 1.0 (every list defaults to empty); RadEval's copy refuses it
    "a list": "[1, 2]",
    "matched without ref_id": json.dumps({**OK_ANSWER, "matched_findings": [{"pred_id": "P1"}]}),
    "errors not an object": json.dumps({**OK_ANSWER, "errors": ["P2"]}),
    "finding without id": json.dumps({**OK_ANSWER, "reference_findings": [{"finding": "x"}]}),
}


@pytest.mark.parametrize("name", list(CANNED))
def test_canned_answers_read_as_the_official_parser_reads_them(name):
    text, expected = CANNED[name]
    result = read_answer(text)
    assert result.status == "ok" and result.score == expected


@pytest.mark.parametrize("name", list(FAILED))
def test_answers_without_a_well_formed_object_are_unparseable(name):
    result = read_answer(FAILED[name])
    assert result.status == "unparseable" and math.isnan(result.score) and all(math.isnan(c) for c in result.counts)


def radeval_crimson():
    """RadEval's copy of the official scorer (radeval/metrics/crimson), without its model."""
    module = pytest.importorskip("radeval.metrics.crimson.crimson", reason="RadEval (make test installs it) absent")
    return module.CRIMSONScore.__new__(module.CRIMSONScore)


def test_every_canned_answer_scores_as_radevals_copy_of_the_official_parser():
    official = radeval_crimson()
    for name, (text, expected) in CANNED.items():
        assert official._parse_response(text)["crimson_score"] == expected == read_answer(text).score, name
    for name in ("prose", "empty object", "a list", "errors not an object"):
        with pytest.raises((ValueError, AttributeError, TypeError)):
            official._parse_response(FAILED[name])
    # the formula itself on every hand-written answer above
    hand = [OK_ANSWER, answer(), answer(preds=[("P1", URGENT)], false=["P1"])]
    hand.append(
        answer(
            refs=[("R1", URGENT), ("R2", MINOR)],
            preds=[("P1", URGENT), ("P2", URGENT), ("P3", MINOR)],
            matched=[("R1", "P1"), ("R1", "P2"), ("R2", "P3")],
            attributes=[("R2", "P3", "significant", ["severity"]), ("R1", "P1", "odd", ["location"])],
        )
    )
    for obj in hand:
        theirs = official._calculate_crimson(obj)
        ours = score_answer(obj)
        assert ours.score == theirs["crimson_score"]
        assert ours.weights[:2] == (theirs["metrics"]["E_penalty"], theirs["weighted_error_counts"]["missing_findings"])
        assert ours.weights[3:] == (theirs["metrics"]["N_G"], theirs["metrics"]["correct"])


def test_transport_failures_keep_their_status_and_are_never_scored():
    truncated = read_answer(JudgeReply(PLAIN[:200], "truncated"))  # a cut-off JSON answer is not closed and scored
    assert truncated.status == "truncated" and math.isnan(truncated.score)
    assert read_answer(None).status == "no_response"
    result = score_responses([PLAIN, None, "prose"])
    assert result.summary["crimson"] == OK_SCORE and result.summary["crimson_n_parsed"] == 1
    assert result.summary["crimson_failures"] == 2 and result.summary["crimson_unparseable"] == 1
    assert result.per_report["crimson_status"] == ["ok", "no_response", "unparseable"]


def test_structured_answers_follow_the_schema_strictly_and_score_alike():
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert read_answer(PLAIN, structured=True).score == OK_SCORE
    assert read_answer("```json\n" + PLAIN + "\n```", structured=True).status == "unparseable"  # no repair
    off_schema = json.dumps({**OK_ANSWER, "reference_findings": [{"id": "R1"}]})
    assert read_answer(off_schema, structured=True).status == "unparseable"
    request = crimson_requests(["a"], ["b"], [{}], CrimsonConfig(), True, structured=True)[0]
    assert request.json_mode and json.loads(request.json_schema) == SCHEMA


def official_prompt(ref, hyp, context, guidelines):
    module = pytest.importorskip(
        "radeval.metrics.crimson.prompt_parts", reason="RadEval (make test installs it) absent"
    )
    return module.build_prompt(
        ref,
        hyp,
        patient_context=context,
        include_significance_examples=guidelines,
        include_attribute_guidelines=guidelines,
        include_context_guidelines=guidelines,
    )


@pytest.mark.parametrize("guidelines", [True, False])
@pytest.mark.parametrize("context", [{}, {"age": "82", "sex": "F", "indication": "Routine preoperative evaluation"}])
def test_the_prompt_is_the_published_one_byte_for_byte(guidelines, context):
    ref, hyp = "Cardiomegaly.\nSmall {left} effusion.", "Normal heart  size."
    request = crimson_requests([ref], [hyp], [context], CrimsonConfig(), guidelines)[0]
    labels = {"age": "Age", "sex": "Sex", "indication": "Indication"}
    expected = official_prompt(ref, hyp, {labels[k]: v for k, v in context.items()}, guidelines)
    assert request.messages[0] == {
        "role": "system",
        "content": "You are an expert radiology evaluator that assesses the accuracy of radiology reports.",
    }
    assert request.messages[1]["content"] == expected


def test_guidelines_follow_the_model_and_context_switches():
    base = {"llm": {"backend": "openai", "model": "rajpurkarlab/medgemma-4b-it-crimson"}}
    tuned, api = Crimson(**base), Crimson(llm={"backend": "openai", "model": "gpt-5.2"})
    context = [{"age": "4", "indication": "Discomfort and baby crying"}]
    assert not tuned.guidelines() and api.guidelines()
    tuned_text = crimson_requests(["r"], ["h"], context, tuned.cfg, tuned.guidelines())[0].messages[1]["content"]
    api_text = crimson_requests(["r"], ["h"], context, api.cfg, api.guidelines())[0].messages[1]["content"]
    assert "Patient Context:\n    Age: 4\n    Indication: Discomfort and baby crying\n" in tuned_text
    assert "Context guidelines:" not in tuned_text and "Examples of typical classifications" not in tuned_text
    assert "Context guidelines:" in api_text and "Examples of typical classifications" in api_text
    off = CrimsonConfig(context=False)
    assert "Patient Context" not in crimson_requests(["r"], ["h"], context, off, True)[0].messages[1]["content"]
    assert Crimson(**base, guidelines=True).guidelines()
    # the signature names the prompt both ways, so the fine-tuned prompt never shares a column with the API one
    assert tuned.signature("crimson") != api.signature("crimson") and "prompt:" in api.signature("crimson")
    with pytest.raises(ValueError, match="modality"):
        CrimsonConfig(modality="CT")


class RecordingClient(ScriptedClient):
    def complete(self, requests):
        self.requests = list(requests)
        return super().complete(requests)


def test_context_reaches_only_the_pairs_that_have_one():
    from srrg.llm.base import LLMResponse

    client = RecordingClient([LLMResponse(PLAIN), LLMResponse(PLAIN)])
    contexts = [{"age": "25", "indication": "Chest pain."}, {}]
    result = score_all(["r1", "r2"], ["h1", "h2"], ["crimson"], {"crimson": {"client": client}}, contexts)
    prompts = [r.messages[1]["content"] for r in client.requests]
    assert "Patient Context:\n    Age: 25\n    Indication: Chest pain.\n" in prompts[0]
    assert "Patient Context" not in prompts[1] and [r.template for r in client.requests] == [
        "crimson_context",
        "crimson",
    ]
    assert result.per_report["crimson"] == [OK_SCORE, OK_SCORE]
    # without contexts every metric scores as before, and a metric that reads none ignores them
    assert (
        score_all(["a b c"], ["a b d"], ["bleu"], None, [{"age": "3"}]).per_report
        == score_all(["a b c"], ["a b d"], ["bleu"]).per_report
    )
    assert get_metric("crimson").cfg.max_words == 0


# `srrg score` end to end: candidate text -> the judge's answer
E2E = {
    "cand-perfect": (answer(refs=[("R1", URGENT)], preds=[("P1", URGENT)], matched=[("R1", "P1")]), 1.0),
    "cand-miss": (OK_ANSWER, OK_SCORE),
    "cand-false": (answer(preds=[("P1", URGENT)], false=["P1"]), -0.5),
    "cand-attribute": (
        answer(
            refs=[("R1", URGENT)],
            preds=[("P1", URGENT)],
            matched=[("R1", "P1")],
            attributes=[("R1", "P1", "significant", ["location"])],
        ),
        round(1 / 1.5, 4),
    ),
    "cand-benign": (
        answer(
            refs=[("R1", ACTIONABLE), ("R2", BENIGN)],
            preds=[("P1", ACTIONABLE)],
            matched=[("R1", "P1")],
            missing=["R2"],
        ),
        1.0,
    ),
}


def test_srrg_score_crimson_against_the_stub_gives_the_published_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    refs, hyps = tmp_path / "refs.jsonl", tmp_path / "hyps.jsonl"
    # study s0 has patient context (age, sex, indication), s1 only an age, s2 none
    contexts = [{"age": 82, "sex": "M", "indication": "Routine preoperative evaluation"}, {"age": "25"}, {}, {}, {}]
    refs.write_text(
        "".join(
            json.dumps({"study_id": f"s{i}", "report": f"reference {i}.", **c}) + "\n" for i, c in enumerate(contexts)
        )
    )
    hyps.write_text("".join(json.dumps({"study_id": f"s{i}", "report": h}) + "\n" for i, h in enumerate(E2E)))

    def responder(body):
        candidate = last_user_message(body).split("Predicted Findings (Candidate):\n")[1].split()[0]
        return Reply(json.dumps(E2E[candidate][0]), completion_tokens=300)

    with OpenAIStub(responder=responder) as stub:
        options = {"crimson": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        out = tmp_path / "out"
        code = srrg_main(
            [
                "score",
                "--refs",
                str(refs),
                "--hyps",
                str(hyps),
                "--metrics",
                "crimson",
                "--out",
                str(out),
                "--config",
                json.dumps(options),
            ]
        )
        assert code in (0, None)
        bodies = sorted(stub.requests, key=lambda b: last_user_message(b).split("Predicted Findings (Candidate):\n")[1])
    per = pl.read_parquet(out / "per_report.parquet")
    assert per["crimson"].to_list() == [E2E[h][1] for h in E2E]
    assert per["crimson_status"].to_list() == ["ok"] * 5
    assert per["crimson_false_findings"].to_list() == [0, 1, 1, 0, 0]
    assert per["crimson_missing_findings"].to_list() == [0, 1, 0, 0, 1]
    assert per["crimson_attribute_errors"].to_list() == [0, 0, 0, 1, 0] and per["crimson_location_errors"][3] == 1
    summary = pl.read_csv(out / "summary.csv")
    assert summary["crimson"][0] == pytest.approx(sum(v for _, v in E2E.values()) / 5)
    assert summary["crimson_failures"][0] == 0
    assert {b["max_tokens"] for b in bodies} == {4096} and all(
        b["response_format"] == {"type": "json_object"} for b in bodies
    )
    assert [b["messages"][0]["role"] for b in bodies] == ["system"] * 5
    users = {
        last_user_message(b).split("Predicted Findings (Candidate):\n")[1].split()[0]: last_user_message(b)
        for b in bodies
    }
    assert (
        "Patient Context:\n    Age: 82\n    Sex: M\n    Indication: Routine preoperative evaluation\n"
        in users["cand-perfect"]
    )
    assert "Context guidelines:" in users["cand-perfect"]
    assert "Patient Context:\n    Age: 25\n\n" in users["cand-miss"]
    assert "Patient Context" not in users["cand-false"] and "Context guidelines:" not in users["cand-false"]
