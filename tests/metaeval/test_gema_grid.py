"""GEMA's backbone grid (srrg.metaeval.gema_tables.run_gema_grid, `srrg gema-grid`): one row per
judge model, both error targets, each row equal to that model's own GEMA Tables 1-2; bad cells
refused in one line."""

from __future__ import annotations

import polars as pl
import pytest
from metaeval_helpers import radpref_prepared

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metaeval.gema_tables import run_gema_grid
from srrg.metaeval.grid import grid_cell_options, prompt_columns, prompt_metric
from srrg.settings.metaeval import MetaevalConfig

GEMA_A = [0.1, 0.5, 0.3, 0.2, 0.9, 0.15, 0.4, 0.35]
GEMA_B = [0.6, 0.2, 0.5, 0.4, 0.8, 0.1, 0.2, 0.7]


def _cells(tmp_path):
    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "pairs.parquet")["pair_id"].to_list()
    cells = []
    for model, values in (("judge_a", GEMA_A), ("judge_b", GEMA_B)):
        path = tmp_path / f"{model}.parquet"
        pl.DataFrame({"study_id": ids, "gema": values, "gema_obj": values}).write_parquet(path)
        cells.append((model, str(path)))
    return prep, cells


def test_rows_are_each_backbones_own_tables(tmp_path):
    """Bugs caught: a backbone's row taken from another model's scores, a target missing, a
    sub-score column (gema_obj) in the grid, a model's own tables not written."""
    prep, cells = _cells(tmp_path)
    cfg = MetaevalConfig(n_boot=0)
    out = tmp_path / "grid"
    grid = run_gema_grid(cells, str(prep / "ratings.parquet"), str(prep / "pairs.parquet"), cfg, out)
    assert grid["model"].unique(maintain_order=True).to_list() == ["judge_a", "judge_b"]
    assert set(grid["target"]) == {"errors_significant", "errors_insignificant"}
    for model, _ in cells:
        for target in ("errors_significant", "errors_insignificant"):
            own = pl.read_csv(out / model / target / "correlations.csv")
            assert set(own["metric"]) - {"Radiologists (leave-one-out)"} == {"gema"}
            for method in ("kendall", "spearman"):
                want = own.filter((pl.col("metric") == "gema") & (pl.col("method") == method))["value"].item()
                got = grid.filter(
                    (pl.col("model") == model) & (pl.col("target") == target) & (pl.col("method") == method)
                )["value"].item()
                assert got == pytest.approx(want, abs=1e-12)
    md = (out / "gema_grid.md").read_text()
    assert "| Judge model | Significant τb | p | Significant ρ | p | Insignificant τb | p | Insignificant ρ | p |" in md
    assert md.count("| judge_a |") == 1 and md.count("| judge_b |") == 1
    assert (out / "gema_grid.tex").read_text().startswith("\\begin")


def test_bad_cells_are_refused(tmp_path):
    """Bugs caught: a model name that escapes the output folder, one model given twice, a file
    without the gema column read as zero correlation."""
    prep, cells = _cells(tmp_path)
    args = (str(prep / "ratings.parquet"), None, MetaevalConfig(n_boot=0), tmp_path / "out")
    with pytest.raises(UserError, match="letters, digits"):
        run_gema_grid([("../x", cells[0][1])], *args)
    with pytest.raises(UserError, match="given twice"):
        run_gema_grid([cells[0], ("judge_a", cells[1][1])], *args)
    other = tmp_path / "other.parquet"
    pl.DataFrame({"study_id": ["a"], "vert": [0.5]}).write_parquet(other)
    with pytest.raises(UserError, match="lacks column 'gema'"):
        run_gema_grid([("judge_a", str(other))], *args)


def test_gema_is_a_grid_prompt():
    """Bug caught: the grid cell of GEMA asking VERT (or VERT's variant option reaching GEMA)."""
    assert prompt_columns("gema") == (("GEMA", "gema"),) and prompt_metric("gema") == "gema"
    config = {"cache_dir": "c", "judge": {"llm": {}, "options": {"gema": {"alpha": 0.5}}, "max_tokens": None},
              "metaeval": {"grid": {"models": {"m": {"model": "judge-m"}}}}}  # fmt: skip
    assert grid_cell_options(config, "m", "gema") == {
        "gema": {"alpha": 0.5, "llm": {"cache_dir": "c/llm", "model": "judge-m"}}
    }


def test_cli_prints_the_grid_shape(tmp_path, capsys):
    """Bug caught: the command writing nothing or not reaching run_gema_grid."""
    prep, cells = _cells(tmp_path)
    argv = ["gema-grid", "--ratings", str(prep / "ratings.parquet"), "--out", str(tmp_path / "o")]
    for model, path in cells:
        argv += ["--cell", model, path]
    assert srrg_main([*argv, "--config", '{"n_boot": 0}']) in (0, None)
    assert "2 judge backbones x 2 error targets" in capsys.readouterr().out
    assert (tmp_path / "o" / "gema_grid.csv").exists()
