"""The human ceiling, the per-rater targets, the tests between metrics and tie-calibrated pairwise
accuracy (docs/metaeval.md), each against an independent computation written here: scipy's
kendalltau / pearsonr / permutation_test, the raw RadPref fixture files read with json, the
Williams formula by hand, pairwise accuracy by brute force."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from metaeval_helpers import radpref_prepared
from paths import FIXTURES
from scipy import stats

from srrg.cli import main as srrg_main
from srrg.metaeval.between import better_than, metric_tests, permutation_p, williams
from srrg.metaeval.ceiling import CEILING, ONE_RATER, ceiling, leave_one_out
from srrg.metaeval.correlation import cluster_bootstrap_indices, coefficient_value, paired_test
from srrg.metaeval.run import run_metaeval, write_result
from srrg.metaeval.tie_accuracy import accuracy_curve, calibrated, tie_calibrated_accuracy
from srrg.resampling import adjust
from srrg.settings.metaeval import MetaevalConfig

RADPREF = FIXTURES / "rating_layouts" / "radpref"
BLEU = [0.1, 0.5, 0.3, 0.2, 0.9, 0.15, 0.4, 0.35]
ROUGE = [0.6, 0.2, 0.5, 0.4, 0.8, 0.1, 0.2, 0.7]


def _raw_ratings() -> dict[str, dict[str, float]]:
    """rater -> pair id -> rating, read straight from the fixture's JSON (not through the reader)."""
    out = {}
    for path in sorted((RADPREF / "radiologist_annotations").glob("user_*.json")):
        annotations = json.loads(path.read_text())["annotations"]
        out[path.stem] = {f"{case}:{c}": float(v[c]["rating"]) for case, v in annotations.items() for c in ("C1", "C2")}
    return out


def _radpref(tmp_path, **cfg):
    prep = radpref_prepared(tmp_path)
    ids = pl.read_parquet(prep / "pairs.parquet")["pair_id"].to_list()
    scores = pl.DataFrame({"study_id": ids, "bleu_1": BLEU, "rouge_l": ROUGE})
    ratings, pairs = pl.read_parquet(prep / "ratings.parquet"), pl.read_parquet(prep / "pairs.parquet")
    settings = {"n_boot": 40, "min_cases": 2, **cfg}
    return ids, run_metaeval(scores, ratings, MetaevalConfig(**settings), pairs), prep


def test_leave_one_out_row_and_per_rater_pearson_match_scipy_on_the_radpref_fixture(tmp_path):
    """Bugs caught: a rater compared with a mean that includes the rater, user_3's skipped case
    imputed instead of left out, the ceiling a median or a pooled tau, Pearson not Pearson."""
    ids, res, _ = _radpref(tmp_path)
    raw = _raw_ratings()
    loo = []
    for rater, own in raw.items():
        xs, ys = [], []
        for pid in ids:
            others = [r[pid] for name, r in raw.items() if name != rater and pid in r]
            if pid in own and others:
                xs.append(own[pid])
                ys.append(sum(others) / len(others))
        loo.append(stats.kendalltau(xs, ys, variant="b").statistic)
    row = res.correlations.filter((pl.col("metric") == CEILING) & (pl.col("method") == "kendall")).row(0, named=True)
    assert row["value"] == pytest.approx(float(np.mean(loo)), abs=1e-12)
    assert row["n"] == 8 and math.isnan(row["p_value"]) and row["ci_status"] == "ok"
    assert res.correlations["metric"].to_list()[:2] == [CEILING, CEILING]  # first row of every table
    per = res.per_rater
    for rater, own in raw.items():
        keep = [k for k, pid in enumerate(ids) if pid in own]
        want = stats.pearsonr([ROUGE[k] for k in keep], [own[ids[k]] for k in keep]).statistic
        got = per.filter((pl.col("metric") == "rouge_l") & (pl.col("rater") == rater) & (pl.col("method") == "pearson"))
        assert got["value"].item() == pytest.approx(want, abs=1e-12) and got["n"].item() == len(keep)
    u3 = per.filter((pl.col("metric") == CEILING) & (pl.col("rater") == "user_3") & (pl.col("method") == "kendall"))
    assert u3["value"].item() == pytest.approx(loo[2], abs=1e-12) and u3["n"].item() == 6
    pair = res.inter_rater.filter(
        (pl.col("rater_a") == "user_1") & (pl.col("rater_b") == "user_3") & (pl.col("method") == "kendall")
    )
    common = [pid for pid in ids if pid in raw["user_3"]]
    want = stats.kendalltau([raw["user_1"][p] for p in common], [raw["user_3"][p] for p in common], variant="b")
    assert pair["value"].item() == pytest.approx(want.statistic, abs=1e-12)


def test_the_ceiling_is_resampled_on_the_metrics_clustered_resamples():
    """Bug caught: the ceiling's CI from pair resamples, another seed, or another set of draws than
    the metrics'; raters that agree exactly must reach 1."""
    rng = np.random.default_rng(4)
    case = np.repeat(np.arange(12), 2)
    truth = rng.normal(size=12)[case] + rng.normal(scale=0.4, size=24)
    raters = {f"r{k}": truth + rng.normal(scale=0.6, size=24) for k in range(3)}
    clusters = [f"c{k:02d}" for k in case]
    boot = {"n_boot": 60, "seed": 7, "level": 0.9, "clusters": clusters, "min_clusters": 10}
    got = ceiling(leave_one_out(raters), "kendall", boot)

    def pooled(idx):
        values = []
        for name, own in raters.items():
            others = np.mean([v for n, v in raters.items() if n != name], axis=0)
            values.append(stats.kendalltau(own[idx], others[idx], variant="b").statistic)
        return np.mean(values)

    samples = [pooled(idx) for idx in cluster_bootstrap_indices(clusters, 60, 7)]
    assert (got.ci_low, got.ci_high) == pytest.approx(tuple(np.percentile(samples, [5, 95])), abs=1e-12)
    assert got.value == pytest.approx(pooled(np.arange(24)), abs=1e-12) and got.n_clusters == 12
    same = ceiling(leave_one_out({"a": truth, "b": truth.copy()}), "pearson", boot)
    assert same.value == pytest.approx(1.0) and same.ci_low == pytest.approx(1.0)
    assert ceiling(leave_one_out({"a": truth}), "kendall", boot) is None


def test_a_one_rater_set_runs_and_says_why_there_is_no_ceiling(tmp_path, capsys):
    """Bug caught: a one-rater set that crashes, prints a ceiling of a rater with itself, or leaves
    the reader guessing why the row is missing."""
    ids = [f"p{k}" for k in range(6)]
    ratings = pl.DataFrame({
        "pair_id": ids, "rater": ["only"] * 6, "kind": ["rating"] * 6, "category": [""] * 6,
        "significance": [""] * 6, "value": [1.0, 2.0, 3.0, 4.0, 5.0, 2.5],
    })  # fmt: skip
    scores = pl.DataFrame({"study_id": ids, "m": [0.1, 0.3, 0.2, 0.8, 0.9, 0.4], "n": [0.5, 0.1, 0.3, 0.2, 0.6, 0.4]})
    ratings.write_parquet(tmp_path / "ratings.parquet")
    scores.write_parquet(tmp_path / "scores.parquet")
    args = ["metaeval-correlate", "--scores", str(tmp_path / "scores.parquet"), "--ratings",
            str(tmp_path / "ratings.parquet"), "--out", str(tmp_path / "out"),
            "--config", '{"n_boot": 20}']  # fmt: skip
    assert srrg_main(args) == 0
    printed = capsys.readouterr().out
    assert ONE_RATER in printed and "| better than → | m | n |" in printed
    out = tmp_path / "out"
    assert CEILING not in pl.read_csv(out / "correlations.csv")["metric"].to_list()
    assert ONE_RATER in (out / "table_gema.md").read_text() and ONE_RATER in (out / "human_ceiling.md").read_text()
    assert (out / "ceiling.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "info.json").read_text())["ceiling_note"] == ONE_RATER


def test_metaeval_correlate_on_three_raters_prints_the_ceiling_row_and_the_matrix(tmp_path, capsys):
    """Bug caught: the stage computes the ceiling and the matrix but the command line shows neither."""
    ids, _, prep = _radpref(tmp_path)
    pl.DataFrame({"study_id": ids, "bleu_1": BLEU, "rouge_l": ROUGE}).write_parquet(tmp_path / "s.parquet")
    capsys.readouterr()
    args = ["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--ratings", str(prep / "ratings.parquet"),
            "--pairs", str(prep / "pairs.parquet"), "--out", str(tmp_path / "o"),
            "--config", '{"n_boot": 20, "min_cases": 2}']  # fmt: skip
    assert srrg_main(args) == 0
    printed = capsys.readouterr().out
    assert "Human ceiling (3 raters: user_1, user_2, user_3):" in printed and f"| {CEILING} | 0.759 |" in printed
    # rouge_l's tau is the higher: its row holds the exact p (16 case swaps), Holm over one pair
    assert "| better than → | bleu_1 | rouge_l |" in printed and "| rouge_l | 0.375 |  |" in printed


def test_permutation_p_matches_scipy_permutation_test():
    """Bugs caught: one-sided p, swapping the human side, not enumerating all swaps, raw scores of
    different scales swapped (the test swaps ranks, which scipy sees here too)."""
    rng = np.random.default_rng(2)
    human = rng.integers(1, 6, size=8).astype(float)
    a = human + rng.normal(scale=1.0, size=8)
    b = rng.normal(size=8) * 100  # another scale
    ra, rb = stats.rankdata(a), stats.rankdata(b)

    def diff(x, y):
        return stats.kendalltau(x, human, variant="b").statistic - stats.kendalltau(y, human, variant="b").statistic

    want = stats.permutation_test((ra, rb), diff, permutation_type="samples", n_resamples=np.inf).pvalue
    assert permutation_p(a, b, human, "kendall", n_rounds=2000, seed=0) == pytest.approx(want, abs=1e-12)


def test_clustered_permutation_swaps_whole_cases():
    """Bug caught: pairs of one case swapped independently (2^10 patterns instead of 2^5)."""
    rng = np.random.default_rng(5)
    human = rng.normal(size=10)
    a, b = human + rng.normal(size=10), rng.normal(size=10)
    clusters = [f"c{k // 2}" for k in range(10)]
    ra, rb = stats.rankdata(a), stats.rankdata(b)
    observed = abs(stats.spearmanr(ra, human).statistic - stats.spearmanr(rb, human).statistic)
    hits = 0
    for swap in itertools.product([False, True], repeat=5):
        m = np.repeat(swap, 2)
        d = (
            stats.spearmanr(np.where(m, rb, ra), human).statistic
            - stats.spearmanr(np.where(m, ra, rb), human).statistic
        )
        hits += abs(d) >= observed - 1e-12
    got = permutation_p(a, b, human, "spearman", n_rounds=100, seed=0, clusters=clusters)
    assert got == pytest.approx(hits / 32, abs=1e-12)


def test_williams_test_by_hand():
    """Bug caught: the Hotelling form (no mean-r term), a sign error in |R|, wrong degrees of freedom."""
    r12, r13, r23, n = 0.6, 0.3, 0.45, 40
    det = 1 - 0.36 - 0.09 - 0.2025 + 2 * 0.6 * 0.3 * 0.45  # 0.5095
    t = 0.3 * math.sqrt(39 * 1.45 / (2 * 39 / 37 * det + 0.45**2 * 0.55**3))
    got_t, got_p = williams(r12, r13, r23, n)
    assert got_t == pytest.approx(t, rel=1e-12) and got_p == pytest.approx(2 * stats.t.sf(t, 37), rel=1e-12)
    assert williams(r13, r12, r23, n)[0] == pytest.approx(-t) and math.isnan(williams(0.5, 0.4, 0.3, 3)[0])


def test_tests_between_metrics_are_adjusted_and_fill_the_better_than_matrix():
    """Bugs caught: raw p in the adjusted column, the family mixed across statistics, the matrix
    transposed (the worse metric's row holding the p), a cached metric's resamples reused for
    another metric or other kept pairs."""
    rng = np.random.default_rng(1)
    case = np.repeat(np.arange(15), 2)
    human = rng.normal(size=30)
    xs = {
        "good": human + rng.normal(scale=0.3, size=30),
        "noise": rng.normal(size=30),
        "mid": human + rng.normal(size=30),
    }
    boot = {"n_boot": 30, "seed": 0, "level": 0.95, "clusters": [str(c) for c in case], "min_clusters": 10}
    rows = metric_tests(xs, human, boot, n_permutations=200, correction="holm")
    assert [(r["metric_a"], r["metric_b"]) for r in rows[:3]] == [("good", "noise"), ("good", "mid"), ("noise", "mid")]
    for method in ("kendall", "pearson"):
        family = [r for r in rows if r["method"] == method]
        assert [r["p_permutation_adj"] for r in family] == adjust([r["p_permutation"] for r in family], "holm")
        assert [r["p_bootstrap_adj"] for r in family] == adjust([r["p_bootstrap"] for r in family], "holm")
    pearson = [r for r in rows if r["method"] == "pearson"]
    assert [r["p_williams_adj"] for r in pearson] == adjust([r["p_williams"] for r in pearson], "holm")
    for r in rows:  # the shared cache of resampled coefficients changes no number
        alone = paired_test(xs[r["metric_a"]], xs[r["metric_b"]], human, r["method"], **boot)
        assert (r["ci_low"], r["ci_high"], r["p_bootstrap"]) == (alone.ci_low, alone.ci_high, alone.p_value)
    matrix = better_than(rows, list(xs))
    assert matrix[0][1] is not None and matrix[1][0] is None and matrix[0][1] < 0.05 and matrix[0][0] is None


def _brute_accuracy(metric, human, epsilon, origin=None):
    right = total = 0
    for i, j in itertools.combinations(range(len(metric)), 2):
        if origin is not None and origin[i] == origin[j]:
            continue
        total += 1
        m = 0 if abs(metric[i] - metric[j]) <= epsilon else np.sign(metric[i] - metric[j])
        right += m == np.sign(human[i] - human[j])
    return right / total


def test_tie_calibrated_accuracy_by_hand_and_by_brute_force():
    """Bugs caught: ties never credited, epsilon not the best one (or not the smallest best), the
    candidate set missing 0, two copies of one resampled item counted as a correctly tied pair."""
    epsilon, accuracy = accuracy_curve(np.array([0.1, 0.12, 0.9, 0.95]), np.array([1.0, 1.0, 2.0, 2.0]))
    assert epsilon.tolist() == pytest.approx([0.0, 0.02, 0.05, 0.78, 0.8, 0.83, 0.85])
    assert accuracy.tolist()[:3] == pytest.approx([4 / 6, 5 / 6, 1.0])  # both human ties, then the cross pairs lost
    rng = np.random.default_rng(3)
    human = rng.integers(1, 4, size=14).astype(float)
    metric = np.round(human + rng.normal(scale=0.6, size=14), 1)
    best, eps = calibrated(metric, human)
    gaps = {0.0} | {abs(a - b) for a, b in itertools.combinations(metric, 2)}
    brute = {e: _brute_accuracy(metric, human, e) for e in gaps}
    assert best == pytest.approx(max(brute.values()), abs=1e-12)
    assert eps == pytest.approx(min(e for e, v in brute.items() if v == pytest.approx(best, abs=1e-12)), abs=1e-12)
    idx = np.array([0, 0, 3, 5, 5, 5, 7, 9])  # a resample that repeats items
    got = calibrated(metric[idx], human[idx], idx)[0]
    want = max(_brute_accuracy(metric[idx], human[idx], e, idx) for e in gaps)
    assert got == pytest.approx(want, abs=1e-12)
    res = tie_calibrated_accuracy(metric, human, {"n_boot": 30, "seed": 0, "level": 0.95})
    assert res.accuracy == pytest.approx(best) and res.accuracy_untuned == pytest.approx(brute[0.0])
    assert res.ci_low <= res.accuracy <= res.ci_high and res.n == 14


def test_outputs_of_the_human_ceiling(tmp_path):
    """Bug caught: a file of docs/metaeval.md not written, or the ceiling figure missing."""
    _, res, _ = _radpref(tmp_path)
    out = tmp_path / "tables"
    write_result(res, out)
    names = ("human_ceiling.md", "human_ceiling.csv", "table_raters.md", "table_categories.md", "metric_tests.csv",
             "better_than.md", "per_rater.csv", "inter_rater.csv", "per_category.csv")  # fmt: skip
    for name in names:
        assert (out / name).stat().st_size > 0, name
    assert (out / "ceiling.png").read_bytes()[:4] == b"\x89PNG"
    assert f"| {CEILING} |" in (out / "table_gema.md").read_text()
    assert f"| {CEILING} |" in (out / "table_categories.md").read_text()


@pytest.mark.parametrize("n", [5, 40, 300])
def test_resample_coefficient_equals_scipy(n):
    """Bug caught: the direct (numpy) coefficient of the resamples differing from scipy's: tau-a
    instead of tau-b under ties, ranks without tie averaging, the scipy path above 250 pairs."""
    rng = np.random.default_rng(n)
    x = rng.integers(0, 6, size=n).astype(float)
    y = x + rng.integers(0, 3, size=n)
    assert coefficient_value("kendall", x, y) == pytest.approx(stats.kendalltau(x, y, variant="b").statistic, abs=1e-12)
    assert coefficient_value("spearman", x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert coefficient_value("pearson", x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert math.isnan(coefficient_value("kendall", x, np.ones(n)))


def test_permutation_test_and_tie_calibrated_accuracy_on_the_radpref_fixture(tmp_path):
    """Bugs caught: the run's permutation p or accuracy computed on another human target than the
    mean of the raters' own ratings, or on pairs in another order than the scores'."""
    ids, res, _ = _radpref(tmp_path, resample="pair")
    raw = _raw_ratings()
    human = np.array([np.mean([r[p] for r in raw.values() if p in r]) for p in ids])
    ra, rb = stats.rankdata(BLEU), stats.rankdata(ROUGE)

    def diff(x, y):
        return stats.kendalltau(x, human, variant="b").statistic - stats.kendalltau(y, human, variant="b").statistic

    want = stats.permutation_test((ra, rb), diff, permutation_type="samples", n_resamples=np.inf).pvalue
    row = res.metric_tests.filter(pl.col("method") == "kendall").row(0, named=True)
    assert (row["metric_a"], row["metric_b"]) == ("bleu_1", "rouge_l")
    assert row["p_permutation"] == pytest.approx(want, abs=1e-12)  # 2^8 pair swaps, exact
    rouge = np.array(ROUGE)
    gaps = {0.0} | {abs(a - b) for a, b in itertools.combinations(ROUGE, 2)}
    best = max(_brute_accuracy(rouge, human, e) for e in gaps)
    got = res.summary.filter(pl.col("metric") == "rouge_l").row(0, named=True)
    assert got["accuracy"] == pytest.approx(best, abs=1e-12)
    assert got["accuracy_untuned"] == pytest.approx(_brute_accuracy(rouge, human, 0.0), abs=1e-12)


def _raw_significant(category: str) -> dict[str, dict[str, float]]:
    """rater -> pair id -> count of clinically significant errors of one category, from the JSON."""
    acting = ("urgent", "actionable_not_urgent")
    out = {}
    for path in sorted((RADPREF / "radiologist_annotations").glob("user_*.json")):
        counts = {}
        for case, entry in json.loads(path.read_text())["annotations"].items():
            for c in ("C1", "C2"):
                errors = entry[c]["finding_errors"].values()
                if category == "false_finding":
                    n = sum(e["error_type"] == "false" and e["clinical_significance"] in acting for e in errors)
                elif category == "missing_finding":
                    n = sum(m["clinical_significance"] in acting for m in entry[c]["missing_findings"].values())
                else:
                    name = category.removeprefix("attribute_")
                    n = sum(e.get("attributes", {}).get(name) == "significant" for e in errors)
                counts[f"{case}:{c}"] = float(n)
        out[path.stem] = counts
    return out


@pytest.mark.parametrize("category", ["false_finding", "attribute_measurement"])
def test_per_category_rows_match_the_raw_counts(tmp_path, category):
    """Bug caught: a rater who judged a pair without an error of the category counted as missing
    instead of 0 (the mean then rests on the raters who did flag it)."""
    ids, res, _ = _radpref(tmp_path)
    raw = _raw_significant(category)
    mean = [-np.mean([r[p] for r in raw.values() if p in r]) for p in ids]
    got = res.per_category.filter(
        (pl.col("metric") == "bleu_1") & (pl.col("category") == category) & (pl.col("method") == "kendall")
    )
    assert got["value"].item() == pytest.approx(stats.kendalltau(BLEU, mean, variant="b").statistic, abs=1e-12)


def test_ceiling_figure_draws_an_interval_that_misses_its_point(tmp_path):
    """Bug caught: bars drawn as point - bound, which matplotlib refuses as a negative length when a
    percentile interval lies wholly above (or below) its point estimate (tau 1 - 1e-16 with CI [1, 1])."""
    from srrg.metaeval.ceiling_tables import ceiling_figure

    summary = pl.DataFrame(
        {
            "metric": [CEILING, "bleu_1", "rouge_l", "gema"],
            "kendall": [0.8, 0.9999999999999999, 0.2, math.nan],
            "kendall_low": [0.7, 1.0, 0.3, math.nan],
            "kendall_high": [0.9, 1.0, 0.5, math.nan],
        }
    )
    path = tmp_path / "ceiling.png"
    ceiling_figure(summary, "three raters", path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
