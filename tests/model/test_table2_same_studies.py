"""Table 2 compares a method's Structured-First and Sentence-Direct runs on the same test studies
(srrg.run_tables.check_same_studies, docs/model.md "Table 2")."""

from __future__ import annotations

import pytest

from srrg.errors import UserError
from srrg.run_tables import RunEntry, captions, check_same_studies

JSON = RunEntry("smollm2_json", "SmolLM2-135M", "json", "a.csv", "a.parquet")
SENT = RunEntry("smollm2_sentences", "SmolLM2-135M", "sentences", "b.csv", "b.parquet")
OTHER = RunEntry("base_json", "Transformer", "json", "c.csv", "c.parquet")


def test_same_studies_pass_and_other_methods_do_not_count() -> None:
    """Fails if runs of different methods (the baseline on 200 studies) were compared with each
    other, or if a pair on the same studies were refused."""
    same = frozenset({"s1", "s2"})
    check_same_studies(
        [JSON, SENT, OTHER],
        {
            "smollm2_json": {"scored_ids": same},
            "smollm2_sentences": {"scored_ids": same},
            "base_json": {"scored_ids": frozenset({"s1", "s2", "s3"})},
        },
    )


def test_a_pair_on_other_studies_is_refused_with_both_counts() -> None:
    """Fails if a Sentence-Direct row predicted on 4 studies stood beside a Structured-First row on
    50 (the demo's old infer settings) without a word, or if the message did not say how many."""
    results = {
        "smollm2_json": {"scored_ids": frozenset(f"s{i}" for i in range(50))},
        "smollm2_sentences": {"scored_ids": frozenset(f"s{i}" for i in range(4))},
    }
    with pytest.raises(UserError, match=r"SmolLM2-135M.*smollm2_json 50, smollm2_sentences 4"):
        check_same_studies([JSON, SENT], results)


def test_caption_says_same_studies_and_how_targets_are_scored() -> None:
    """Fails if Table 2's caption stopped saying that both targets are scored on the same studies
    and what text each target's NLG metrics read."""
    text = captions({}, references=False)["table2"]
    assert "same test studies" in text and "rendered as sentences" in text and "as written" in text
