"""Report parsing and canonicalization rules that mutation testing found unchecked (docs/report.md:
one entry per finding, the most certain mention wins, among equally certain ones the one that says
more; positive wins over negative; sections merge by the same rules; sizes and long text kept)."""

from __future__ import annotations

import json

from srrg.report import REPAIRED, VALID, Finding, StructuredReport, canonicalize, merge, parse_report, text_for_nlg

SYN = {"effusion": "pleural effusion", "pleural effusion": "pleural effusion"}


def positive(*findings: Finding) -> tuple[Finding, ...]:
    return canonicalize(StructuredReport(findings), SYN).positive


def test_certainty_beats_detail():
    vague_detailed = Finding("edema", 1, "mild", "bilateral")
    certain_bare = Finding("edema", 3)
    assert positive(vague_detailed, certain_bare) == (certain_bare,)
    assert positive(certain_bare, vague_detailed) == (certain_bare,)


def test_a_missing_probability_ranks_below_every_stated_one():
    unknown_detailed = Finding("edema", None, "mild", "bilateral")
    uncertain_bare = Finding("edema", 1)
    assert positive(unknown_detailed, uncertain_bare) == (uncertain_bare,)
    assert positive(uncertain_bare, unknown_detailed) == (uncertain_bare,)


def test_among_equally_certain_mentions_a_level_alone_counts_as_detail():
    bare, with_level = Finding("edema", 2), Finding("edema", 2, "mild")
    assert positive(bare, with_level) == (with_level,)
    assert positive(with_level, bare) == (with_level,)
    with_both = Finding("edema", 2, "mild", "bilateral")
    assert positive(with_level, with_both) == (with_both,)


def test_ties_keep_the_first_mention():
    first, second = Finding("edema", 2, "mild"), Finding("edema", 2, "severe")
    assert positive(first, second) == (first,)


def test_merge_uses_the_given_synonyms_and_keeps_negatives():
    own = {"haziness": "opacity", "opacity": "opacity"}
    merged = merge(
        [
            StructuredReport((Finding("haziness", 2),), ("pneumothorax",)),
            StructuredReport((), ("Opacity", "pleural effusion")),
        ],
        own,
    )
    assert merged.positive == (Finding("opacity", 2),)
    assert merged.negative == ("pneumothorax", "pleural effusion")  # positive wins over negative


def test_structured_text_may_start_after_whitespace():
    assert text_for_nlg('  \n {"positive": [], "negative": ["edema"]}') == "no evidence of edema."
    assert text_for_nlg('no json {"foo": 1}') == 'no json {"foo": 1}'  # a JSON object, but no report


def test_a_measurement_is_kept_as_size():
    text = json.dumps(
        {
            "positive": [{"name": "nodule", "probability": 3, "level": None, "location": None, "size": "8 mm"}],
            "negative": [],
        }
    )
    report, status = parse_report(text, SYN)
    assert status == VALID and report.positive == (Finding("nodule", 3, None, None, "8 mm"),)
    assert json.loads(report.to_json())["positive"][0]["size"] == "8 mm"


def test_a_single_finding_object_is_wrapped_not_lost():
    one = {"name": "edema", "probability": 3, "level": None, "location": None}
    report, status = parse_report(json.dumps({"positive": one, "negative": []}), SYN)
    assert status == REPAIRED and report.positive == (Finding("edema", 3, None, None),)


def test_long_attribute_text_is_normalized_like_short_text():
    long_location = "in the  Left lower lobe " + "and beyond " * 40
    assert len(long_location) > 256
    text = json.dumps(
        {"positive": [{"name": "edema", "probability": 3, "level": None, "location": long_location}], "negative": []}
    )
    report, status = parse_report(text, SYN)
    assert status == REPAIRED
    assert report.positive[0].location == " ".join(long_location.split()).lower()


def test_json_keeps_non_ascii_text_readable():
    report = StructuredReport((Finding("edema", 3, None, "région basale"),), ())
    assert "région basale" in report.to_json()
