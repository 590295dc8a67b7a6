"""The papers' meta-evaluation tables: VERT's simple-average ensemble (srrg.metaeval.ensembles),
GEMA Tables 1-2 with both error targets side by side (srrg.metaeval.gema_tables) and VERT's grid
of judge models x prompts (srrg.metaeval.grid), on hand-computed values and the RadPref fixture."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from metaeval_helpers import radpref_prepared
from paths import FIXTURES

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metaeval.ensembles import evaluate_mean_ensemble, zscores
from srrg.metaeval.grid import grid_cell_options, model_scores
from srrg.metaeval.readers.common import human_scores
from srrg.metaeval.tables import gema_targets_table

# --- simple-average ensemble ---------------------------------------------------------------------

A = [1.0, 2.0, 3.0, 4.0, 5.0]
B = [300.0, 100.0, 200.0, 0.0, 400.0]
HUMAN = [1.0, 2.0, 3.0, 4.0, 5.0]


def test_mean_ensemble_averages_z_scores_not_raw_values():
    """z(A) = [-1.414, -0.707, 0, 0.707, 1.414], z(B) = [0.707, -0.707, 0, -1.414, 1.414]; their
    mean [-0.354, -0.707, 0, -0.354, 1.414] against 1..5 has 7 concordant, 2 discordant pairs and
    one tie in the ensemble: tau-b = 5 / sqrt(9 * 10). Averaging the raw values (B's scale
    dominates: 150.5, 51, 101.5, 2, 202.5) gives 5 vs 5, tau 0 (the bug of a missing z-score)."""
    res = evaluate_mean_ensemble("e:mean", {"a": A, "b": B}, HUMAN, np.ones(5, dtype=bool))
    assert res.kendall == pytest.approx(5 / math.sqrt(90), abs=1e-12)
    assert (res.n_train, res.n_test) == (0, 5)
    assert res.weights == {"a": 0.5, "b": 0.5}


def test_mean_ensemble_reads_only_the_held_out_pairs():
    """Train-side pairs (mask False) with wild values must change neither the z-scores nor the
    correlation: the ensemble is fitted on nothing and scored where least squares is scored (bug:
    z-scoring over every pair)."""
    a, b, human = [*A, 1000.0, -1000.0], [*B, -5000.0, 9000.0], [*HUMAN, 0.0, 9.0]
    mask = np.array([True] * 5 + [False] * 2)
    res = evaluate_mean_ensemble("e:mean", {"a": a, "b": b}, human, mask)
    assert res.kendall == pytest.approx(5 / math.sqrt(90), abs=1e-12) and res.n_test == 5


def test_zscores_of_a_constant_column_are_zero():
    """A constant member cannot order pairs: its z-scores are 0, not NaN (bug: 0/0 makes every
    ensemble value NaN)."""
    z = zscores(np.array([[1.0, 7.0], [3.0, 7.0]]))
    assert z.tolist() == [[-1.0, 0.0], [1.0, 0.0]]


def test_correlate_reports_the_mean_ensemble_beside_least_squares(tmp_path):
    """metaeval-correlate's ensembles.csv holds <name>, <name>:mean and each member (bug: the mean
    row missing or fitted on the train pairs: n_train must be 0)."""
    prep = radpref_prepared(tmp_path)
    scores = oracle_scores(prep)
    cfg = '{"n_boot": 0, "ensembles": {"both": ["sig_oracle", "insig_oracle"]}, "test_fraction": 0.5}'
    args = ["metaeval-correlate", "--scores", str(scores), "--ratings", str(prep / "ratings.parquet")]
    assert srrg_main([*args, "--out", str(tmp_path / "r"), "--config", cfg]) == 0
    ens = pl.read_csv(tmp_path / "r" / "ensembles.csv")
    assert ens["name"].to_list() == ["both", "both:mean", "both:sig_oracle", "both:insig_oracle"]
    mean = ens.row(1, named=True)
    assert (
        mean["n_train"] == 0 and mean["n_test"] == 4 and mean["weights"] == '{"sig_oracle": 0.5, "insig_oracle": 0.5}'
    )


# --- GEMA Tables 1-2 -----------------------------------------------------------------------------


def corr(rows):
    return pl.DataFrame(
        [{"metric": m, "method": k, "value": v, "p_value": p} for m, k, v, p in rows],
        schema={"metric": pl.String, "method": pl.String, "value": pl.Float64, "p_value": pl.Float64},
    )


def test_gema_targets_table_puts_targets_side_by_side():
    """Per metric: the first target's tau, p, rho, p, then the second's; a metric only one target
    measured gets dashes in the other (bug: targets or methods swapped)."""
    sig = corr([("bleu_1", "kendall", 0.5, 0.01), ("bleu_1", "spearman", 0.6, 0.0004), ("gema", "kendall", 0.25, 0.2),
                ("gema", "spearman", 0.3, 0.5)])  # fmt: skip
    insig = corr([("bleu_1", "kendall", -0.125, 0.75), ("bleu_1", "spearman", -0.2, 0.9)])
    header, rows = gema_targets_table([("Significant", sig), ("Insignificant", insig)])
    assert header == ("Metric", "Significant τb", "p", "Significant ρ", "p", "Insignificant τb", "p", "Insignificant ρ",
                      "p")  # fmt: skip
    assert rows == [
        ["bleu_1", "0.500", "0.010", "0.600", "<0.001", "-0.125", "0.750", "-0.200", "0.900"],
        ["gema", "0.250", "0.200", "0.300", "0.500", "–", "–", "–", "–"],
    ]


def oracle_scores(prep, path=None):
    """Scores whose sig_oracle / insig_oracle are minus the mean human significant / insignificant
    error counts of each RadPref fixture pair: each agrees perfectly with its own target."""
    ratings = pl.read_parquet(prep / "ratings.parquet")
    sig, _ = human_scores(ratings, "errors_significant")
    insig, _ = human_scores(ratings, "errors_insignificant")
    frame = (
        sig.rename({"human": "sig"})
        .join(insig.rename({"human": "insig"}), on="pair_id")
        .select(pl.col("pair_id").alias("study_id"), (-pl.col("sig")).alias("sig_oracle"),
                (-pl.col("insig")).alias("insig_oracle"))
    )  # fmt: skip
    out = path or prep / "oracle.parquet"
    frame.write_parquet(out)
    return out


def test_metaeval_gema_correlates_each_metric_with_both_targets(tmp_path):
    """On the RadPref fixture (significant counts 0, 4/3, 2/3, 0, 0, 1, 1/2, 0; insignificant 1/3,
    2/3, 2/3, 0, 0, 0, 1/2, 0): sig_oracle has tau 1 with the significant target and insig_oracle
    with the insignificant one, and both cross cells are below 1 (bug: one target used for both
    columns, or the counts not negated); each target also keeps its own full tables."""
    prep = radpref_prepared(tmp_path)
    scores = oracle_scores(prep)
    out = tmp_path / "g"
    args = ["metaeval-gema", "--scores", str(scores), "--ratings", str(prep / "ratings.parquet")]
    assert (
        srrg_main([*args, "--pairs", str(prep / "pairs.parquet"), "--out", str(out), "--config", '{"n_boot": 0}']) == 0
    )
    table = pl.read_csv(out / "table_gema12.csv").rows_by_key("metric", named=True, unique=True)
    assert table["sig_oracle"]["errors_significant_kendall"] == 1.0
    assert table["insig_oracle"]["errors_insignificant_kendall"] == 1.0
    assert table["sig_oracle"]["errors_insignificant_kendall"] < 1.0
    assert table["insig_oracle"]["errors_significant_kendall"] < 1.0
    assert "| sig_oracle | 1.000 |" in (out / "table_gema12.md").read_text()
    for target in ("errors_significant", "errors_insignificant"):
        assert (out / target / "table_gema.md").is_file() and (out / target / "correlations.csv").is_file()


def test_metaeval_gema_refuses_a_rating_set_without_error_counts(tmp_path, capsys):
    """RaTE-Eval has one score per pair and no error counts: one line and exit 2, not two empty
    tables (bug: an error target silently read as no human score)."""
    prep = tmp_path / "rate"
    data = FIXTURES / "rating_layouts" / "rate_eval" / "Task2_paragraph_rate"
    assert srrg_main(["metaeval-prepare", "--adapter", "rate_eval", "--data", str(data), "--out-dir", str(prep)]) == 0
    ids = pl.read_parquet(prep / "pairs.parquet")["pair_id"]
    pl.DataFrame({"study_id": ids, "bleu_1": [float(i) for i in range(len(ids))]}).write_parquet(tmp_path / "s.parquet")
    args = ["metaeval-gema", "--scores", str(tmp_path / "s.parquet"), "--ratings", str(prep / "ratings.parquet")]
    assert srrg_main([*args, "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no error counts" in err[0]


# --- VERT's grid ---------------------------------------------------------------------------------


def cell(path, rating, **columns):
    """A per_report.parquet whose columns are functions of each pair's mean human rating."""
    ids = list(rating)
    pl.DataFrame({"study_id": ids, **{c: [f(rating[i]) for i in ids] for c, f in columns.items()}}).write_parquet(path)
    return str(path)


def test_vert_grid_lays_models_out_as_rows_and_prompts_as_columns(tmp_path):
    """Model `good`: GREEN, GREEN-F1 and the direct score rise with the rating, GREEN-EC falls
    (fewer errors: tau +1 once negated), the rubric score falls (tau -1). Model `flat`: GREEN-EC
    rises with the rating (tau -1), its direct score is constant (no coefficient: a dash). Bugs:
    GREEN-EC not negated, columns taken from the wrong prompt's file, rows mixed across models."""
    prep = radpref_prepared(tmp_path)
    rating = dict(human_scores(pl.read_parquet(prep / "ratings.parquet"), "rating")[0].iter_rows())
    up, down = (lambda r: r), (lambda r: -r)
    cells = [
        ("good", "green", cell(tmp_path / "g1.parquet", rating, green=up, green_ec=down, green_f1=up)),
        ("good", "direct", cell(tmp_path / "g2.parquet", rating, vert=up)),
        ("good", "rubric", cell(tmp_path / "g3.parquet", rating, vert=down)),
        ("flat", "green", cell(tmp_path / "f1.parquet", rating, green=up, green_ec=up, green_f1=up)),
        ("flat", "direct", cell(tmp_path / "f2.parquet", rating, vert=lambda r: 0.5)),
        ("flat", "rubric", cell(tmp_path / "f3.parquet", rating, vert=up)),
    ]
    args = ["vert-grid", *(x for c in cells for x in ("--cell", *c)), "--ratings", str(prep / "ratings.parquet")]
    out = tmp_path / "grid"
    assert (
        srrg_main([*args, "--pairs", str(prep / "pairs.parquet"), "--out", str(out), "--config", '{"n_boot": 0}']) == 0
    )
    grid = pl.read_csv(out / "vert_grid.csv").filter(pl.col("method") == "kendall")
    tau = {(m, c): v for m, c, v in grid.select("model", "column", "value").iter_rows()}
    assert tau == {
        ("good", "GREEN"): 1.0, ("good", "GREEN-EC"): 1.0, ("good", "GREEN-F1"): 1.0, ("good", "direct"): 1.0,
        ("good", "rubric"): -1.0, ("flat", "GREEN"): 1.0, ("flat", "GREEN-EC"): -1.0, ("flat", "GREEN-F1"): 1.0,
        ("flat", "direct"): pytest.approx(math.nan, nan_ok=True), ("flat", "rubric"): 1.0,
    }  # fmt: skip
    md = (out / "vert_grid.md").read_text()
    assert "| Judge model (Kendall τb) | GREEN | GREEN-EC | GREEN-F1 | direct | rubric |" in md
    assert "| good | 1.000 | 1.000 | 1.000 | 1.000 | -1.000 |" in md
    assert "| flat | 1.000 | -1.000 | 1.000 | – | 1.000 |" in md
    assert (out / "good" / "paired_tests.csv").is_file()


def test_grid_cell_without_its_column_is_an_error(tmp_path):
    """A VERT cell's file must hold `vert` (bug: a GREEN file passed as a VERT cell read as empty)."""
    path = cell(tmp_path / "x.parquet", {"p1": 1.0}, green=lambda r: r)
    with pytest.raises(UserError, match=r"lacks column\(s\) \['vert'\].*direct prompt"):
        model_scores([("direct", path)])


def test_grid_cell_options_merge_the_cell_model_over_the_judges_llm():
    """A cell keeps the judges' endpoint and cache (so answers are shared with the judge stages),
    takes its model from metaeval.grid.models, its VERT variant from the prompt, and judge.options
    and judge.max_tokens of its metric (bug: the judges' model asked for every row, or the variant
    lost so that three columns repeat the direct prompt)."""
    config = {
        "cache_dir": ".cache",
        "llm": {"backend": "rules", "timeout_s": 9.0},
        "judge": {
            "llm": {"backend": "openai", "model": "judge", "base_url": "http://127.0.0.1:1/v1"},
            "options": {"vert": {"max_failure_fraction": 1.0}},
            "max_tokens": 128,
        },
        "metaeval": {"grid": {"models": {"big": {"model": "big-judge"}}}},
    }
    llm = {"cache_dir": ".cache/llm", "backend": "openai", "timeout_s": 9.0, "model": "big-judge",
           "base_url": "http://127.0.0.1:1/v1"}  # fmt: skip
    assert grid_cell_options(config, "big", "rubric") == {
        "vert": {"max_failure_fraction": 1.0, "llm": llm, "max_tokens": 128, "variant": "rubric"}
    }
    assert grid_cell_options(config, "big", "green") == {"green": {"llm": llm, "max_tokens": 128}}


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"model": "x", "temprature": 0.3}, r"unknown key\(s\) metaeval\.grid\.models\.m1\.temprature \(allowed: "),
        ({"model": "x", "backend": "openai", "base_url": "https://api.example.com/v1"}, "is not on this host"),
    ],
)
def test_a_grid_model_is_checked_before_any_job(model, message):
    """A misspelt llm key or a remote endpoint of one grid model stops `snakemake -n` with the
    model's key named (bug: the eight cells of that model fail one by one at run time)."""
    import yaml
    from paths import REPO

    from srrg.config_tree import ConfigError, check_workflow_config

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    radpref = {"adapter": "radpref", "path": str(FIXTURES / "rating_layouts" / "radpref")}
    cfg["metaeval"] = {"datasets": {"rp": radpref}, "metrics": ["bleu"], "grid": {"models": {"m1": model}}}
    with pytest.raises(ConfigError, match=message):
        check_workflow_config(cfg, [])
