"""Structured report: parse / repair / coerce / canonicalize / render (DESIGN §3)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from srrg.report import (
    EMPTY,
    REPAIRED,
    SCHEMA_PATH,
    UNPARSEABLE,
    VALID,
    Finding,
    StructuredReport,
    canonicalize,
    looks_structured,
    merge,
    parse_report,
    render_sentences,
    text_for_nlg,
)

SYN = {"effusion": "pleural effusion", "pleural effusion": "pleural effusion", "heart enlargement": "cardiomegaly"}
GOOD = {
    "positive": [
        {"name": "pleural effusion", "probability": 3, "level": "small", "location": "in the right costophrenic angle"},
        {"name": "atelectasis", "probability": 2, "level": None, "location": "in the lower zone of the left lung"},
    ],
    "negative": ["pneumothorax", "consolidation"],
}


def test_valid_json_round_trips():
    report, status = parse_report(json.dumps(GOOD), SYN)
    assert status == VALID
    assert report.to_dict() == GOOD
    assert json.loads(report.to_json()) == GOOD


def test_schema_accepts_every_parsed_report():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for text in [
        json.dumps(GOOD),
        "{'positive': [{'name': 'Edema', 'probability': '2'}], 'negative': 'x'}",
        "nonsense",
    ]:
        jsonschema.validate(parse_report(text, SYN)[0].to_dict(), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"positive": [{"name": "edema", "probability": 5}], "negative": []}, schema)


@pytest.mark.parametrize(
    "text",
    [
        '{"positive": [{"name": "edema", "probability": 3, "level": null, "location": null}], "negative": '
        '["pneumothorax"],}',
        "{'positive': [{'name': 'edema', 'probability': 3, 'level': None, 'location': None}], 'negative': "
        "['pneumothorax']}",
        '{"positive": [{"name": "edema", "probability": 3, "level": null, "location": null}], "negative": '
        '["pneumothorax"]',
        'Here is the report: {"positive": [{"name": "edema", "probability": 3, "level": null, "location": null}], '
        '"negative": ["pneumothorax"]}',
    ],
)
def test_broken_json_is_repaired(text):
    report, status = parse_report(text, SYN)
    assert status == REPAIRED
    assert report == StructuredReport((Finding("edema", 3, None, None),), ("pneumothorax",))


def test_safe_coercions_mark_repaired():
    text = json.dumps(
        {
            "positive": [{"name": " Pleural  Effusion ", "probability": "2", "level": "Small", "location": None}],
            "negative": "pneumothorax",
        }
    )
    report, status = parse_report(text, SYN)
    assert status == REPAIRED
    assert report.positive == (Finding("pleural effusion", 2, "small", None),)
    assert report.negative == ("pneumothorax",)


def test_invalid_probability_becomes_missing():
    report, status = parse_report('{"positive": [{"name": "edema", "probability": 7}], "negative": []}', SYN)
    assert status == REPAIRED and report.positive[0].probability is None
    report, _ = parse_report(
        '{"positive": [{"name": "edema", "probability": true}, "nodule"], "negative": [{"name": "mass"}]}', SYN
    )
    assert [f.probability for f in report.positive] == [None, None]
    assert report.negative == ("mass",)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "   ",
        "no json here at all",
        "[1, 2, 3]",
        '"just a string"',
        "42",
        '{"findings": []}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_unparseable_gives_empty_report(text):
    report, status = parse_report(text, SYN)
    assert status == UNPARSEABLE and report == EMPTY


def test_missing_key_is_repaired_not_lost():
    report, status = parse_report('{"positive": [{"name": "edema", "probability": 3}]}', SYN)
    assert status == REPAIRED and report.positive[0].name == "edema" and report.negative == ()


def test_canonicalize_synonyms_duplicates_and_positive_wins():
    raw = StructuredReport(
        (
            Finding("effusion", 1, None, None),
            Finding("Pleural Effusion", 3, "small", "left"),
            Finding("pleural effusion", 2),
        ),
        ("pleural effusion", "heart enlargement", "pneumothorax", "pneumothorax"),
    )
    canon = canonicalize(raw, SYN)
    assert canon.positive == (Finding("pleural effusion", 3, "small", "left"),)  # most certain mention wins
    assert canon.negative == ("cardiomegaly", "pneumothorax")  # positive wins, one entry each


def test_equally_certain_mentions_keep_the_detailed_one():
    raw = StructuredReport(
        (Finding("atelectasis", 3), Finding("atelectasis", 3, None, "left base"), Finding("atelectasis", 3, "mild"))
    )
    assert canonicalize(raw, SYN).positive == (Finding("atelectasis", 3, None, "left base"),)


def test_merge_sections():
    findings = StructuredReport((Finding("atelectasis", 2),), ("pneumothorax",))
    impression = StructuredReport((Finding("atelectasis", 3, "mild"), Finding("pneumothorax", 1)), ())
    merged = merge([findings, impression], SYN)
    assert merged.positive == (Finding("atelectasis", 3, "mild"), Finding("pneumothorax", 1))
    assert merged.negative == ()


def test_render_sentences_templates():
    report, _ = parse_report(json.dumps(GOOD), SYN)
    assert render_sentences(report) == (
        "there is small pleural effusion in the right costophrenic angle. "
        "there may be atelectasis in the lower zone of the left lung. "
        "no evidence of pneumothorax. no evidence of consolidation."
    )
    assert render_sentences(StructuredReport((Finding("nodule", 1),))) == "there might be nodule."
    assert render_sentences(StructuredReport((Finding("nodule", None),))) == "there is nodule."
    assert render_sentences(EMPTY) == ""


def test_text_for_nlg():
    assert text_for_nlg("Heart size is normal.") == "Heart size is normal."
    assert text_for_nlg('{"positive": [], "negative": ["edema"]}') == "no evidence of edema."
    assert text_for_nlg('{"positive": [') == ""  # broken structured output earns no text
    assert text_for_nlg('{"positive": [oops') == "there is oops."  # json-repair keeps what it can
    assert text_for_nlg(None) == ""


def test_raw_model_output_is_read_as_the_report_s_score_parses():
    """Fences and lead-ins around a report render it; free text and code stay as written."""
    fenced = '```json\n{"positive": [], "negative": ["edema"]}\n```'
    assert parse_report(fenced)[1] == REPAIRED and looks_structured(fenced)
    assert (
        text_for_nlg(fenced)
        == text_for_nlg('Report: {"positive": [], "negative": ["edema"]}')
        == "no evidence of edema."
    )
    assert text_for_nlg('  {"negative": ["edema"]}') == "no evidence of edema."
    code = '```python\nimport json\njson.dump({"path": 1}, f)\n```'  # a JSON object, but no report
    for free in (code, "No pleural effusion. Negative for pneumothorax.", "[negative] heart: normal"):
        assert not looks_structured(free) and text_for_nlg(free) == free
