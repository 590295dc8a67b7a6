"""Curated few-shot sets (VERT's hand-chosen examples): few_shot.source naming a file of chosen
examples (reference, candidate, score; pair_id optional) shows its first k rows in the file's
order, and reaches the VERT prompt and signature as drawn shots do."""

from __future__ import annotations

import json

import polars as pl
import pytest

from srrg.errors import UserError
from srrg.metrics.judges.few_shot import draw_shots
from srrg.metrics.judges.vert import Vert

ROWS = [
    {"reference": "Small left effusion.", "candidate": "Left pleural effusion, small.", "score": 0.9},
    {"reference": "No acute findings.", "candidate": "Large right pneumothorax.", "score": 0.0},
    {"reference": "Mild cardiomegaly.", "candidate": "Heart size is normal.", "score": 0.4},
]


def test_curated_csv_keeps_the_curators_order(tmp_path):
    """Bugs caught: a curated set shuffled or sorted (the seed must not matter), rows beyond k
    shown, ids not the file's own."""
    path = tmp_path / "chosen.csv"
    pl.DataFrame(ROWS).write_csv(path)
    shots = draw_shots(str(path), 2, 7, "train")
    assert [(s.pair_id, s.reference, s.score) for s in shots] == [
        ("curated:0", "Small left effusion.", 0.9), ("curated:1", "No acute findings.", 0.0)
    ]  # fmt: skip
    assert draw_shots(str(path), 2, 0, "test") == shots  # neither seed nor split applies
    jsonl = tmp_path / "chosen.jsonl"
    jsonl.write_text("".join(json.dumps({"pair_id": f"ex{i}", **r}) + "\n" for i, r in enumerate(ROWS)))
    assert [s.pair_id for s in draw_shots(str(jsonl), 3, 0, "train")] == ["ex0", "ex1", "ex2"]


@pytest.mark.parametrize(
    ("rows", "k", "message"),
    [(ROWS, 4, "has 3 example"), ([{**ROWS[0], "score": 4.5}], 1, "row 1: score must be a number in"),
     ([{**ROWS[0], "candidate": " "}], 1, "row 1: an empty reference or candidate"),
     ([{"reference": "a", "candidate": "b"}], 1, "or a curated set")],
)  # fmt: skip
def test_bad_curated_sets_are_one_line_errors(tmp_path, rows, k, message):
    """Bugs caught: a score on the rating scale (not [0, 1]) shown as if scaled, an empty example,
    a file without scores read as judge-train-prepare's examples."""
    path = tmp_path / "chosen.csv"
    pl.DataFrame(rows).write_csv(path)
    draw_shots.cache_clear()
    with pytest.raises(UserError, match=message):
        draw_shots(str(path), k, 0, "train")


def test_curated_shots_reach_the_prompt_and_signature(tmp_path):
    """Bug caught: a curated set read but not shown, or the signature unchanged by it."""
    path = tmp_path / "chosen.csv"
    pl.DataFrame(ROWS).write_csv(path)
    few = Vert(few_shot={"k": 2, "source": str(path)})
    assert "|shots:curated=0+curated=1|" in few.signature("vert")
    from srrg.metrics.judges.vert import vert_requests

    text = json.dumps([m for r in vert_requests(["r"], ["h"], few.cfg) for m in r.messages])
    assert "Small left effusion." in text and "Expert score: 0.90" in text and "Mild cardiomegaly" not in text
