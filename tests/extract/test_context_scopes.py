"""ConText scopes across list words ("and", "or") and commas, on sentences whose reading is plain;
each case is a rule of docs/extraction.md that the other scope tests leave open:

- a hedge that a negation cancels is cancelled across a list ("no effusion or opacity to suggest
  pneumonia": the negation reaches past "or" to the hedge);
- a trigger that also reaches backwards ("resolved") reaches forwards over a list under it: only a
  comma or a clause of its own stops it;
- a copula before a comma belongs to that earlier clause, not to a bare conjunct after "and";
- a "versus" differential after a comma keeps the certainty its own clause gives it;
- the conjunct before an "and" starts at the comma before it, so a clause ahead of that comma does
  not stop a post-trigger that governs the list ("..., effusion and pneumothorax have resolved").
"""

from __future__ import annotations

import pytest

from srrg.extract import extract


def assertions(text: str) -> dict[str, int | str]:
    """name -> probability of a positive finding, or "negative"."""
    r = extract(text)
    return {f["name"]: f["probability"] for f in r["positive"]} | {n: "negative" for n in r["negative"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the negation cancels the hedge across "or"/"and" in its own comma-free clause
        (
            "No effusion or opacity to suggest pneumonia.",
            {"pleural effusion": "negative", "lung opacity": "negative", "pneumonia": "negative"},
        ),
        (
            "No effusion and opacity to suggest pneumonia.",
            {"pleural effusion": "negative", "lung opacity": "negative", "pneumonia": "negative"},
        ),
        # a both-way trigger reaches forward over a list joined by "and"/"or"
        ("Resolved effusion and pneumothorax.", {"pleural effusion": "negative", "pneumothorax": "negative"}),
        ("Resolved effusion or pneumothorax.", {"pleural effusion": "negative", "pneumothorax": "negative"}),
        # "is" of the first clause makes no clause of "and pneumothorax"
        (
            "The heart is normal in size, no effusion and pneumothorax.",
            {"cardiomegaly": "negative", "pleural effusion": "negative", "pneumothorax": "negative"},
        ),
        (
            "There is no pleural effusion and pneumothorax.",
            {"pleural effusion": "negative", "pneumothorax": "negative"},
        ),
        # a differential after a comma: nothing before the comma reaches it
        ("Small effusion, atelectasis versus pneumonia.", {"pleural effusion": 3, "atelectasis": 3, "pneumonia": 3}),
        ("Small effusion and atelectasis versus pneumonia.", {"pleural effusion": 3, "atelectasis": 3, "pneumonia": 3}),
        # "the heart is enlarged" is a clause before the comma; the list after it shares "have resolved"
        (
            "The heart is enlarged, effusion and pneumothorax have resolved.",
            {"cardiomegaly": 3, "pleural effusion": "negative", "pneumothorax": "negative"},
        ),
        # "was" ends the clause before the comma: it is no copula of the conjunct "effusion"
        (
            "Heart size is as it was, effusion and pneumothorax have resolved.",
            {"pleural effusion": "negative", "pneumothorax": "negative"},
        ),
    ],
)
def test_scopes_across_lists_and_commas(text, expected):
    assert assertions(text) == expected
