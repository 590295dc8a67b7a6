"""VERT's grid axes beyond model x prompt (srrg.metaeval.grid): thinking levels as rows for models
that take reasoning_effort, and the cross-model ensemble rows (mean of z-scores, least squares)
evaluated on the held-out pairs only."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from metaeval_helpers import radpref_prepared
from scipy import stats

from srrg.errors import UserError
from srrg.metaeval.ensembles import split_mask
from srrg.metaeval.grid import ENSEMBLE_ROWS, cross_model_ensembles, grid_cell_options, grid_rows, run_vert_grid
from srrg.metaeval.readers.common import human_scores
from srrg.settings.metaeval import MetaevalConfig


def config(models, thinking=()):
    return {"cache_dir": "c", "judge": {"llm": {}, "options": {}, "max_tokens": None},
            "metaeval": {"grid": {"models": models, "thinking": list(thinking)}}}  # fmt: skip


def test_thinking_levels_are_rows_of_reasoning_models_only():
    """Bugs caught: levels given to a model that rejects reasoning_effort, a level's row asking
    without its reasoning_effort, the explicit `reasoning: true` of a non-o-series name ignored,
    a row name colliding with a configured model."""
    models = {"gpt": {"model": "gpt-4o"}, "o3": {"model": "openai/o3-mini"}, "qwq": {"model": "qwq", "reasoning": True}}
    rows = grid_rows(config(models, ["low", "high"]))
    assert rows == {"gpt": ("gpt", None), "o3.low": ("o3", "low"), "o3.high": ("o3", "high"),
                    "qwq.low": ("qwq", "low"), "qwq.high": ("qwq", "high")}  # fmt: skip
    cfg = config(models, ["low", "high"])
    assert grid_cell_options(cfg, "o3.high", "direct")["vert"]["llm"] == {
        "cache_dir": "c/llm", "model": "openai/o3-mini", "reasoning_effort": "high"
    }  # fmt: skip
    assert "reasoning_effort" not in grid_cell_options(cfg, "gpt", "green")["green"]["llm"]
    assert "reasoning_effort" not in grid_cell_options(cfg, "o3", "gema")["gema"]["llm"]  # GEMA: the model's default
    assert grid_rows(config(models)) == {m: (m, None) for m in models}  # no axis: one row per model
    with pytest.raises(UserError, match="also a model's name"):
        grid_rows(config({"o3": {"model": "o3"}, "o3.low": {"model": "gpt-4o"}}, ["low"]))


def test_ensemble_rows_by_hand(tmp_path):
    """Bugs caught: the ensemble scored on the pairs it was fitted on, GREEN-EC not negated before
    averaging, the error-count target not negated (sign flipped), a column one model has ensembled."""
    prep = radpref_prepared(tmp_path)
    ratings = pl.read_parquet(prep / "ratings.parquet")
    human = dict(human_scores(ratings, "errors_significant")[0].iter_rows())
    ids = sorted(human)
    rng = np.random.default_rng(0)
    a, b = rng.random(len(ids)), rng.random(len(ids))
    frames = [("m1", pl.DataFrame({"study_id": ids, "GREEN-EC": a, "direct": a})),
              ("m2", pl.DataFrame({"study_id": ids, "GREEN-EC": b}))]  # fmt: skip
    cfg = MetaevalConfig(human_target="errors_significant", test_fraction=0.5, ensemble_seed=3)
    rows, source = cross_model_ensembles(frames, ["GREEN-EC", "direct"], ratings, cfg)
    assert source == "held_out"  # RadPref publishes no split
    assert set(rows["column"]) == {"GREEN-EC"} and set(rows["model"]) == set(ENSEMBLE_ROWS)
    mask = split_mask(ids, 0.5, 3)
    y = -np.array([human[i] for i in ids])
    x = -np.column_stack([a, b])
    z = (x[mask] - x[mask].mean(axis=0)) / x[mask].std(axis=0)
    mean = rows.filter((pl.col("model") == ENSEMBLE_ROWS[0]) & (pl.col("method") == "kendall")).row(0, named=True)
    assert mean["value"] == pytest.approx(stats.kendalltau(z.mean(axis=1), y[mask])[0], abs=1e-12)
    assert mean["n"] == mask.sum() and mean["n_train"] == 0
    design = np.column_stack([np.ones((~mask).sum()), x[~mask]])
    coef = np.linalg.lstsq(design, y[~mask], rcond=None)[0]
    fitted = coef[0] + x[mask] @ coef[1:]
    ls = rows.filter((pl.col("model") == ENSEMBLE_ROWS[1]) & (pl.col("method") == "spearman")).row(0, named=True)
    assert ls["value"] == pytest.approx(stats.spearmanr(fitted, y[mask])[0], abs=1e-12)
    assert ls["n_train"] == (~mask).sum()


def test_the_grid_adds_ensemble_rows_only_when_asked(tmp_path):
    """Bug caught: ensemble rows written by default (changing every existing grid) or missing from
    the markdown when asked."""
    prep = radpref_prepared(tmp_path)
    rating = dict(human_scores(pl.read_parquet(prep / "ratings.parquet"), "rating")[0].iter_rows())
    ids = list(rating)
    cells = []
    for k, name in enumerate(("m1", "m2")):
        pl.DataFrame({"study_id": ids, "vert": [rating[i] + k * (j % 2) for j, i in enumerate(ids)]}).write_parquet(
            tmp_path / f"{name}.parquet"
        )
        cells.append((name, "direct", str(tmp_path / f"{name}.parquet")))
    args = (str(prep / "ratings.parquet"), str(prep / "pairs.parquet"), MetaevalConfig(n_boot=0))
    plain = run_vert_grid(cells, *args, tmp_path / "g1")
    assert set(plain["model"]) == {"m1", "m2"}
    grid = run_vert_grid(cells, *args, tmp_path / "g2", ensembles=True)
    assert set(grid["model"]) == {"m1", "m2", *ENSEMBLE_ROWS}
    md = (tmp_path / "g2" / "vert_grid.md").read_text()
    assert all(md.count(f"| {name} |") == 2 for name in ENSEMBLE_ROWS) and "held-out pairs only" in md
