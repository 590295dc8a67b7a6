"""Where each published field lands, field by field (issue 38): which error category and which
significance level a count goes to (not only the totals per level), the second row of one report
and category, every alternative of a statistic's option, means with a missing value, and p-value
floors at the rounding edge. Files are tiny synthetic copies of the published layouts
(docs/metaeval.md), every count distinct so that a swapped column or level shows."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from paths import FIXTURES

from srrg.compare import _p_text
from srrg.errors import UserError
from srrg.metaeval.readers.common import human_category_counts, human_scores
from srrg.metaeval.readers.load import load_dataset
from srrg.metaeval.readers.radeval_expert import radeval_counts
from srrg.metaeval.run import run_metaeval
from srrg.rank_correlation import ranking_agreement, system_means
from srrg.resampling import bootstrap_p, bootstrap_p_floor, randomization_floor
from srrg.settings.metaeval import MetaevalConfig

LAYOUTS = FIXTURES / "rating_layouts"
REXVAL_HEADER = "study_number,candidate_type,error_category,rater_index,clinically_significant,num_errors"


def _error_cells(ds) -> dict[tuple[str, str, str, str], float]:
    """(pair, rater, category, significance) -> count, nonzero rows only."""
    rows = ds.ratings.filter((pl.col("kind") == "errors") & (pl.col("value") != 0))
    return {
        (r["pair_id"], r["rater"], r["category"], r["significance"]): r["value"] for r in rows.iter_rows(named=True)
    }


def test_rexval_each_error_category_and_significance_lands_in_its_own_cell(tmp_path):
    """error_category k -> GREEN category a..f (k-1), True -> significant, False -> insignificant,
    rater_index kept per rater. Bug: an off-by-one category, swapped significance or a rater taken
    from the wrong column moves a count to another cell (the per-level totals stay the same)."""
    (tmp_path / "50_samples_gt_and_candidates.csv").write_text("study_id,gt_report,bleu,radgraph\n9,R.,B.,G.\n")
    rows = [
        "0,bleu,1,0,True,1", "0,bleu,2,0,False,2", "0,bleu,3,1,True,3", "0,bleu,6,1,False,4",
        "0,radgraph,4,0,True,5", "0,radgraph,5,1,False,6", "0,radgraph,1,1,True,0",
    ]  # fmt: skip
    (tmp_path / "6_valid_raters_per_rater_error_categories.csv").write_text("\n".join([REXVAL_HEADER, *rows]) + "\n")
    ds = load_dataset("rexval", tmp_path)
    assert _error_cells(ds) == {
        ("0:bleu", "0", "a", "significant"): 1.0,
        ("0:bleu", "0", "b", "insignificant"): 2.0,
        ("0:bleu", "1", "c", "significant"): 3.0,
        ("0:bleu", "1", "f", "insignificant"): 4.0,
        ("0:radgraph", "0", "d", "significant"): 5.0,
        ("0:radgraph", "1", "e", "insignificant"): 6.0,
    }
    sig = human_category_counts(ds.ratings).filter(pl.col("pair_id") == "0:bleu").row(0, named=True)
    # significant a: rater 0 has 1, rater 1 has 0 -> 0.5; c: 3 of rater 1 -> 1.5; b is insignificant
    assert (sig["a"], sig["c"], sig.get("b", 0.0)) == (0.5, 1.5, 0.0)
    insig = human_category_counts(ds.ratings, ("insignificant",)).filter(pl.col("pair_id") == "0:bleu")
    assert insig.row(0, named=True)["b"] == 1.0 and insig.row(0, named=True)["f"] == 2.0
    pair = ds.pairs.filter(pl.col("pair_id") == "0:radgraph").row(0, named=True)
    assert (pair["reference"], pair["candidate"], pair["system"], json.loads(pair["context"])) == (
        "R.", "G.", "radgraph", {"study_id": "9"},
    )  # fmt: skip


def test_radevalx_count_columns_one_to_eight_are_categories_a_to_h(tmp_path):
    """one..eight -> a..h at the row's own error_type. Bug: a shifted zip or the wrong level."""
    reports = tmp_path / "reports.csv"
    reports.write_text("study_id,ground_truth,candidate_report\n7,G.,C.\n")
    notes = tmp_path / "notes.csv"
    notes.write_text(
        "report_id,error_type,one,two,three,four,five,six,seven,eight\n"
        "7,significant,1,2,3,4,5,6,7,8\n7,insignificant,0,0,0,0,0,0,0,9\n"
    )
    ds = load_dataset("radevalx", notes, reports=str(reports))
    expected = {("7", "0", c, "significant"): float(i) for i, c in enumerate("abcdefgh", start=1)}
    assert _error_cells(ds) == {**expected, ("7", "0", "h", "insignificant"): 9.0}
    notes.write_text(notes.read_text() + "7,Significant,0,0,0,0,0,0,0,0\n")
    with pytest.raises(UserError, match=r"row 4: report 7 has a second significant row"):
        load_dataset("radevalx", notes, reports=str(reports))


def test_radpref_false_missing_and_attribute_errors_land_at_their_levels(tmp_path):
    """A false finding at actionable_not_urgent, a missing finding at benign_expected and an
    attribute error (severity: negligible) each land in their own (category, level) cell; the
    other levels hold explicit zeros. Bug: false and missing swapped, or an attribute counted at the
    finding's level."""
    root = Path(shutil.copytree(LAYOUTS / "radpref", tmp_path / "radpref"))
    path = root / "radiologist_annotations" / "user_1.json"
    doc = json.loads(path.read_text())
    doc["annotations"] = {
        "study_02": {
            "C1": {
                "rating": 2,
                "finding_errors": {
                    "0": {"error_type": "false", "clinical_significance": "actionable_not_urgent"},
                    "1": {"error_type": "attribute", "attributes": {"severity": "negligible"}},
                },
                "missing_findings": {"0": {"clinical_significance": "benign_expected"}},
            },
            "C2": {"rating": 5, "finding_errors": {}, "missing_findings": {}},
        }
    }
    path.write_text(json.dumps(doc))
    ds = load_dataset("radpref", root, raters=["user_1"])
    assert _error_cells(ds) == {
        ("study_02:C1", "user_1", "false_finding", "actionable_not_urgent"): 1.0,
        ("study_02:C1", "user_1", "missing_finding", "benign_expected"): 1.0,
        ("study_02:C1", "user_1", "attribute_severity", "negligible"): 1.0,
    }
    zeros = ds.ratings.filter((pl.col("pair_id") == "study_02:C2") & (pl.col("kind") == "errors"))
    assert zeros.height == 8 and zeros["value"].sum() == 0  # 2 categories x 4 levels, all explicit
    sig, _ = human_scores(ds.ratings, "errors_significant")
    assert dict(zip(sig["pair_id"], sig["human"])) == {"study_02:C1": 1.0, "study_02:C2": 0.0}
    insig, _ = human_scores(ds.ratings, "errors_insignificant")
    assert dict(zip(insig["pair_id"], insig["human"]))["study_02:C1"] == 2.0  # benign missing + negligible


def test_radeval_annotation_lines_one_to_seven_are_categories_a_to_g():
    """Line k of each block -> category k (7 = g, inarticulate) at that block's level. Bug: the
    level of the previous header kept, or the line number read off by one."""
    names = ["false finding", "missing finding", "location", "severity", "comparison", "omitted comparison", "other"]
    block = lambda title, base: [title] + [f"{k}. {n}: {base + k}" for k, n in enumerate(names, start=1)]  # noqa: E731
    cell = "\n".join(block("Significant:", 0) + block("Insignificant:", 10))
    counts = radeval_counts(cell)
    assert counts == {
        **{(c, "significant"): float(k) for k, c in enumerate("abcdefg", start=1)},
        **{(c, "insignificant"): float(10 + k) for k, c in enumerate("abcdefg", start=1)},
    }
    assert radeval_counts(cell.replace("3. location: 3", "3. location: 3\n3. location: 1")) is None  # a line twice


def _metaeval_inputs():
    ds = load_dataset("radpref", LAYOUTS / "radpref")
    ids = sorted(ds.pairs["pair_id"])
    metric = [float(i % 3) + 0.1 * i for i in range(len(ids))]
    return pl.DataFrame({"study_id": ids, "m": metric}), ds.ratings, ds.pairs


@pytest.mark.parametrize(("resample", "clusters"), [("cluster", 4), ("pair", 0)])
def test_resample_option_with_a_pairs_table(resample, clusters):
    """resample: cluster draws the 4 RadPref cases (n_clusters 4), resample: pair draws pairs even
    when a pairs table gives clusters (n_clusters 0). Bug: `pair` ignored whenever pairs is given."""
    scores, ratings, pairs = _metaeval_inputs()
    cfg = MetaevalConfig(metrics=["m"], n_boot=20, resample=resample, min_cases=2)
    result = run_metaeval(scores, ratings, cfg, pairs)
    assert set(result.correlations["n_clusters"]) == {clusters}


@pytest.mark.parametrize(
    ("target", "resolved"),
    [("auto", "rating"), ("rating", "rating"), ("errors_total", "errors_total"),
     ("errors_significant", "errors_significant"), ("errors_insignificant", "errors_insignificant")],
)  # fmt: skip
def test_every_human_target_is_the_one_correlated(target, resolved):
    """Each human_target alternative is the target used (auto: rating, RadPref has ratings), and
    the error targets correlate with the opposite sign of the rating (fewer errors = better). Bug:
    an alternative mapped to another target."""
    scores, ratings, pairs = _metaeval_inputs()
    result = run_metaeval(scores, ratings, MetaevalConfig(metrics=["m"], n_boot=0, human_target=target), pairs)
    assert result.info["human_target"] == resolved
    human, lower = human_scores(ratings, resolved)
    assert lower == resolved.startswith("errors")


def test_system_means_skip_a_missing_value_and_ranking_ignores_it():
    """Per-system means over finite values: a NaN (a failed judge answer) and a null are skipped,
    not read as 0 or making the mean NaN; a system with no finite value is NaN and is left out of
    the ranking agreement. Bug: mean with NaN -> NaN (system dropped), or fill 0 -> 4/3."""
    frame = pl.DataFrame(
        {"system": ["A", "A", "A", "B", "B", "C", "C", "D"], "m": [1.0, math.nan, 3.0, 5.0, None, 4.0, 0.0, math.nan]}
    )
    means = system_means(frame, "system", ["m"])["m"]
    assert means["A"] == 2.0 and means["B"] == 5.0 and means["C"] == 2.0 and math.isnan(means["D"])
    values = {"m": means, "k": {"A": 1.0, "B": 3.0, "C": 2.0, "D": 0.0}}
    row = ranking_agreement(values, lower_is_better=()).row(0, named=True)
    # A < C? tie 2.0 = 2.0 on m; the three systems with both values: A, B, C (D left out)
    assert row["n_systems"] == 3


@pytest.mark.parametrize(
    ("p", "floor", "text"),
    [
        (2 / 1001, 2 / 1001, "≤0.002"),  # B = 1000: floor 0.001998 rounds up, not to 0.002 as p
        (0.0025, 0.0025, "≤0.003"),  # at .5: up (Python's round would give 0.002)
        (0.0015, 0.0015, "≤0.002"),
        (0.001, 0.001, "≤0.001"),  # B = 1999: exactly 0.001 is not "<0.001"
        (2 / 2000, 2 / 2000, "≤0.001"),
        (0.0009995, 0.0009995, "<0.001"),  # below 0.001: the floor is not needed
        (0.002, 2 / 1001, "0.002"),  # above the floor: printed as is
        (1 / 10001, 0.0, "<0.001"),
        (0.0125, 0.0, "0.013"),
        (math.nan, 0.01, "n/a"),
    ],
)
def test_p_value_text_at_the_floor_edges(p, floor, text):
    """Bug: a floor rounded to nearest (0.0025 -> "≤0.002" claims more than the resamples show),
    or a p equal to 0.001 printed as "<0.001"."""
    assert _p_text(p, floor) == text


def test_bootstrap_and_randomization_floors_share_the_definition():
    """2/(B+1) over the finite resamples; 1/(R+1) when rounds are sampled, 0 when all 2^n swaps
    are enumerated (exact test). The metaeval paired tests use the same bootstrap_p_floor."""
    diffs = np.array([1.0] * 999 + [math.nan])
    assert bootstrap_p_floor(diffs) == 2 / 1000 and bootstrap_p(diffs) == pytest.approx(2 / 1000)
    assert randomization_floor(10, 1023) == 1 / 1024 and randomization_floor(10, 1024) == 0.0
    assert _p_text(bootstrap_p(diffs), bootstrap_p_floor(diffs)) == "≤0.002"


def test_compare_counts_only_studies_with_a_value_on_both_sides(tmp_path):
    """compare.csv's n and the compare.md heading count studies with a finite value for both
    systems: b's judge failed on study 2 (NaN), so m has 2 studies, k all 3. Bug: the caption
    claimed 3 studies for m, whose means skip the NaN."""
    from srrg.compare import compare_tables, to_markdown
    from srrg.settings.compare import CompareConfig

    tables = {"a": {"m": [0.1, 0.2, 0.3], "k": [1.0, 2.0, 3.0]}, "b": {"m": [0.4, math.nan, 0.6], "k": [3.0, 2.0, 1.0]}}
    rows = {r.key: r for r in compare_tables(tables, CompareConfig(n_boot=10, n_rounds=8))}
    assert (rows["m"].n, rows["k"].n) == (2, 3)
    assert rows["m"].value_b == pytest.approx(0.5) and rows["m"].value_a == pytest.approx(0.2)
    md = to_markdown(list(rows.values()))
    heading = "### b vs a (3 studies; 95% paired-bootstrap CIs)\n\n"
    assert md.startswith(heading + "Studies with a value on both sides, where fewer: m 2.\n\n")


def test_lower_is_better_negates_only_the_named_metric():
    """lower_is_better: [m] flips m's correlation sign and leaves the other column as it was. Bug:
    the option ignored, or applied to every column."""
    scores, ratings, pairs = _metaeval_inputs()
    scores = scores.with_columns(other=pl.col("m") * 2)

    def values(lower):
        cfg = MetaevalConfig(metrics=["m", "other"], n_boot=0, lower_is_better=lower)
        rows = run_metaeval(scores, ratings, cfg, pairs).correlations.filter(pl.col("method") == "kendall")
        return dict(zip(rows["metric"], rows["value"]))

    plain, flipped = values(()), values(["m"])
    assert plain["m"] == pytest.approx(plain["other"]) and plain["m"] != 0
    assert flipped["m"] == pytest.approx(-plain["m"]) and flipped["other"] == pytest.approx(plain["other"])


def test_category_prf_pairs_each_judge_category_with_the_same_human_category():
    """a with a, b with b; a category only one side has is left out; "all" sums TP/FP/FN over the
    shared ones. Bug: categories zipped by position or the micro average taken as a mean of F1s."""
    from srrg.metaeval.counts import category_prf

    judge = {"a": [2.0, 0.0], "b": [0.0, 1.0], "z": [5.0, 5.0]}
    human = {"b": [1.0, 1.0], "a": [1.0, 1.0]}
    out = category_prf(judge, human)
    assert set(out) == {"a", "b", "all"}
    # a: TP min(2,1)+min(0,1) = 1, FP 1, FN 1; b: TP 0+1 = 1, FP 0, FN 1
    assert (out["a"]["tp"], out["a"]["fp"], out["a"]["fn"]) == (1.0, 1.0, 1.0)
    assert (out["b"]["tp"], out["b"]["fp"], out["b"]["fn"], out["b"]["precision"]) == (1.0, 0.0, 1.0, 1.0)
    assert (out["all"]["tp"], out["all"]["fp"], out["all"]["fn"]) == (2.0, 1.0, 2.0)
    assert out["all"]["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
