"""The packaged vocabulary: required names, consistency, loaders."""

from __future__ import annotations

import pytest

from srrg import vocab
from srrg.extract.mentions import HEDGE, NEGATION, phrase_table
from srrg.report import canonical_name
from srrg.settings.extract import SECTION_NAMES, ExtractConfig
from srrg.text.sections import PREAMBLE

DEFAULT = ExtractConfig()  # the conventions the extractor uses unless configured
REQUIRED = [
    "atelectasis",
    "cardiomegaly",
    "pleural effusion",
    "infiltration",
    "mass",
    "nodule",
    "pneumonia",
    "pneumothorax",
    "consolidation",
    "edema",
    "emphysema",
    "fibrosis",
    "pleural thickening",
    "hernia",
    "lung opacity",
    "enlarged cardiomediastinum",
    "fracture",
    "lung lesion",
    "granuloma",
    "calcification",
    "scoliosis",
    "tortuous aorta",
    "blunting of the costophrenic angle",
    "hyperinflation",
    "scarring",
    "pulmonary vascular congestion",
]


def test_required_canonical_names_and_size() -> None:
    names = vocab.findings()
    assert set(REQUIRED) <= set(names)
    assert len(names) >= 40
    assert all(len(forms) >= 1 and forms[0] == name for name, forms in names.items())
    assert sum(len(f) > 1 for f in names.values()) >= 40  # at least 40 findings with synonyms


def test_synonym_map_feeds_canonical_name() -> None:
    syn = vocab.synonym_map()
    assert syn["effusions"] == "pleural effusion"
    assert syn["cardiomegaly"] == "cardiomegaly"
    assert syn["calcified granuloma"] == "granuloma"
    assert all(k == k.lower().strip() for k in syn)
    assert canonical_name("Hiatal Hernia") == "hernia"
    assert canonical_name("something new") == "something new"  # open vocabulary


def test_hedges_and_triggers() -> None:
    ctx = vocab.context_triggers()
    assert ctx.hedge_pre["likely"] == 2 and ctx.hedge_pre["possible"] == 2 and ctx.hedge_pre["may"] == 2
    assert ctx.hedge_pre["might"] == 1 and ctx.hedge_pre["questionable"] == 1
    assert ctx.hedge_post["cannot be excluded"] == 1
    assert "no" in ctx.negation_pre and "without" in ctx.negation_pre  # YAML booleans are quoted
    assert "no longer seen" in ctx.negation_post and "resolved" in ctx.negation_post
    assert "unlikely" in ctx.negation_post and "no change in" in ctx.pseudo
    assert "but" in ctx.termination


def test_phrase_table_has_no_conflicts_and_roles() -> None:
    table = phrase_table(DEFAULT.nodular_opacity, DEFAULT.versus_probability)  # raises VocabularyConflict if ambiguous
    assert table["no"].kind == NEGATION and table["no"].pre
    assert table["versus"].kind == HEDGE and table["versus"].pre and table["versus"].post
    assert table["aorta"].location  # a composition subject that also names a place
    assert table["mildly"].value == "mild"


def test_severity_locations_sections() -> None:
    sev = vocab.severity_map()
    assert sev["mildly"] == "mild" and sev["mild-to-moderate"] == "mild to moderate"
    words = vocab.location_words()
    assert "left" in words.specific and "lung" in words.generic and "of" in words.joiners
    headers = vocab.section_headers()
    assert headers["findings"] == "findings" and headers["conclusion"] == "impression"


def test_the_settings_section_names_are_the_vocabularys() -> None:
    """srrg.settings.extract writes SECTION_NAMES out (settings import no data files): they are
    the canonical sections of sections.yaml, in its order, and the text before any header."""
    assert SECTION_NAMES == (*dict.fromkeys(vocab.section_headers().values()), PREAMBLE)


def test_non_string_phrase_is_an_error() -> None:
    with pytest.raises(vocab.VocabularyError, match="quote"):
        vocab._phrases([False], "test")


def test_normals_compounds_sizes_and_hedged_levels() -> None:
    normals = vocab.normals()
    assert "normal" in normals.verdicts and "within normal limits" in normals.verdicts
    assert normals.subjects["heart size"] == {"cardiomegaly"}
    assert normals.subjects["lungs"] == {"lung opacity", "consolidation"}
    assert vocab.compounds()["fibronodular"] == ("fibrosis", "nodule")
    assert "cm" in vocab.size_words().units and "x" in vocab.size_words().by
    assert vocab.hedged_levels() == {"borderline"}
    assert "nodular opacity" in vocab.nodular_opacity_forms() and "nodule" not in vocab.nodular_opacity_forms()
    table = phrase_table(DEFAULT.nodular_opacity, DEFAULT.versus_probability)
    assert table["within normal limits"].kind == NEGATION and table["within normal limits"].verdict
    assert table["heart size"].rules_out == {"cardiomegaly"}


def test_unknown_finding_in_a_normal_statement_is_an_error() -> None:
    with pytest.raises(vocab.VocabularyError, match="unknown findings"):
        vocab._known(["no such finding"], "findings.yaml:normals")
