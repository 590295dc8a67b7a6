"""`srrg compare` outputs and edges, with exact expected text and numbers: the markdown table (3
decimals, "<0.001", "n/a"), the flat records, the signature lines, the system values behind the
ranking agreement, the configuration's bounds, the exact/sampled switch of the randomization test
and the statistics a table supports."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from srrg import compare as C
from srrg import resampling
from srrg.compare import Comparison
from srrg.errors import UserError
from srrg.metrics import corpus
from srrg.settings.compare import CompareConfig


def col(values) -> np.ndarray:
    return np.asarray(values, dtype=float)[:, None]


def comparison(b: str = "B", **changes) -> Comparison:
    values = dict(
        key="m",
        statistic="mean of per-report values",
        system_a="A",
        system_b=b,
        value_a=0.5,
        ci_a=(0.25, 0.75),
        value_b=0.6,
        ci_b=(0.5, 0.7),
        difference=0.1,
        ci_difference=(-0.05, 0.25),
        p_bootstrap=0.0004,
        p_randomization=0.001,
        n=7,
        correction="holm",
        p_bootstrap_adj=0.0123,
        p_randomization_adj=math.nan,
        signature="sig-m",
    )
    values.update(changes)
    return Comparison(**values)


HEADER = (
    "| metric | statistic | A | {p} CI | {b} | {p} CI | {b} − A | {p} CI | p (bootstrap) | p adj. "
    "| p (randomization) | p adj. |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def test_markdown_table_text():
    rows = [
        comparison(),
        comparison(
            key="k",
            value_a=math.nan,
            ci_a=(math.nan, 0.3),
            p_bootstrap=math.nan,
            p_randomization=0.0009999,
            p_bootstrap_adj=1.0,
            p_randomization_adj=0.5,
        ),
    ]
    expected = (
        "### B vs A (7 studies; 95% paired-bootstrap CIs)\n\n"
        "p adj.: Holm adjustment over all 2 comparisons (metrics x system pairs). "
        + C.FLOOR_NOTE
        + "\n\n"
        + HEADER.format(p="95%", b="B")
        # 0.001 is not below 0.001; 0.0004 is
        + "| m | mean of per-report values | 0.500 | [0.250, 0.750] | 0.600 | [0.500, 0.700] | 0.100 "
        "| [-0.050, 0.250] | <0.001 | 0.012 | 0.001 | n/a |\n"
        + "| k | mean of per-report values | n/a | n/a | 0.600 | [0.500, 0.700] | 0.100 "
        "| [-0.050, 0.250] | n/a | 1.000 | <0.001 | 0.500 |\n"
    )
    assert C.to_markdown(rows) == expected


def test_markdown_one_table_per_system_pair_at_the_given_level():
    rows = [comparison("B", correction="bh"), comparison("C", correction="bh", n=3)]
    md = C.to_markdown(rows, level=0.9)
    first, second = md.split("\n\n### ")
    assert first.startswith(
        "### B vs A (7 studies; 90% paired-bootstrap CIs)\n\n"
        "p adj.: Benjamini-Hochberg adjustment over all 2 comparisons"
    )
    assert HEADER.format(p="90%", b="B") in first and first.count("| m |") == 1
    assert second.startswith("C vs A (3 studies; 90% paired-bootstrap CIs)")
    assert HEADER.format(p="90%", b="C") in second
    assert "p adj.: none adjustment" in C.to_markdown([comparison(correction="none")])


def test_p_text_never_claims_less_than_the_resamples_support():
    # B = 200: the smallest bootstrap p is 2 / 201 = 0.00995..., shown as a bound rounded up, never "<0.001"
    assert C._p_text(2 / 201, 2 / 201) == "≤0.010"
    assert C._p_text(4 / 201, 2 / 201) == "0.020"  # above the floor: the value itself
    assert C._p_text(2 / 1001, 2 / 1001) == "≤0.002"  # B = 1000
    assert C._p_text(1 / 10001, 1 / 10001) == "<0.001"  # R = 10000 rounds: below 0.001 is attainable
    assert C._p_text(1 / 32, 0.0) == "0.031"  # exact test (all 2^5 swaps): no floor, the p is exact
    assert C._p_text(math.nan, 2 / 201) == "n/a"


def test_a_p_at_its_floor_with_200_resamples_prints_the_floor():
    # b beats a on every study: every resampled difference is 1, none on the far side of zero, so
    # p = 2 * (0 + 1) / (200 + 1); 3 studies, 8 rounds: all 2^3 swaps enumerated, |diff| = 1 only when
    # all three swap or none does: p = 2 / 8, exact (floor 0)
    rows = C.compare_tables(
        {"a": {"m": [0.0, 0.0, 0.0]}, "b": {"m": [1.0, 1.0, 1.0]}},
        CompareConfig(n_boot=200, n_rounds=8, correction="none"),
    )
    (r,) = rows
    assert (r.p_bootstrap, r.p_bootstrap_floor) == (2 / 201, 2 / 201)
    assert (r.p_randomization, r.p_randomization_floor) == (0.25, 0.0)
    assert "| ≤0.010 | ≤0.010 | 0.250 | 0.250 |" in C.to_markdown(rows)
    sampled = C.compare_tables({"a": {"m": [0.0] * 9}, "b": {"m": [1.0] * 9}}, CompareConfig(n_boot=200, n_rounds=99))
    assert sampled[0].p_randomization_floor == 1 / 100  # 2^9 > 99 rounds: sampled, floor 1 / (R + 1)


def test_records_keep_full_precision_and_every_field():
    r = comparison(value_a=1 / 3)
    assert C.to_records([r]) == [
        {
            "metric": "m",
            "statistic": "mean of per-report values",
            "system_a": "A",
            "system_b": "B",
            "n": 7,
            "value_a": 1 / 3,
            "ci_a_low": 0.25,
            "ci_a_high": 0.75,
            "value_b": 0.6,
            "ci_b_low": 0.5,
            "ci_b_high": 0.7,
            "difference": 0.1,
            "ci_difference_low": -0.05,
            "ci_difference_high": 0.25,
            "p_bootstrap": 0.0004,
            "p_randomization": 0.001,
            "correction": "holm",
            "p_bootstrap_adj": 0.0123,
            "p_randomization_adj": r.p_randomization_adj,
            "p_bootstrap_floor": 0.0,
            "p_randomization_floor": 0.0,
            "signature": "sig-m",
        }
    ]
    assert math.isnan(C.to_records([r])[0]["p_randomization_adj"])


def test_signature_lines_list_each_metric_once():
    rows = [comparison("B"), comparison("C"), comparison(key="k", signature=""), comparison(key="z", signature="sig-z")]
    assert C.signature_lines(rows) == "\nSignatures:\n\n- m: `sig-m`\n- z: `sig-z`\n"
    assert C.signature_lines([comparison(signature="")]) == ""


def test_system_values_collect_the_baseline_and_every_other_system():
    rows = [
        comparison("B", value_b=0.6),
        comparison("C", value_b=0.2),
        comparison("B", key="k", value_a=1.0, value_b=2.0),
    ]
    assert C.system_values(rows) == {"m": {"A": 0.5, "B": 0.6, "C": 0.2}, "k": {"A": 1.0, "B": 2.0}}


def test_config_bounds():
    CompareConfig(n_boot=1, n_rounds=1, ci_level=0.5)  # the smallest accepted
    for bad in (dict(n_boot=0), dict(n_rounds=0), dict(ci_level=0.0), dict(ci_level=1.0), dict(ci_level=1.5)):
        with pytest.raises(ValueError, match=f"^{next(iter(bad))} must be "):
            CompareConfig(**bad)
    with pytest.raises(ValueError, match=r"n_boot must be >= 1, got 0"):
        CompareConfig(n_boot=0, n_rounds=5)
    with pytest.raises(ValueError, match=r"ci_level must be < 1, got 1.0"):
        CompareConfig(ci_level=1.0)
    with pytest.raises(ValueError, match=r"correction must be one of holm, bh, none, got 'x'"):
        CompareConfig(correction="x")
    assert CompareConfig() == CompareConfig(n_boot=1000, n_rounds=10000, seed=0, ci_level=0.95, correction="holm")


def test_swap_masks_enumerate_all_patterns_up_to_the_round_count():
    masks, exact = resampling.swap_masks(3, 8, 0)
    assert exact and masks.dtype == bool
    # pattern k swaps study j when bit j of k is set
    assert masks.astype(int).tolist() == [
        [0, 0, 0],
        [1, 0, 0],
        [0, 1, 0],
        [1, 1, 0],
        [0, 0, 1],
        [1, 0, 1],
        [0, 1, 1],
        [1, 1, 1],
    ]
    masks, exact = resampling.swap_masks(3, 7, 4)
    assert not exact
    assert np.array_equal(masks, np.random.default_rng(4).random((7, 3)) < 0.5)


def test_randomization_counts_float_ties_as_reaching_the_observed_difference():
    # d = b - a = (0.1, -0.1, -0.1, 0.4), observed |sum d| = 0.3. In exact arithmetic 14 of the 16
    # sign patterns reach it (all but the two where only the 0.1 and the 0.4 differ in sign: |sum| = 0.1);
    # in floats some ties fall a rounding error short of the observed value, and the tolerance keeps them
    a, b = col([0.2, 0.7, 0.7, 0.2]), col([0.3, 0.6, 0.6, 0.6])
    assert resampling.randomization_p(a, b, corpus.column_mean, n_rounds=16, seed=0) == 14 / 16


def test_randomization_of_an_undefined_statistic_is_nan():
    assert math.isnan(resampling.randomization_p(col([math.nan] * 3), col([1.0, 2.0, 3.0]), corpus.column_mean, 8, 0))


def test_column_mean_skips_nan_and_is_nan_when_nothing_is_left():
    assert corpus.column_mean(col([math.nan, 1.0, 2.0])) == 1.5
    assert math.isnan(corpus.column_mean(col([math.nan, math.nan])))
    assert corpus.column_mean(np.array([[1.0, 100.0], [3.0, 100.0]])) == 2.0  # the first column only


def test_micro_statistics_with_zero_denominators_are_zero():
    zero = np.array([[0.0, 0.0, 0.0]])
    assert [corpus._micro(p)(zero) for p in ("precision", "recall", "f1")] == [0.0, 0.0, 0.0]
    counts = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])  # tp 2, fp 1, fn 3
    assert corpus._micro("precision")(counts) == pytest.approx(2 / 3)
    assert corpus._micro("recall")(counts) == pytest.approx(2 / 5)
    assert corpus._micro("f1")(counts) == pytest.approx(4 / 8)


def test_statistics_of_a_table_with_bleu_statistics_and_counts():
    columns = ["rouge_l", "bleu_1", "bleu_4", *corpus.BLEU_COLUMNS, *corpus.COUNT_COLUMNS]
    stats = corpus.statistics(columns)
    assert [s.key for s in stats] == [
        "rouge_l",
        "bleu_1",
        "bleu_2",
        "bleu_3",
        "bleu_4",
        "ce_precision_micro",
        "ce_recall_micro",
        "ce_f1_micro",
    ]
    by_key = {s.key: s for s in stats}
    assert (
        by_key["bleu_2"].columns == corpus.BLEU_COLUMNS and by_key["bleu_2"].label == "corpus BLEU, as in summary.csv"
    )
    assert by_key["ce_f1_micro"].columns == corpus.COUNT_COLUMNS
    assert by_key["ce_f1_micro"].label == "micro, from per-report counts"
    assert by_key["rouge_l"].columns == ("rouge_l",) and by_key["rouge_l"].label == corpus.MEAN
    # without all the BLEU statistics, sentence BLEU stays (labelled), and partial counts give no micro
    partial = corpus.statistics(["bleu_1", corpus.BLEU_COLUMNS[0], "ce_tp", "ce_fp"])
    assert [s.key for s in partial] == ["bleu_1"]
    assert partial[0].label == "mean of sentence BLEU, not corpus BLEU"


def test_numeric_columns_exclude_text_and_booleans():
    table = {"x": [1, 2.5], "flag": [True, False], "status": ["ok", "ok"], "mixed": [1.0, None], "empty": []}
    assert C.numeric_columns(table) == ["x", "empty"]


def test_compare_tables_refuses_different_study_counts_and_uses_shared_columns():
    with pytest.raises(UserError, match=r"same studies, got counts \{'a': 2, 'b': 3\}"):
        C.compare_tables({"a": {"x": [1.0, 2.0]}, "b": {"x": [1.0, 2.0, 3.0]}})
    rows = C.compare_tables(
        {"a": {"x": [0.0, 1.0], "y": [1.0, 1.0]}, "b": {"x": [1.0, 1.0], "z": [0.0, 0.0]}},
        CompareConfig(n_boot=10, n_rounds=4),
    )
    assert [(r.key, r.system_a, r.system_b, r.value_a, r.value_b, r.n) for r in rows] == [("x", "a", "b", 0.5, 1.0, 2)]
    assert rows[0].correction == "holm" and rows[0].signature == ""


def test_compare_pair_uses_the_configured_level_and_seed():
    a, b = col([0.0, 0.2, 0.4, 0.9, 0.3]), col([0.5, 0.1, 0.8, 1.0, 0.6])
    cfg = CompareConfig(n_boot=300, n_rounds=32, seed=11, ci_level=0.8)
    row = C.compare_pair(a, b, corpus.Statistic("x", ("x",), corpus.column_mean, "mean"), ("a", "b"), cfg)
    idx = np.random.default_rng(11).integers(0, 5, size=(300, 5))
    sa, sb = a[idx, 0].mean(axis=1), b[idx, 0].mean(axis=1)
    assert row.ci_a == pytest.approx(tuple(np.percentile(sa, [10, 90])))
    assert row.ci_b == pytest.approx(tuple(np.percentile(sb, [10, 90])))
    assert row.ci_difference == pytest.approx(tuple(np.percentile(sb - sa, [10, 90])))
    assert (row.key, row.statistic, row.system_a, row.system_b, row.n) == ("x", "mean", "a", "b", 5)
    assert row.difference == pytest.approx(3.0 / 5 - 1.8 / 5)


def test_per_report_tables_need_a_study_id_and_a_shared_study(tmp_path):
    pl.DataFrame({"id": ["1"], "m": [0.5]}).write_parquet(tmp_path / "noid.parquet")
    pl.DataFrame({"study_id": ["1", "2"], "m": [0.5, 0.1]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"study_id": [3, 4], "m": [0.5, 0.2]}).write_parquet(tmp_path / "b.parquet")
    with pytest.raises(UserError, match="noid.parquet has no study_id column"):
        C.run_compare_tables(
            {"a": str(tmp_path / "a.parquet"), "x": str(tmp_path / "noid.parquet")}, str(tmp_path / "o")
        )
    with pytest.raises(UserError, match="share no study id"):
        C.run_compare_tables({"a": str(tmp_path / "a.parquet"), "b": str(tmp_path / "b.parquet")}, str(tmp_path / "o"))


def test_per_report_tables_joined_on_study_id_write_every_output(tmp_path):
    # integer ids in one table and strings in the other still join; study 9 is in b only
    pl.DataFrame({"study_id": ["1", "2", "3"], "m": [0.0, 0.5, 1.0], "reference": ["x"] * 3}).write_parquet(
        tmp_path / "a.parquet"
    )
    pl.DataFrame({"study_id": [3, 9, 1, 2], "m": [1.0, 0.0, 1.0, 1.0]}).write_parquet(tmp_path / "b.parquet")
    out = tmp_path / "o"
    rows = C.run_compare_tables(
        {"a": str(tmp_path / "a.parquet"), "b": str(tmp_path / "b.parquet")},
        str(out),
        CompareConfig(n_boot=20, n_rounds=8, ci_level=0.9),
        allow_mixed=True,  # hand-made tables carry no signatures
    )
    assert [(r.key, r.value_a, r.value_b) for r in rows] == [("m", 0.5, 1.0)]
    unmatched = pl.read_csv(out / "unmatched.csv", schema_overrides={"study_id": pl.String})
    assert unmatched.rows() == [("9", "per_report", "b")]
    assert pl.read_csv(out / "compare.csv")["metric"].to_list() == ["m"]
    assert (out / "compare.md").read_text().startswith("### b vs a (3 studies; 90% paired-bootstrap CIs)")
    assert (
        (out / "ranking_agreement.md")
        .read_text()
        .startswith(
            "System-ranking agreement: Kendall tau-b between the system rankings two metrics induce (raw values, "
            "higher "
            "first; needs three or more systems)."
        )
    )


def test_compare_systems_passes_the_metric_options_and_signs_corpus_bleu():
    refs = ["the heart is normal in size", "small left pleural effusion", "no pneumothorax seen"]
    hyps = {
        "a": ["the heart is large", "small effusion", "pneumothorax seen"],
        "b": ["the heart is normal", "small left effusion", "no pneumothorax"],
    }
    options = {"bleu": {"tokenization": "none"}, "rouge_l": {"max_tokens": 2}}
    rows = {
        r.key: r
        for r in C.compare_systems(refs, hyps, ["bleu", "rouge_l"], options, CompareConfig(n_boot=20, n_rounds=8))
    }
    # rouge_l on the first two tokens only: LCS 2/2, 1/2 ("small left" vs "small effusion"), 1/2
    assert rows["rouge_l"].value_a == pytest.approx(2 / 3)
    assert rows["rouge_l"].value_b == 1.0  # the first two tokens of every hypothesis of b match
    assert rows["rouge_l"].signature == "rouge_l|tok:r2gen|max_tokens:2|srrg:0.1.0"
    # corpus BLEU is resampled from its n-gram statistics, which carry bleu_4's signature
    assert {rows[f"bleu_{k}"].signature for k in range(1, 5)} == {"bleu|tok:none|srrg:0.1.0"}


def test_per_report_tables_without_unmatched_studies_still_write_the_unmatched_header(tmp_path):
    for name in "ab":
        pl.DataFrame({"study_id": ["1", "2"], "m": [0.0, 1.0]}).write_parquet(tmp_path / f"{name}.parquet")
    C.run_compare_tables(
        {n: str(tmp_path / f"{n}.parquet") for n in "ab"},
        str(tmp_path / "o"),
        CompareConfig(n_boot=5, n_rounds=4),
        allow_mixed=True,  # hand-made tables carry no signatures
    )
    assert (tmp_path / "o" / "unmatched.csv").read_text() == "study_id,side,system\n"


def test_corpus_bleu_follows_the_bleu_tokenization_option():
    refs = ["The heart is normal.", "Small left effusion."]
    hyps = {"a": ["the heart is normal", "small left effusion"], "b": ["The heart is normal.", "Small left effusion."]}
    none = {
        r.key: r
        for r in C.compare_systems(
            refs, hyps, ["bleu"], {"bleu": {"tokenization": "none"}}, CompareConfig(n_boot=10, n_rounds=4)
        )
    }
    default = {r.key: r for r in C.compare_systems(refs, hyps, ["bleu"], None, CompareConfig(n_boot=10, n_rounds=4))}
    # r2gen lower-cases and drops the periods: a matches every reference; split on spaces only it does not
    assert default["bleu_1"].value_a == pytest.approx(1.0) and default["bleu_1"].value_b == pytest.approx(1.0)
    assert none["bleu_1"].value_b == pytest.approx(1.0) and none["bleu_1"].value_a < 0.5


def test_each_kind_of_p_value_is_adjusted_with_the_configured_method():
    rows = [
        comparison(key=k, p_bootstrap=pb, p_randomization=pr)
        for k, pb, pr in (("m", 0.01, 0.04), ("k", 0.03, 0.01), ("j", 0.04, 0.03))
    ]
    # BH over three: sorted p * 3 / rank, then the running minimum from the largest
    bh = C.corrected(rows, "bh")
    assert [r.p_bootstrap_adj for r in bh] == pytest.approx([0.03, 0.04, 0.04])
    assert [r.p_randomization_adj for r in bh] == pytest.approx([0.04, 0.03, 0.04])
    # Holm: sorted p * (3, 2, 1), then the running maximum
    holm = C.corrected(rows, "holm")
    assert [r.p_bootstrap_adj for r in holm] == pytest.approx([0.03, 0.06, 0.06])
    assert [r.p_randomization_adj for r in holm] == pytest.approx([0.06, 0.03, 0.06])
    none = C.corrected(rows, "none")
    assert [(r.correction, r.p_bootstrap_adj, r.p_randomization_adj) for r in none] == [
        ("none", 0.01, 0.04),
        ("none", 0.03, 0.01),
        ("none", 0.04, 0.03),
    ]
    assert [(r.key, r.p_bootstrap, r.correction) for r in bh] == [
        ("m", 0.01, "bh"),
        ("k", 0.03, "bh"),
        ("j", 0.04, "bh"),
    ]


def test_run_compare_reads_the_report_columns_by_default(tmp_path):
    ids = ["s1", "s2"]
    refs = pl.DataFrame({"study_id": ids, "report": ["small effusion", "no pneumothorax"]})
    refs.write_parquet(tmp_path / "r.parquet")
    pl.DataFrame({"study_id": ids, "report": ["small effusion", "pneumothorax"]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"study_id": ids, "report": ["effusion", "no pneumothorax"]}).write_parquet(tmp_path / "b.parquet")
    systems = {"a": str(tmp_path / "a.parquet"), "b": str(tmp_path / "b.parquet")}
    rows = C.run_compare(
        str(tmp_path / "r.parquet"), systems, ["rouge_l"], str(tmp_path / "o"), cfg=CompareConfig(n_boot=10, n_rounds=4)
    )
    assert [(r.key, r.system_a, r.system_b, r.n) for r in rows] == [("rouge_l", "a", "b", 2)]
