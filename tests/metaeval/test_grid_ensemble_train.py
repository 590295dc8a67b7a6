"""VERT's cross-model ensembles fitted on a stated number of training instances (metaeval.grid.
ensemble_train, the paper's 500) and evaluated on the rating set's published test split: the
least-squares fit sees exactly that many pairs, all of the training file; a set with fewer uses
all and the caption says so."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from judge_train_helpers import rate_eval_folder

from srrg.cli import main as srrg_main
from srrg.metaeval import ensembles
from srrg.metaeval.ensembles import first_n
from srrg.metaeval.grid import ENSEMBLE_ROWS, run_vert_grid
from srrg.settings.metaeval import MetaevalConfig


@pytest.fixture
def rate_grid(tmp_path):
    """metaeval-prepare over a RaTE-Eval folder (20 training pairs, 6 test pairs) and two models'
    `vert` scores that name their pair: a training pair scores below 1, a test pair 10 or more."""
    prep = tmp_path / "prep"
    folder = rate_eval_folder(tmp_path / "data", n_train_cases=10, n_test_cases=3, shared=False)
    argv = ["metaeval-prepare", "--adapter", "rate_eval", "--data", str(folder), "--out-dir", str(prep)]
    assert srrg_main(argv) == 0
    ids = pl.read_parquet(prep / "pairs.parquet")["pair_id"].to_list()
    code = {p: (10.0 if p.startswith("rate_test") else 0.0) + int(p.split(":")[1]) / 100 for p in ids}
    cells = []
    for k, name in enumerate(("m1", "m2")):
        scores = [code[p] + (k * 0.003 * (j % 3)) for j, p in enumerate(ids)]
        pl.DataFrame({"study_id": ids, "vert": scores}).write_parquet(tmp_path / f"{name}.parquet")
        cells.append((name, "direct", str(tmp_path / f"{name}.parquet")))
    return prep, cells, ids


def test_pairs_parquet_carries_the_published_split(rate_grid):
    """Bug caught: the published split lost between the reader and the grid."""
    prep, _, _ = rate_grid
    split = dict(pl.read_parquet(prep / "pairs.parquet").select("pair_id", "split").iter_rows())
    assert sum(s == "train" for s in split.values()) == 20 and sum(s == "test" for s in split.values()) == 6


def test_the_fit_uses_exactly_n_training_pairs(rate_grid, tmp_path, monkeypatch):
    """Bugs caught: more or fewer pairs fitted than stated, a test pair in the fit, the ensemble
    scored on other pairs than the published test split, a short set not said in the caption."""
    prep, cells, ids = rate_grid
    fitted: list[np.ndarray] = []
    real = ensembles.fit_linear
    monkeypatch.setattr(ensembles, "fit_linear", lambda x, y: fitted.append(x.copy()) or real(x, y))
    cfg = MetaevalConfig(n_boot=0, ensemble_seed=4)
    args = (str(prep / "ratings.parquet"), str(prep / "pairs.parquet"), cfg)
    grid = run_vert_grid(cells, *args, tmp_path / "g5", ensembles=True, ensemble_train=5)
    assert len(fitted) == 1 and fitted[0].shape == (5, 2) and (fitted[0][:, 0] < 1).all()  # 5 training pairs
    ordered = sorted(ids)  # the grid ranks the pairs both models scored, in id order
    pool = np.array([p.startswith("rate_train") for p in ordered])
    chosen = {ordered[i] for i in np.flatnonzero(first_n(ordered, pool, 5, 4))}
    assert {round(v * 100) for v in fitted[0][:, 0]} == {int(p.split(":")[1]) for p in chosen}
    rows = grid.filter(pl.col("model").is_in(ENSEMBLE_ROWS) & (pl.col("method") == "kendall"))
    assert rows["n"].to_list() == [6, 6]  # the published test file's pairs
    assert rows.filter(pl.col("model") == ENSEMBLE_ROWS[1])["n_train"].item() == 5
    md = (tmp_path / "g5" / "vert_grid.md").read_text()
    assert "fitted on 5 training instances of the rating set's published training split" in md
    assert "6 pairs of its published test split" in md and "Fewer training instances" not in md
    fitted.clear()
    run_vert_grid(cells, *args, tmp_path / "g500", ensembles=True, ensemble_train=500)
    assert fitted[0].shape == (20, 2)  # all 20 there are
    assert "Fewer training instances than the 500 asked" in (tmp_path / "g500" / "vert_grid.md").read_text()
