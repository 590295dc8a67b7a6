"""Structured judge answers (docs/judges.md "Structured answers"): the same counts give the same
values whether the judge wrote them in the text format or as JSON in the schema, through the
loopback OpenAI stub; the schema reaches the server in the shape `llm.schema_format` names; a
structured answer is read strictly."""

from __future__ import annotations

import json
import math
import re

import pytest
from judge_responses import green_answer, stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message

from srrg.llm import LLMClient
from srrg.llm.base import Decoding, request_key
from srrg.metrics.judges.common import CATEGORY_FIELDS, structured_mode
from srrg.metrics.judges.common import Reply as JudgeReply
from srrg.metrics.judges.gema import ENTITY_SCHEMA, SUBJECTIVE_SCHEMA, Gema
from srrg.metrics.judges.green import SCHEMA as GREEN_SCHEMA
from srrg.metrics.judges.green import Green, score_responses
from srrg.metrics.judges.proxy_rating import ProxyRating
from srrg.metrics.judges.vert import Vert
from srrg.settings.llm import LLMConfig

# (significant a..f, insignificant a..f, matched findings, VERT score) per candidate; GREEN by hand:
# matched / (matched + significant) -> 2/4, 1/1, 0 (no matched finding), 3/4
CASES = [
    ((1, 1, 0, 0, 0, 0), (0, 1, 0, 0, 0, 0), 2, "0.55"),
    ((0,) * 6, (0,) * 6, 1, "1.00"),
    ((2, 0, 0, 0, 0, 0), (0,) * 6, 0, "0.10"),
    ((0, 0, 1, 0, 0, 0), (1, 0, 0, 0, 0, 1), 3, "0.7"),
]
GREEN_BY_HAND = [2 / 4, 1.0, 0.0, 3 / 4]


def as_json(sig, insig, matched, score=None) -> str:
    obj = {
        "explanation": "compared",
        "clinically_significant_errors": dict(zip(CATEGORY_FIELDS, sig)),
        "clinically_insignificant_errors": dict(zip(CATEGORY_FIELDS, insig)),
        "matched_findings": [f"finding {i}" for i in range(1, matched + 1)],
    }
    if score is not None:
        obj["score"] = float(score)
    return json.dumps(obj)


def case_of(body) -> int:
    return int(re.search(r"case(\d+)", last_user_message(body)).group(1))


def judge_stub(body) -> Reply:
    """Text answers to text requests, JSON answers to schema requests, with the same counts."""
    sig, insig, matched, score = CASES[case_of(body)]
    vert = "[Score]" in last_user_message(body) or '"score"' in last_user_message(body)
    if "json_schema" in body.get("response_format", {}).get("type", ""):
        return Reply(as_json(sig, insig, matched, score if vert else None))
    return Reply(green_answer(sig, matched, insig, score if vert else None))


def run(metric_class, tmp_path, structured, name, **extra):
    refs = [f"reference {i}" for i in range(len(CASES))]
    hyps = [f"case{i} text" for i in range(len(CASES))]
    with OpenAIStub(responder=judge_stub) as stub:
        llm = stub_llm_config(stub.base_url, str(tmp_path / name), structured=structured)
        result = metric_class(llm=llm, **extra).compute(refs, hyps)
        return result, list(stub.requests)


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")


def test_green_structured_and_text_answers_with_the_same_counts_are_identical(tmp_path):
    text, text_bodies = run(Green, tmp_path, False, "text")
    structured, bodies = run(Green, tmp_path, None, "auto")  # null: on, the openai backend has schemas
    assert text.per_report["green"] == pytest.approx(GREEN_BY_HAND)
    for key in text.per_report:
        if key != "green_explanation":
            assert structured.per_report[key] == text.per_report[key], key
    assert structured.summary == text.summary
    assert all("response_format" not in b for b in text_bodies)
    fmt = bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == GREEN_SCHEMA and fmt["json_schema"]["name"] == "green"
    content = last_user_message(bodies[0])
    assert '"clinically_significant_errors"' in content and "Follow this specific format" not in content
    assert "Evaluate only the findings that appear in both reports." in content  # the published task text


def test_vert_structured_and_text_answers_with_the_same_counts_are_identical(tmp_path):
    text, _ = run(Vert, tmp_path, False, "text")
    structured, bodies = run(Vert, tmp_path, True, "structured")
    assert text.per_report["vert"] == [0.55, 1.0, 0.1, 0.7]
    assert text.per_report["green_formula"] == pytest.approx(GREEN_BY_HAND)
    assert structured.per_report == text.per_report
    assert '"score"' in json.dumps(bodies[0]["response_format"]["json_schema"]["schema"]["properties"])


def proxy_stub(body) -> Reply:
    i = case_of(body)
    return Reply(json.dumps({"disease_prediction": 2 * i, "detailed_descriptions": i, "explanation": f"pair {i}"}))


def test_proxy_structured_and_json_mode_give_the_same_ratings(tmp_path):
    refs, hyps = ["ref 0", "ref 1"], ["case0 x", "case1 x"]
    results = []
    for structured in (False, True):
        with OpenAIStub(responder=proxy_stub) as stub:
            llm = stub_llm_config(stub.base_url, str(tmp_path / str(structured)), structured=structured)
            results.append(ProxyRating(llm=llm, scale_max=4).compute(refs, hyps))
            fmt = stub.requests[0]["response_format"]
        assert fmt["type"] == ("json_schema" if structured else "json_object")
    assert results[0].per_report == results[1].per_report
    assert results[1].per_report["proxy_rating"] == [0.0, (2 + 1) / 8]  # mean of the two, over 2 x scale_max


ENTITIES = {
    "reference": [{"disease": "effusion", "location": "left", "severity": "small", "uncertainty": "certain"}],
    "cand": [{"disease": "pleural effusion", "location": "left", "severity": None, "uncertainty": "certain"}],
}


def gema_stub(body) -> Reply:
    content = last_user_message(body)
    if "extracting the clinical entities" in content:
        side = "reference" if "Report:\nreference" in content else "cand"
        return Reply(json.dumps({"entities": ENTITIES[side]}))
    return Reply(json.dumps({"fluency_errors": 0, "grammar_errors": 2, "terminology_errors": 0, "explanation": "two"}))


def test_gema_structured_and_json_mode_give_the_same_scores(tmp_path):
    results, formats = [], []
    for structured in (False, True):
        with OpenAIStub(responder=gema_stub) as stub:
            llm = stub_llm_config(stub.base_url, str(tmp_path / str(structured)), structured=structured)
            results.append(Gema(llm=llm).compute(["reference 0"], ["case0 text"]))
            formats.append([b["response_format"] for b in stub.requests])
    assert results[0].per_report == results[1].per_report
    # disease matched, location agrees, severity does not, uncertainty agrees: obj = (1 + 1 + 0 + 1) / 4;
    # grammar 2 errors: sub = (1 + 0.9 + 1) / 3 = 0.967 -> 1.0; gema = 0.8 * 0.75 + 0.2 * 1.0
    assert results[1].per_report["gema"] == [pytest.approx(0.8)]
    schemas = [f["json_schema"]["schema"] for f in formats[1]]
    assert ENTITY_SCHEMA in schemas and SUBJECTIVE_SCHEMA in schemas
    assert all(f == {"type": "json_object"} for f in formats[0])


def test_schema_format_json_object_sends_the_schema_inside_json_object(tmp_path):
    with OpenAIStub(responder=judge_stub) as stub:
        llm = {**stub_llm_config(stub.base_url, str(tmp_path), structured=True), "schema_format": "json_object"}
        Green(llm=llm, max_failure_fraction=1.0).compute(["reference 0"], ["case0 text"])
        assert stub.requests[0]["response_format"] == {"type": "json_object", "schema": GREEN_SCHEMA}


@pytest.mark.parametrize(
    "text",
    [
        "Here it is: " + as_json((0,) * 6, (0,) * 6, 1),  # prose around the object: no repair
        as_json((0,) * 6, (0,) * 6, 1).replace('"matched_findings"', '"matches"'),  # a field missing
        as_json((-1,) + (0,) * 5, (0,) * 6, 1),  # a negative count
        as_json((0,) * 6, (0,) * 6, 1)[:-1],  # cut JSON
        green_answer((0,) * 6, 1),  # the text format where JSON was asked for
    ],
)
def test_structured_answers_are_read_strictly(text):
    res = score_responses([text], structured=True)
    assert res.per_report["green_status"] == ["unparseable"] and math.isnan(res.per_report["green"][0])


def test_structured_transport_failures_keep_their_status():
    res = score_responses([JudgeReply('{"explanation": "cut', "truncated"), None], structured=True)
    assert res.per_report["green_status"] == ["truncated", "no_response"]


def test_structured_mode_follows_the_backend_and_the_option(tmp_path):
    def client(**llm):
        return LLMClient(LLMConfig.from_dict({"cache_dir": str(tmp_path), **llm}))

    openai = {"backend": "openai", "model": "judge", "base_url": "http://127.0.0.1:9/v1"}
    assert structured_mode(client(**openai)) is True
    assert structured_mode(client(**openai, structured=False)) is False
    official = client(**{**openai, "model": "StanfordAIMI/GREEN-RadLlama2-7b"})
    assert structured_mode(official, Green.text_model) is False  # tuned on the text format
    assert structured_mode(official) is True  # the pattern is GREEN's only
    assert structured_mode(client(backend="rules")) is False
    with pytest.raises(ValueError, match="schema-constrained decoding"):
        structured_mode(client(backend="rules", structured=True))
    assert structured_mode(object()) is False  # a test double without config answers text


def test_a_schema_is_part_of_the_cache_key():
    from srrg.llm.base import LLMRequest

    request = LLMRequest(({"role": "user", "content": "x"},), "t", "1")
    with_schema = LLMRequest(({"role": "user", "content": "x"},), "t", "1", json_schema='{"type":"object"}')
    plain = Decoding(64, 0.0, False)
    assert request_key("openai", "m", request, plain) != request_key(
        "openai", "m", with_schema, Decoding(64, 0.0, False, with_schema.json_schema)
    )
