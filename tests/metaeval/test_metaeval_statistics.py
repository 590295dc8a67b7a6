"""The statistics a reviewer asks for, on hand-computed cases: case-clustered bootstrap, within-case
preference agreement, Holm / Benjamini-Hochberg adjustment (and in `srrg compare`), and the
system-ranking agreement table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from srrg.compare import compare_tables
from srrg.metaeval.correlation import cluster_bootstrap_indices, correlate, paired_test, resample_indices
from srrg.metaeval.preference import preference_agreement
from srrg.rank_correlation import agreement_markdown, ranking_agreement
from srrg.resampling import adjust
from srrg.settings.compare import CompareConfig


def test_cluster_resamples_draw_whole_cases():
    clusters = ["b", "a", "b", "c", "a", "b"]  # a: pairs 1, 4; b: 0, 2, 5; c: 3 (sorted a, b, c -> 0, 1, 2)
    draws = np.random.default_rng(3).integers(0, 3, size=(4, 3))  # the same seeded draws of case numbers
    members = {0: [1, 4], 1: [0, 2, 5], 2: [3]}
    for got, row in zip(cluster_bootstrap_indices(clusters, 4, 3), draws):
        assert got.tolist() == [i for k in row for i in members[k]]
    assert np.array_equal(resample_indices(6, 4, 3), np.random.default_rng(3).integers(0, 6, size=(4, 6)))
    with pytest.raises(ValueError, match="cluster ids"):
        resample_indices(5, 4, 3, clusters)


def test_clustered_ci_against_an_independent_computation():
    rng = np.random.default_rng(0)
    case = np.repeat(np.arange(12), 2)  # 12 cases x 2 candidates sharing a case effect
    effect = rng.normal(size=12)[case]
    human = effect + rng.normal(scale=0.5, size=24)
    metric = effect + rng.normal(scale=0.5, size=24)
    clusters = [f"c{k:02d}" for k in case]
    c = correlate(metric, human, "kendall", n_boot=200, seed=5, clusters=clusters)
    samples = []
    for idx in cluster_bootstrap_indices(clusters, 200, 5):
        samples.append(stats.kendalltau(metric[idx], human[idx], variant="b").statistic)
    low, high = np.percentile(samples, [2.5, 97.5])
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert c.n_clusters == 12 and c.value == correlate(metric, human, "kendall", n_boot=0, seed=0).value
    pairs = correlate(metric, human, "kendall", n_boot=200, seed=5)
    assert pairs.n_clusters == 0 and (pairs.ci_low, pairs.ci_high) != (c.ci_low, c.ci_high)
    t = paired_test(metric, human * 0 + rng.normal(size=24), human, "kendall", n_boot=100, seed=1, clusters=clusters)
    assert t.n == 24 and t.ci_low <= t.difference <= t.ci_high


def test_clusters_follow_the_pairs_that_are_kept():
    x = [1.0, 2.0, math.nan, 4.0, 5.0, 6.0]
    y = [1.0, 3.0, 2.0, 4.0, 6.0, 5.0]
    clusters = ["a", "a", "b", "b", "c", "c"]
    c = correlate(x, y, "spearman", n_boot=50, seed=0, clusters=clusters)
    ref = correlate([1, 2, 4, 5, 6], [1, 3, 4, 6, 5], "spearman", n_boot=50, seed=0, clusters=["a", "a", "b", "c", "c"])
    assert (c.ci_low, c.ci_high, c.n, c.n_dropped, c.n_clusters) == (ref.ci_low, ref.ci_high, 5, 1, 3)


def test_clustered_bootstrap_below_the_minimum_case_count_gives_no_ci_and_says_why():
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, math.nan, 8.0]
    y = [1.0, 3.0, 2.0, 4.0, 6.0, 5.0, 7.0, 9.0]
    clusters = ["a", "a", "b", "b", "c", "c", "d", "e"]  # pair 6 (the only one of case d) is dropped: 4 cases kept
    at = correlate(x, y, "kendall", n_boot=50, seed=0, clusters=clusters, min_clusters=4)
    free = correlate(x, y, "kendall", n_boot=50, seed=0, clusters=clusters)
    assert (at.ci_low, at.ci_high, at.ci_status, at.n_clusters) == (free.ci_low, free.ci_high, "ok", 4)
    below = correlate(x, y, "kendall", n_boot=50, seed=0, clusters=clusters, min_clusters=5)
    assert math.isnan(below.ci_low) and math.isnan(below.ci_high) and below.ci_status == "too_few_cases"
    # the coefficient stays
    assert (below.value, below.p_value, below.n, below.n_dropped) == (free.value, free.p_value, 7, 1)
    pairs = correlate(x, y, "kendall", n_boot=50, seed=0, min_clusters=5)  # resampling pairs: no case minimum
    assert pairs.ci_status == "ok" and math.isfinite(pairs.ci_low)
    t = paired_test(x, y, y, "kendall", ("x", "y"), n_boot=50, seed=0, clusters=clusters, min_clusters=5)
    assert math.isnan(t.ci_low) and math.isnan(t.p_value) and t.status == "too_few_cases"
    assert t.difference == free.value - 1
    assert paired_test(x, y, y, "kendall", n_boot=50, seed=0, clusters=clusters, min_clusters=4).status == "ok"


def test_ci_status_names_every_reason_for_a_missing_ci():
    assert correlate([1, 2, 3, 4], [1, 2, 4, 3], "kendall", n_boot=0, seed=0).ci_status == "not_resampled"
    assert correlate([1, 2], [2, 1], "kendall", n_boot=10, seed=0).ci_status == "too_few_pairs"
    # constant human side in every resample: no finite coefficient to take an interval from
    assert correlate([1, 2, 3, 4], [5, 5, 5, 5], "kendall", n_boot=10, seed=0).ci_status == "no_finite_resample"
    assert paired_test([1, 2], [2, 1], [1, 2], "kendall", n_boot=10, seed=0).status == "too_few_pairs"


def test_min_cases_of_the_metaeval_config():
    from srrg.settings.fields import build
    from srrg.settings.metaeval import MetaevalConfig

    assert MetaevalConfig().min_cases == 10 and MetaevalConfig(min_cases=2).min_cases == 2
    with pytest.raises(ValueError, match=r"^min_cases must be >= 2, got 1"):
        MetaevalConfig(min_cases=1)
    with pytest.raises(ValueError, match=r"^metaeval.correlate.min_cases must be >= 2"):
        build(MetaevalConfig, {"min_cases": 1}, "metaeval.correlate")


def test_preference_agreement_hand_computed():
    # case A: humans prefer 1 over 0, metric too (agree); case B: humans prefer 2, metric prefers 3
    # (disagree); case C: humans prefer 5, metric ties; case D: humans tie; case E: one pair only
    clusters = ["A", "A", "B", "B", "C", "C", "D", "D", "E"]
    human = [2.0, 4.0, 5.0, 1.0, 1.0, 3.0, 2.0, 2.0, 3.0]
    metric = [0.1, 0.9, 0.2, 0.8, 0.5, 0.5, 0.3, 0.7, 0.4]
    a = preference_agreement(metric, human, clusters)
    assert (a.n_cases, a.n_comparisons, a.agree, a.disagree, a.metric_tie, a.human_tie) == (4, 4, 1, 1, 1, 1)
    assert a.agreement == pytest.approx(1 / 3) and a.agreement_untied == pytest.approx(1 / 2)
    # three candidates in one case: 3 comparisons; a NaN drops its pair
    b = preference_agreement([0.1, 0.5, 0.9, math.nan], [1.0, 2.0, 3.0, 4.0], ["s", "s", "s", "s"])
    assert (b.n_comparisons, b.agree) == (3, 3) and b.agreement == 1.0
    none = preference_agreement([0.1], [1.0], ["x"])
    assert none.n_cases == 0 and math.isnan(none.agreement)


def test_holm_and_benjamini_hochberg_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: 0.005*4/1=0.02, 0.01*4/2=0.02, 0.03*4/3=0.04, 0.04*4/4=0.04
    assert adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust([0.6, 0.9], "holm") == [1.0, 1.0]  # capped
    out = adjust([0.2, math.nan, 0.01], "holm")  # NaN is not in the family of 2
    assert out[0] == pytest.approx(0.2) and math.isnan(out[1]) and out[2] == pytest.approx(0.02)
    assert adjust(p, "none") == p
    with pytest.raises(ValueError, match="unknown correction"):
        adjust(p, "bonferroni")


def test_compare_reports_adjusted_beside_raw_p_values():
    rng = np.random.default_rng(0)
    base = rng.random(12)
    tables = {
        "a": {"m": list(base), "k": list(base)},
        "b": {"m": list(base + 0.3), "k": list(base + 0.01 * rng.normal(size=12))},
        "c": {"m": list(base + 0.1), "k": list(base)},
    }
    cfg = CompareConfig(n_boot=200, n_rounds=200, seed=0)
    rows = compare_tables(tables, cfg)
    raw = [r.p_randomization for r in rows]
    assert [r.p_randomization_adj for r in rows] == pytest.approx(adjust(raw, "holm"))
    assert [r.p_bootstrap_adj for r in rows] == pytest.approx(adjust([r.p_bootstrap for r in rows], "holm"))
    assert all(r.correction == "holm" and r.p_randomization_adj >= r.p_randomization for r in rows)
    bh = compare_tables(tables, CompareConfig(n_boot=200, n_rounds=200, seed=0, correction="bh"))
    assert [r.p_randomization_adj for r in bh] == pytest.approx(adjust(raw, "bh"))
    with pytest.raises(ValueError, match="correction must be one of holm, bh, none"):
        CompareConfig(correction="sidak")


def test_system_ranking_agreement_hand_computed():
    values = {
        "bleu": {"s1": 0.1, "s2": 0.2, "s3": 0.3, "s4": 0.4},
        "green": {"s1": 0.4, "s2": 0.3, "s3": 0.2, "s4": 0.1},
        "errors": {"s1": 4.0, "s2": 3.0, "s3": 1.0, "s4": 2.0},  # lower is better: s3 > s4 > s2 > s1
        "few": {"s1": 1.0, "s2": math.nan},
    }
    t = {
        (r["metric_a"], r["metric_b"]): (r["kendall"], r["n_systems"])
        for r in ranking_agreement(values, lower_is_better=["errors"]).iter_rows(named=True)
    }
    assert t[("bleu", "green")] == (pytest.approx(-1.0), 4)
    # bleu order s4 > s3 > s2 > s1 vs errors s3 > s4 > s2 > s1: 5 concordant, 1 discordant of 6 -> 4/6
    assert t[("bleu", "errors")][0] == pytest.approx(4 / 6)
    assert math.isnan(t[("bleu", "few")][0]) and t[("bleu", "few")][1] == 1
    md = agreement_markdown(ranking_agreement(values, lower_is_better=["errors"]), "caption")
    assert "| bleu | 1.000 | -1.000 | 0.667 | – |" in md


def test_compare_writes_the_system_ranking_agreement(tmp_path):
    import polars as pl

    from srrg.compare import run_compare_tables

    ids = [f"s{i}" for i in range(6)]
    for name, shift in (("a", 0.0), ("b", 0.2), ("c", 0.1)):
        pl.DataFrame({"study_id": ids, "m": [0.1 * i + shift for i in range(6)], "k": [0.5 - shift] * 6}).write_parquet(
            tmp_path / f"{name}.parquet"
        )
    rows = run_compare_tables(
        {n: str(tmp_path / f"{n}.parquet") for n in "abc"},
        str(tmp_path / "out"),
        CompareConfig(n_boot=20, n_rounds=20),
        allow_mixed=True,  # hand-made tables carry no signatures
    )
    assert len(rows) == 4
    table = pl.read_csv(tmp_path / "out" / "ranking_agreement.csv")
    # m ranks b > c > a, k ranks a > c > b: tau -1 over 3 systems
    assert table.rows() == [("m", "k", pytest.approx(-1.0), 3)]
    assert "| m | 1.000 | -1.000 |" in (tmp_path / "out" / "ranking_agreement.md").read_text()
