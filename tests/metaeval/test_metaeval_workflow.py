"""The meta-evaluation workflow end to end (workflow/rules/metaeval.smk): a metaeval.datasets entry
pointing at the RadPref layout fixture goes through metaeval_prepare -> metaeval_score ->
metaeval_correlate to tables with finite coefficients (no CIs at 4 cases), a radjudge entry runs
metaeval_rank, and both tables and the human-ceiling figure are in `snakemake --report`."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from paths import FIXTURES
from workflow_helpers import copy_workflow, snakemake, write_config

pytestmark = pytest.mark.slow

LAYOUTS = FIXTURES / "rating_layouts"


def test_radpref_and_radjudge_entries_run_to_finite_tables(tmp_path):
    workdir = copy_workflow(tmp_path / "repo")
    config = write_config(workdir, {
        "metaeval": {
            "datasets": {
                "rp": {"adapter": "radpref", "path": str(LAYOUTS / "radpref")},
                "rj": {
                    "adapter": "radjudge",
                    "path": str(LAYOUTS / "radjudge" / "ranking_tests.json"),
                    "options": {"keys": {"bleu": "bleu_1"}},
                },
            },
            "metrics": ["bleu", "rouge_l"],
            "correlate": {"n_boot": 50},
        },
    })  # fmt: skip
    targets = ["results/metaeval/rp/tables/table_gema.md", "results/metaeval/rj/ranking/rank_categories.md"]
    snakemake(workdir, *targets, "--configfile", str(config))
    tables = workdir / "results" / "metaeval" / "rp" / "tables"
    corr = pl.read_csv(tables / "correlations.csv")
    # the three metrics and the human ceiling (3 raters: leave-one-out), Kendall and Spearman each
    assert set(corr["metric"]) == {"Radiologists (leave-one-out)", "bleu_1", "bleu_4", "rouge_l"} and corr.height == 8
    assert all(math.isfinite(v) for v in corr["value"])
    # 4 cases are fewer than metaeval.correlate.min_cases (10): no clustered CI, the status says why
    assert corr["ci_low"].is_nan().all() and set(corr["ci_status"]) == {"too_few_cases"}
    info = json.loads((tables / "info.json").read_text())
    assert info["n_with_human"] == 8 and info["n_without_human"] == 0 and info["resampling"] == "cases (4 clusters)"
    assert "| rouge_l |" in (tables / "table_gema.md").read_text()
    assert pl.read_csv(tables / "preference_agreement.csv").height == 3
    prepared = json.loads((workdir / "results" / "metaeval" / "rp" / "pairs" / "info.json").read_text())
    assert (prepared["n_pairs"], prepared["n_raters"], prepared["n_rating_rows"]) == (8, 3, 202)
    ranking = (workdir / "results" / "metaeval" / "rj" / "ranking" / "rank_categories.md").read_text()
    assert "bleu (bleu_1)" in ranking and "| Total | 4 |" in ranking
    rerun = snakemake(workdir, "-n", *targets, "--configfile", str(config))
    assert "rule metaeval_" not in rerun.stdout  # up to date
    snakemake(workdir, "--report", "report.html", *targets, "--configfile", str(config))
    html = (workdir / "report.html").read_text(errors="replace")
    assert "Meta-evaluation" in html and "table_gema.md" in html and "rank_categories.md" in html
    assert "ceiling.png" in html and "human_ceiling.md" in html and "better_than.md" in html  # the ceiling figure


def test_judge_training_refuses_ranking_cases(tmp_path):
    workdir = copy_workflow(tmp_path / "repo")
    config = write_config(workdir, {
        "metaeval": {"datasets": {"rj": {"adapter": "radjudge", "path": str(LAYOUTS / "radjudge")}}},
        "judge_train": {"datasets": ["rj"]},
    })  # fmt: skip
    proc = snakemake(workdir, "-n", "--configfile", str(config), check=False)
    assert proc.returncode != 0 and "are RadJudge ranking cases" in proc.stdout + proc.stderr
