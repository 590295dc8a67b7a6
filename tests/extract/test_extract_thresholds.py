"""Both sides of every numeric threshold of the extraction rules (docs/extraction.md).

A threshold tested on one side only lets an off-by-one (`>=` for `>`, a limit plus one) pass: each
test below puts one case at the limit and one just past it.
"""

from __future__ import annotations

import pytest
from extract_helpers import assertion

from srrg.extract import extract_detailed
from srrg.extract.mentions import MAX_PAIR_GAP
from srrg.extract.pipeline import MAX_SENTENCE_TOKENS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Heart size is normal.", "negative"),  # stated (probability 3): rules the finding out
        ("Heart size is probably normal.", "negative"),  # hedge level 2: still rules it out
        ("Heart size might be normal.", None),  # hedge level 1: says nothing
        ("Heart size is not normal.", None),  # a negated normal statement says nothing either
    ],
)
def test_normal_statement_rules_out_from_hedge_level_two(text, expected):
    assert assertion(text, "cardiomegaly") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Pneumonia.", 3), ("Probable pneumonia.", 2), ("Pneumonia might be present.", 1), ("Might be pneumonia.", 1)],
)
def test_each_hedge_level_gives_its_probability(text, expected):
    assert assertion(text, "pneumonia") == expected


def test_subject_and_state_pair_up_to_the_gap_limit():
    fillers = ["a", "b", "c", "d", "e", "f", "g", "h"]
    at_limit = f"The heart {' '.join(fillers[:MAX_PAIR_GAP])} enlarged."
    past_limit = f"The heart {' '.join(fillers[: MAX_PAIR_GAP + 1])} enlarged."
    assert assertion(at_limit, "cardiomegaly") == 3
    assert assertion(past_limit, "cardiomegaly") is None


def test_a_sentence_is_cut_only_past_the_token_limit():
    # "Effusion" + n words + "pneumothorax" + "." is n + 3 tokens
    at_limit = "Effusion " + "word " * (MAX_SENTENCE_TOKENS - 3) + "pneumothorax."
    past_limit = "Effusion " + "word " * (MAX_SENTENCE_TOKENS - 2) + "pneumothorax."
    kept, cut = extract_detailed([at_limit, past_limit])
    assert kept.status == "ok"
    assert cut.status == "long_sentence"
    # a cut sentence still reports what each piece states
    assert {f["name"] for f in cut.to_dict()["positive"]} == {"pleural effusion", "pneumothorax"}
