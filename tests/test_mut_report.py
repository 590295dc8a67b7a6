"""Canonicalization rules that mutation testing found unchecked (README "The structured report",
DESIGN §3: one entry per finding, the most certain mention wins, among equally certain ones the one
that says more; positive wins over negative; sections merge by the same rules)."""

from __future__ import annotations

from srrg.report import Finding, StructuredReport, canonicalize, merge, text_for_nlg

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
    merged = merge([StructuredReport((Finding("haziness", 2),), ("pneumothorax",)),
                    StructuredReport((), ("Opacity", "pleural effusion"))], own)
    assert merged.positive == (Finding("opacity", 2),)
    assert merged.negative == ("pneumothorax", "pleural effusion")  # positive wins over negative


def test_structured_text_may_start_after_whitespace():
    assert text_for_nlg('  \n {"positive": [], "negative": ["edema"]}') == "no evidence of edema."
    assert text_for_nlg('no json {"positive": []}') == 'no json {"positive": []}'
