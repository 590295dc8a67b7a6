"""The canonical fast path of parse_report, per-call parsing (parse_reports) and S-Score's prepared
sides give exactly what the general path gives."""

from __future__ import annotations

import json

import pytest

from srrg import report as R
from srrg.metrics.sscore import count_f1, score_pair, score_reports
from srrg.report import Finding, StructuredReport

CANONICAL = {
    "positive": [
        {"name": "pleural effusion", "probability": 2, "level": "small", "location": "right lung base"},
        {"name": "cardiomegaly", "probability": 3, "level": None, "location": None, "size": None},
        {"name": "nodule", "probability": 3, "level": None, "location": "left upper lobe", "size": "2 cm"},
    ],
    "negative": ["pneumothorax", "consolidation"],
}


def general(text: str) -> tuple[StructuredReport, str]:
    """The general path alone: from_obj + canonicalize, as parse_report decided before the fast path."""
    obj, strict = R.decode_json(text)
    report, exact = R.from_obj(obj)
    canon, changed = R._canonicalize(report, None)
    return canon, R.VALID if strict and exact and not changed else R.REPAIRED


def variant(path: tuple, value) -> str:
    obj = json.loads(json.dumps(CANONICAL))
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(obj)


def test_canonical_json_takes_the_fast_path():
    fast = R._canonical_report(json.dumps(CANONICAL))
    assert fast == StructuredReport(
        (
            Finding("pleural effusion", 2, "small", "right lung base"),
            Finding("cardiomegaly", 3),
            Finding("nodule", 3, None, "left upper lobe", "2 cm"),
        ),
        ("pneumothorax", "consolidation"),
    )
    assert R._parse(json.dumps(CANONICAL), None) == (fast, R.VALID) == general(json.dumps(CANONICAL))


@pytest.mark.parametrize(
    "path, value",
    [
        (("positive", 0, "probability"), 2.0),  # coerced float
        (("positive", 0, "probability"), True),
        (("positive", 0, "probability"), "2"),
        (("positive", 0, "probability"), 4),  # out of range: dropped
        (("positive", 0, "name"), "Pleural Effusion"),  # not normalized
        (("positive", 0, "name"), "effusion"),  # a synonym
        (("positive", 0, "level"), "none"),
        (("positive", 0, "level"), ""),
        (("positive", 0, "level"), 5),
        (("positive", 0, "location"), "right  lung base"),
        (("positive", 0, "extra"), 1),  # unknown key
        (("positive", 1, "name"), "pleural effusion"),  # a duplicate positive
        (("negative", 1), "pleural effusion"),  # negative and positive at once
        (("negative", 1), "pneumothorax"),  # a duplicate negative
        (("negative", 1), {"name": "consolidation"}),
        (("negative",), "pneumothorax"),  # not a list
        (("positive", 0), ["pleural effusion"]),  # unhashable where a finding belongs
        (("positive", 0, "level"), ["small"]),
    ],
)
def test_anything_not_canonical_goes_the_general_way(path, value):
    text = variant(path, value)
    assert R._canonical_report(text) is None
    got = R._parse(text, None)
    assert got[1] == R.REPAIRED
    assert got == general(text)


def test_missing_level_key_is_still_valid_by_the_general_path():
    text = json.dumps({"positive": [{"name": "cardiomegaly", "probability": 3}], "negative": []})
    assert R._canonical_report(text) is None  # not to_dict()'s keys: the general path decides
    assert R._parse(text, None) == (StructuredReport((Finding("cardiomegaly", 3),), ()), R.VALID)


def test_parse_reports_parses_each_distinct_text_once(monkeypatch):
    texts = [json.dumps(CANONICAL), "free text", json.dumps(CANONICAL), None, variant(("negative", 1), "pneumothorax")]
    R.clear_parse_caches()
    got = R.parse_reports(texts)
    assert got == [R.parse_report(t) for t in texts]
    assert got[0][0] is got[2][0]
    calls = []
    monkeypatch.setattr(R, "PARSE_CACHE_SIZE", 2)  # more distinct texts than the cache: bypass it
    monkeypatch.setattr(R, "_parse", lambda text, synonyms: calls.append(text) or (R.EMPTY, R.UNPARSEABLE))
    R.clear_parse_caches()
    R.parse_reports(["a", "b", "c", "a"])
    assert calls == ["a", "b", "c"] and R._parse_default.cache_info().currsize == 0


def test_count_f1_by_hand():
    assert count_f1(0, 0, 0) == 1.0 and count_f1(2, 0, 0) == 0.0 and count_f1(0, 1, 0) == 0.0
    assert count_f1(2, 3, 1) == 2 * 1 / 5


def test_score_reports_with_shared_objects_equals_score_pair_bit_for_bit():
    a = StructuredReport(
        (Finding("pleural effusion", 2, "small", "right lung base"), Finding("cardiomegaly", 3)), ("pneumothorax",)
    )
    b = StructuredReport((Finding("pleural effusion", 3, "moderate", "right lower lobe"),), ("pneumothorax", "edema"))
    c = StructuredReport()
    refs, hyps = [a, a, b, c, a], [b, b, a, c, c]
    result = score_reports(refs, hyps)
    for i, (r, h) in enumerate(zip(refs, hyps)):
        for key, value in score_pair(r, h).items():
            got = result.per_report[key][i]
            assert got == value or (got != got and value != value), (i, key)
    # a, b: P_pos = 2*1/3, P_neg = 2*1/3; D = (1/3)(1 - 1/4) + (1/3)*0 + (1/3)*BLEU over 2 union names
    assert result.per_report["p_pos"][0] == 2 / 3 and result.per_report["p_neg"][0] == 2 / 3
    assert result.per_report["s_score"][3] == 1.0  # two empty reports agree
