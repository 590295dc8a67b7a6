"""GEMA's backbone grid (srrg.metaeval.gema_tables.run_gema_grid), a refusal checked exactly (issue 53's
kinds on this round's code): the message names the model given twice and only it."""

from __future__ import annotations

import pytest

from srrg.errors import UserError
from srrg.metaeval.gema_tables import run_gema_grid
from srrg.settings.metaeval import MetaevalConfig


def test_a_model_given_twice_is_named_alone(tmp_path):
    """Bug: the duplicate filter dropped, so the message lists every model (judge_b, given once,
    named as given twice); the refusal comes before any file is read."""
    cells = [("judge_a", "a.parquet"), ("judge_b", "b.parquet"), ("judge_a", "c.parquet"), ("judge_c", "d.parquet")]
    with pytest.raises(UserError) as err:
        run_gema_grid(cells, "ratings.parquet", None, MetaevalConfig(n_boot=0), tmp_path / "out")
    assert str(err.value) == "a judge model given twice: ['judge_a']"
    with pytest.raises(UserError, match=r"^no grid cell"):
        run_gema_grid([], "ratings.parquet", None, MetaevalConfig(n_boot=0), tmp_path / "out")
    assert not (tmp_path / "out").exists()
