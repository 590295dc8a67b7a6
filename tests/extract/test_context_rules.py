"""ConText scope rules of srrg.extract.context, one sentence per rule of its docstring (and
docs/extraction.md): how far pre- and post-triggers reach, which trigger wins when several reach a
mention, hypothetical contexts, and hedges that a negation cancels only within its own clause."""

from __future__ import annotations

import pytest
from extract_helpers import assertion

from srrg.extract import extract


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        # a post-trigger reaches backwards only up to a comma or "with"
        ("Atelectasis, pneumonia unlikely.", "atelectasis", 3),
        ("Atelectasis, pneumonia unlikely.", "pneumonia", "negative"),
        ("Cardiomegaly with edema is not seen.", "cardiomegaly", 3),
        ("Cardiomegaly with edema is not seen.", "edema", "negative"),
        ("There is effusion, pneumonia cannot be excluded.", "pleural effusion", 3),
        ("There is effusion, pneumonia cannot be excluded.", "pneumonia", 1),
        # a pre-trigger reaches forwards over commas, not over a termination or a sentence end
        ("No pneumonia or effusion is seen.", "pleural effusion", "negative"),
        ("Pneumothorax is not seen but there is effusion.", "pleural effusion", 3),
        ("No pneumothorax. Effusion.", "pleural effusion", 3),
        # the nearest trigger wins; at equal distance the pre-trigger
        ("No effusion, possible pneumonia.", "pneumonia", 2),
        ("No new opacity, pneumonia cannot be excluded.", "pneumonia", 1),
        ("Possible effusion is not seen.", "pleural effusion", 2),
        # a trigger that also reaches backwards reaches forwards only within its phrase
        ("Effusion resolved, atelectasis persists.", "pleural effusion", "negative"),
        ("Effusion resolved, atelectasis persists.", "atelectasis", 3),
        # a hypothetical context in the clause wins over a nearer trigger, across "or" too
        ("Follow-up to evaluate for resolution of the pneumonia.", "pneumonia", None),
        ("Evaluate for pneumonia or effusion.", "pleural effusion", None),
        ("Evaluate for pneumonia or possible effusion.", "pleural effusion", None),
        # a hedge is cancelled by a negation of its own clause only, not by an earlier hedge
        ("No opacity to suggest pneumonia.", "pneumonia", "negative"),
        ("Questionable opacity to suggest pneumonia.", "pneumonia", 2),
        ("Questionable opacity to suggest pneumonia.", "lung opacity", 1),
        ("No effusion, opacity to suggest pneumonia.", "pneumonia", 2),
        # a normal statement rules its finding out when stated, says nothing when negated
        ("Heart size is normal.", "cardiomegaly", "negative"),
        ("Heart size is not normal.", "cardiomegaly", None),
        ("Heart size might be normal.", "cardiomegaly", None),  # uncertain: says nothing
    ],
)
def test_scope_rules(text, name, expected):
    assert assertion(text, name) == expected


@pytest.mark.parametrize(
    "other",
    [
        "Evaluate for pneumonia.",
        "Follow-up to evaluate for resolution of the pneumonia.",
        "Evaluate for pneumonia or possible effusion.",
        "Heart size is not normal.",
    ],
)
def test_an_ignored_mention_leaves_the_rest_of_the_report_alone(other):
    assert extract(f"Cardiomegaly. {other}")["positive"] == [
        {"name": "cardiomegaly", "probability": 3, "level": None, "location": None}
    ]
