"""GEMA-Score's paper scores (srrg.metrics.judges.gema.paper_scores, shared_findings_scores), the kinds
issue 53 found missing: each dimension's match needing the same disease AND the same attribute,
precision and recall apart (a sum where a mean belongs shows), the one-to-one pairing. Each test's
docstring names the bug it catches."""

from __future__ import annotations

import pytest

from srrg.metrics.judges.gema import GEMA_DIMENSIONS, match_entities, paper_scores, shared_findings_scores


def hm(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def test_paper_scores_by_hand_precision_and_recall_apart():
    """ref: effusion (left, small, certain), nodule (right, None, probable); hyp: effusion (right,
    small, certain), edema (left, None, certain), atelectasis (left, small, certain).
    disease: P 1/3, R 1/2; location: effusion's location differs and edema is another disease
    (bug: matching on the attribute alone would match it with the reference effusion's "left"):
    P 0, R 0; severity: P 1/3, R 1/2; uncertainty: P 1/3, R 1/2.
    Bugs: the disease test dropped (another finding's attribute matches), the attribute test
    dropped (every shared disease matches in every dimension), a sum instead of the share."""
    ref = [("effusion", "left", "small", "certain"), ("nodule", "right", None, "probable")]
    hyp = [("effusion", "right", "small", "certain"), ("edema", "left", None, "certain"),
           ("atelectasis", "left", "small", "certain")]  # fmt: skip
    got = paper_scores(ref, hyp)
    assert list(got) == list(GEMA_DIMENSIONS) == ["disease", "location", "severity", "uncertainty"]
    assert got["disease"] == pytest.approx(hm(1 / 3, 1 / 2))
    assert got["location"] == 0.0
    assert got["severity"] == pytest.approx(hm(1 / 3, 1 / 2))
    assert got["uncertainty"] == pytest.approx(hm(1 / 3, 1 / 2))
    # a repeated finding matches as often as it occurs: recall 2/2 with one candidate effusion
    twice = paper_scores([ref[0], ref[0]], [hyp[0]])
    assert twice["disease"] == 1.0 and twice["severity"] == 1.0 and twice["location"] == 0.0


def test_shared_findings_pairs_one_to_one_and_in_place():
    """Bugs: the pairing taking the first same-disease entity instead of the one that agrees on
    most attributes, pairs counted twice, the attribute share over all entities not the pairs."""
    ref = [("nodule", "left", None, "certain"), ("nodule", "right", None, "certain")]
    hyp = [("nodule", "right", None, "certain")]
    assert match_entities(ref, hyp) == [(ref[1], hyp[0])]
    got = shared_findings_scores(ref, hyp)
    assert got == {"disease": pytest.approx(2 / 3), "location": 1.0, "severity": 1.0, "uncertainty": 1.0}
    none = shared_findings_scores(ref, [("edema", "left", None, "certain")])
    assert none == {"disease": 0.0, "location": 0.0, "severity": 0.0, "uncertainty": 0.0}


def test_structured_schemas_exactly():
    """Bug: a keyword of the structured answer's schema written under another key (the entity list
    without its array type, an uncertainty outside the three levels accepted)."""
    import jsonschema

    from srrg.metrics.judges.gema import ENTITY_SCHEMA, SUBJECTIVE_SCHEMA

    entities = ENTITY_SCHEMA["properties"]["entities"]
    assert entities["type"] == "array" and list(ENTITY_SCHEMA["properties"]) == ["entities"]
    entity = entities["items"]["properties"]
    assert entity == {
        "disease": {"type": "string", "minLength": 1},
        "location": {"type": ["string", "null"]},
        "severity": {"type": ["string", "null"]},
        "uncertainty": {"enum": ["certain", "probable", "uncertain"]},
    }
    good = {"entities": [{"disease": "edema", "location": None, "severity": "mild", "uncertainty": "certain"}]}
    jsonschema.validate(good, ENTITY_SCHEMA)
    for bad in ({"entities": good["entities"][0]}, {"entities": [{**good["entities"][0], "uncertainty": "maybe"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, ENTITY_SCHEMA)
    subjective = SUBJECTIVE_SCHEMA["properties"]
    assert subjective["explanation"] == {"type": "string"} and list(subjective)[-1] == "explanation"
    assert all(v == {"type": "integer", "minimum": 0} for k, v in subjective.items() if k != "explanation")
