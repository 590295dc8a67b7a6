"""CRIMSON (srrg.metrics.judges.crimson), the kinds of test issue 53 found missing: an answer whose
error lists are not lists, the explicit max_words limit, the context block's labels and order, and
the structured-answer schema's keys. Each test's docstring names the bug it catches."""

from __future__ import annotations

import json

import pytest

from srrg.metrics.judges.crimson import (
    ANSWER_KEYS,
    SCHEMA,
    context_lines,
    crimson_requests,
    pair_text,
    read_answer,
    score_answer,
)
from srrg.settings.metrics import CrimsonConfig


def answer(false=("P2",), missing=("R2",), attributes=None) -> dict:
    """R1 matched by P1 (urgent), P2 false, R2 missed (both urgent): a well-formed answer scoring 0."""
    return {
        "reference_findings": [
            {"id": "R1", "finding": "effusion", "clinical_significance": "urgent"},
            {"id": "R2", "finding": "nodule", "clinical_significance": "urgent"},
        ],
        "predicted_findings": [
            {"id": "P1", "finding": "effusion", "clinical_significance": "urgent"},
            {"id": "P2", "finding": "edema", "clinical_significance": "urgent"},
        ],
        "matched_findings": [{"ref_id": "R1", "pred_id": "P1"}],
        "errors": {
            "false_findings": false,
            "missing_findings": missing,
            "attribute_errors": [] if attributes is None else attributes,
        },
    }


def test_the_well_formed_answer_scores():
    """Baseline of the cases below: the same answer with real lists is scored ((1 - 1) / 2 = 0)."""
    result = score_answer(answer(false=["P2"], missing=["R2"]))
    assert result.status == "ok" and result.score == 0.0


@pytest.mark.parametrize(
    "broken",
    [
        {"false": "P2", "missing": ["R2"]},  # a string where the false findings' list belongs
        {"false": ["P2"], "missing": "R2"},  # ... the missing findings' list
        {"false": ["P2"], "missing": ["R2"], "attributes": "R1 laterality"},  # ... the attribute errors' list
        {"false": ["P2"], "missing": ["R2"], "attributes": {"ref_id": "R1"}},  # an object instead of a list
        {"false": {"P2": 1}, "missing": ["R2"]},
        {"false": ["P2"], "missing": [["R2"]]},  # a list holding a list, not ids
        {"false": ["P2"], "missing": ["R2"], "attributes": ""},  # an empty string: nothing to iterate, still no list
        {"false": "", "missing": ["R2"]},
    ],
)
def test_error_lists_that_are_not_lists_are_unparseable(broken):
    """Bug: an errors field holding a string (or object) is iterated letter by letter and scored
    instead of the answer being marked unparseable (the isinstance(list) check dropped)."""
    obj = answer(**broken)
    assert score_answer(obj).status == "unparseable"
    assert read_answer(json.dumps(obj)).status == "unparseable"


@pytest.mark.parametrize("key", ANSWER_KEYS)
def test_a_top_level_field_of_the_wrong_type_is_unparseable(key):
    """Bug: one of the four answer fields as a string (or the errors a list) scored instead of refused."""
    obj = answer(false=["P2"], missing=["R2"])
    for wrong in ("none", "") if key != "errors" else ([], ""):
        obj[key] = wrong  # "" holds nothing to check item by item: only the type test refuses it
        assert score_answer(obj).status == "unparseable", wrong


def test_an_attribute_error_without_its_reference_id_is_unparseable():
    """Bug: an attribute error lacking ref_id (or with a list as ref_id) scored (KeyError or a
    silently unhashable key) instead of unparseable."""
    for bad in ({"severity": "significant", "error_types": []}, {"ref_id": ["R1"], "error_types": []}):
        assert score_answer(answer(false=["P2"], missing=["R2"], attributes=[bad])).status == "unparseable"
    ok = {"ref_id": "R1", "severity": "significant", "error_types": "laterality"}  # text error_types: accepted
    assert score_answer(answer(false=["P2"], missing=["R2"], attributes=[ok])).status == "ok"


def test_pair_text_honours_an_explicit_word_limit():
    """Bug: the max_words argument ignored (only its default 0, the whole report, was ever tested)."""
    text = "one two three four five"
    assert pair_text(text, 0) == text
    assert pair_text(text, 2).split() == ["one", "two"]
    requests = crimson_requests([text], ["alpha beta gamma delta"], [{}], CrimsonConfig(max_words=3), True)
    body = requests[0].messages[-1]["content"]
    assert "one two three" in body and "four five" not in body
    assert "alpha beta gamma" in body and "delta" not in body


def test_context_lines_write_each_label_in_the_official_order():
    """Bug: a label's key misspelt (that field silently never sent) or the fields out of order."""
    context = {"indication": "cough", "sex": "F", "age": "71"}
    assert context_lines(context) == "    Age: 71\n    Sex: F\n    Indication: cough\n"
    assert context_lines({"sex": "M"}) == "    Sex: M\n"
    assert context_lines({"age": "", "other": "x"}) == ""


def test_the_structured_schema_names_every_field_the_formula_reads():
    """Bug: a key of the structured schema misspelt, so a schema-constrained answer lacks the field
    the score reads (every structured answer unparseable)."""
    props = SCHEMA["properties"]
    assert list(props) == list(ANSWER_KEYS) and SCHEMA["required"] == list(ANSWER_KEYS)
    assert list(props["matched_findings"]["items"]["properties"]) == ["ref_id", "pred_id"]
    finding = props["reference_findings"]["items"]["properties"]
    assert list(finding) == ["id", "finding", "clinical_significance"]
    errors = props["errors"]["properties"]
    assert list(errors) == ["false_findings", "missing_findings", "attribute_errors"]
    attribute = errors["attribute_errors"]["items"]["properties"]
    assert list(attribute) == ["ref_id", "pred_id", "severity", "error_types", "explanation"]
    assert attribute["severity"]["enum"] == ["significant", "negligible"]
