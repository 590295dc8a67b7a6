"""VERT's over/under-estimation table (srrg.metaeval.over_under, written by the grid): judge minus
human count of clinically significant errors by the human count, hand-computed and on the RadPref
fixture against the raw counts."""

from __future__ import annotations

import polars as pl
import pytest
from metaeval_helpers import radpref_prepared

from srrg.metaeval.grid import run_vert_grid
from srrg.metaeval.over_under import human_bin, over_under_markdown, over_under_rows, over_under_table
from srrg.metaeval.readers.common import human_scores
from srrg.settings.metaeval import MetaevalConfig

NAN = float("nan")


def test_bins_round_half_up_and_pool_the_top():
    """Bugs caught: 0.5 rounded to even (0), 4 and more not pooled, fractional means truncated."""
    assert [human_bin(x) for x in (0.0, 0.49, 0.5, 1.5, 2.4, 3.5, 4.0, 9.0)] == ["0", "0", "1", "2", "2", "4+", "4+",
                                                                                 "4+"]  # fmt: skip


def test_rows_by_hand():
    """Bugs caught: human minus judge (sign flipped), a pair missing on one side (or NaN) counted,
    bins out of count order (4+ sorted as text), shares over the wrong denominator."""
    human = {"a": 0.0, "b": 0.0, "c": 1.0, "d": 5.0, "e": 2.0, "f": 1.0, "g": NAN}
    judge = {"a": 1.0, "b": 0.0, "c": 0.0, "d": 2.0, "f": 1.0, "g": 3.0}  # e: not judged
    rows = over_under_rows("m", judge, human)
    assert [(r["human_errors"], r["n"]) for r in rows] == [("0", 2), ("1", 2), ("4+", 1)]
    zero, one, top = rows
    assert zero["mean_difference"] == pytest.approx(0.5) and (zero["over"], zero["exact"], zero["under"]) == (
        0.5, 0.5, 0.0
    )  # fmt: skip
    assert one["mean_difference"] == pytest.approx(-0.5) and one["under"] == 0.5 and one["exact"] == 0.5
    assert top["mean_difference"] == pytest.approx(-3.0) and top["under"] == 1.0
    md = over_under_markdown(over_under_table(rows), "Cap.")
    assert "| m | 0 | 2 | +0.50 | 0.50 | 0.50 | 0.00 |" in md and "| m | 4+ | 1 | -3.00 | 0.00 | 0.00 | 1.00 |" in md


def test_the_grid_writes_the_table_from_green_ec(tmp_path):
    """Bug caught: the table built from another column than GREEN-EC, or from a rater instead of the
    raters' mean count; a score-only set (no GREEN prompt) writing a table anyway."""
    prep = radpref_prepared(tmp_path)
    ratings = pl.read_parquet(prep / "ratings.parquet")
    counts = dict(human_scores(ratings, "errors_significant")[0].iter_rows())
    ids = list(counts)
    ec = [float(k % 3) for k in range(len(ids))]
    green = pl.DataFrame({"study_id": ids, "green": [0.5] * len(ids), "green_ec": ec, "green_f1": [0.4] * len(ids)})
    green.write_parquet(tmp_path / "g.parquet")
    pl.DataFrame({"study_id": ids, "vert": [float(k) for k in range(len(ids))]}).write_parquet(tmp_path / "v.parquet")
    cells = [("m1", "green", str(tmp_path / "g.parquet")), ("m1", "direct", str(tmp_path / "v.parquet"))]
    out = tmp_path / "grid"
    run_vert_grid(cells, str(prep / "ratings.parquet"), str(prep / "pairs.parquet"), MetaevalConfig(n_boot=0), out)
    table = pl.read_csv(out / "over_under.csv", schema_overrides={"human_errors": pl.String})
    want = over_under_table(over_under_rows("m1", dict(zip(ids, ec)), counts))
    assert table.equals(want) and table["n"].sum() == len(ids)
    assert "| Judge model | Human errors |" in (out / "over_under.md").read_text()
    only_vert = tmp_path / "grid2"
    run_vert_grid(cells[1:], str(prep / "ratings.parquet"), None, MetaevalConfig(n_boot=0), only_vert)
    assert pl.read_csv(only_vert / "over_under.csv").height == 0
    assert "the grid ran no GREEN prompt" in (only_vert / "over_under.md").read_text()
