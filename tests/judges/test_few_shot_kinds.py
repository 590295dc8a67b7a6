"""Few-shot judging (srrg.metrics.judges.few_shot), the kinds issue 53 found missing: a non-default
split, each row filter on its own, the examples block written exactly, the overlap check through
plain spelling. Each test's docstring names the bug it catches."""

from __future__ import annotations

import polars as pl
import pytest

from srrg.errors import UserError
from srrg.metrics.judges.few_shot import Shot, draw_shots, refuse_overlap, shots_block


@pytest.fixture
def source(tmp_path) -> str:
    """Six rows: two usable train rows (t1, t2), one usable validate row (v1), and train rows that
    each fail one filter: status not ok (t3), no target (t4), a target without a score (t5)."""
    rows = [
        ("t2", "train", "ok", "[Score]:\n0.20"),
        ("v1", "validate", "ok", "[Score]:\n0.90"),
        ("t1", "train", "ok", "[Score]:\n0.10"),
        ("t3", "train", "unparseable", "[Score]:\n0.30"),
        ("t4", "train", "ok", None),
        ("t5", "train", "ok", "[Score]:\nno number"),
    ]
    frame = pl.DataFrame(
        {"pair_id": [r[0] for r in rows], "reference": [f"ref {r[0]}" for r in rows],
         "candidate": [f"cand {r[0]}" for r in rows], "target": [r[3] for r in rows],
         "split": [r[1] for r in rows], "status": [r[2] for r in rows]},
    )  # fmt: skip
    frame.write_parquet(tmp_path / "examples.parquet")
    draw_shots.cache_clear()
    return str(tmp_path)


def test_only_the_named_split_with_status_ok_and_a_score_is_drawn(source):
    """Bugs: the split filter dropped (a validate pair shown), the status filter dropped (a failed
    row shown), a row without a score shown with NaN; the explicit split argument ignored."""
    shots = draw_shots(source, 2, 0, "train")
    assert sorted(s.pair_id for s in shots) == ["t1", "t2"]
    assert {s.pair_id: s.score for s in shots} == {"t1": 0.1, "t2": 0.2}
    with pytest.raises(UserError, match=r"few_shot.k is 3 but .* has 2 scored 'train' example\(s\)"):
        draw_shots(source, 3, 0, "train")
    assert [s.pair_id for s in draw_shots(source, 1, 0, "validate")] == ["v1"]
    assert draw_shots(source, 1, 0, "validate")[0] == Shot("v1", "ref v1", "cand v1", 0.9)


def test_the_draw_depends_on_the_seed_not_the_file_order(source, tmp_path):
    """Bug: shots drawn in the file's row order (two copies of one table in another order give
    other shots) or with the seed ignored."""
    first = [draw_shots(source, 1, seed, "train")[0].pair_id for seed in range(8)]
    assert set(first) == {"t1", "t2"}  # both reachable: the seed matters
    other = tmp_path / "other"
    other.mkdir()
    pl.read_parquet(tmp_path / "examples.parquet").reverse().write_parquet(other / "examples.parquet")
    assert [draw_shots(str(other), 1, seed, "train")[0].pair_id for seed in range(8)] == first


def test_shots_block_exactly():
    """Bugs: braces left in (read as template fields) or turned the wrong way, examples numbered
    from 0, the score not at 2 decimals, the block present without shots."""
    shots = [Shot("a", "Heart {normal}.", "Heart   fine.", 0.5), Shot("b", "R", "C", 1.0)]
    assert shots_block(shots, "chest X-ray") == (
        "Examples of chest X-ray report pairs with the score experts gave them:\n\n"
        "Example 1.\nReference report:\nHeart (normal).\n\nCandidate report:\nHeart fine.\n\nExpert score: 0.50\n\n"
        "Example 2.\nReference report:\nR\n\nCandidate report:\nC\n\nExpert score: 1.00\n\n"
        "Now grade the following pair.\n\n"
    )
    assert shots_block([], "chest X-ray") == ""


def test_a_scored_pair_among_the_shots_is_refused_through_plain_spelling():
    """Bugs: the overlap compared raw texts (a shot re-cased or re-spaced slips through), or only the
    reference (a different candidate of the same reference refused)."""
    shots = [Shot("s1", "No effusion.", "Small effusion.", 0.4)]
    with pytest.raises(UserError, match="pair 1 being scored is few-shot example s1"):
        refuse_overlap(shots, ["x", "NO  effusion."], ["y", "small EFFUSION."])
    refuse_overlap(shots, ["No effusion."], ["Large effusion."])  # same reference, other candidate: fine
    refuse_overlap(shots, [None], [None])
