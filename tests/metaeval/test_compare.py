"""`srrg compare`: paired bootstrap CIs and p-values, approximate randomization, against hand-computed
and independently computed expectations on tiny inputs."""

from __future__ import annotations

import itertools
import json

import numpy as np
import polars as pl
import pytest

from srrg.compare import compare_pair, compare_systems, compare_tables, numeric_columns
from srrg.errors import UserError
from srrg.metrics import evaluate
from srrg.metrics.corpus import Statistic, column_mean, statistics
from srrg.resampling import bootstrap_indices, randomization_p
from srrg.settings.compare import CompareConfig

MEAN = Statistic("x", ("x",), column_mean, "mean")


def col(values) -> np.ndarray:
    return np.asarray(values, dtype=float)[:, None]


def test_exact_randomization_hand_computed():
    # d = (1, 2, 3), observed |mean d| = 2; of the 8 sign patterns only +++ and --- reach |sum| = 6
    assert randomization_p(col([0, 0, 0]), col([1, 2, 3]), column_mean, n_rounds=8, seed=0) == 0.25
    # identical systems: every pattern ties the observed 0
    assert randomization_p(col([1, 2]), col([1, 2]), column_mean, n_rounds=100, seed=0) == 1.0


def test_sampled_randomization_close_to_exact_enumeration():
    rng = np.random.default_rng(3)
    a, b = rng.random(14), rng.random(14) + 0.15
    observed = abs(b.mean() - a.mean())
    exact = np.mean(
        [abs(np.mean(np.where(s, b - a, a - b))) >= observed - 1e-12 for s in itertools.product([0, 1], repeat=14)]
    )
    sampled = randomization_p(col(a), col(b), column_mean, n_rounds=4000, seed=1)  # 2^14 > 4000: sampled
    assert sampled == pytest.approx(exact, abs=0.02)


def test_bootstrap_ci_and_p_hand_computed():
    # resamples of two studies: difference of means 0, 1/2, 1/2, 1 with probability 1/4 each
    row = compare_pair(col([0, 0]), col([0, 1]), MEAN, ("a", "b"), CompareConfig(n_boot=20000, n_rounds=4, seed=0))
    assert (row.value_a, row.value_b, row.difference) == (0.0, 0.5, 0.5)
    assert row.p_bootstrap == pytest.approx(2 * 0.25, abs=0.02)  # share of differences <= 0, doubled
    assert row.ci_difference == (0.0, 1.0) and row.ci_a == (0.0, 0.0)
    assert row.p_randomization == 1.0  # swapping study 2 gives |diff| = 0.5 as well: all 4 patterns tie


def test_bootstrap_matches_an_independent_computation():
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    cfg = CompareConfig(n_boot=500, n_rounds=100, seed=7)
    row = compare_pair(col(a), col(b), MEAN, ("a", "b"), cfg)
    idx = bootstrap_indices(30, 500, 7)
    diff = b[idx].mean(axis=1) - a[idx].mean(axis=1)
    assert row.ci_difference == pytest.approx(tuple(np.percentile(diff, [2.5, 97.5])))
    assert row.ci_b == pytest.approx(tuple(np.percentile(b[idx].mean(axis=1), [2.5, 97.5])))
    far = min(np.sum(diff <= 0), np.sum(diff >= 0))
    assert row.p_bootstrap == pytest.approx(min(1.0, 2 * (far + 1) / (500 + 1)))  # +1 correction
    assert row.p_bootstrap_floor == 2 / 501 and row.p_randomization_floor == 1 / 101


def test_nan_values_are_skipped_per_system():
    row = compare_pair(
        col([np.nan, 1.0, 0.0]), col([1.0, np.nan, 1.0]), MEAN, ("a", "b"), CompareConfig(n_boot=10, n_rounds=8)
    )
    assert (row.value_a, row.value_b) == (0.5, 1.0)


def test_ce_micro_statistics_from_counts():
    table_a = {"ce_tp": [1.0, 0.0], "ce_fp": [1.0, 0.0], "ce_fn": [0.0, 2.0], "ce_status": ["ok", "ok"]}
    table_b = {"ce_tp": [1.0, 2.0], "ce_fp": [0.0, 0.0], "ce_fn": [0.0, 0.0], "ce_status": ["ok", "ok"]}
    assert [s.key for s in statistics(numeric_columns(table_a))] == [
        "ce_precision_micro",
        "ce_recall_micro",
        "ce_f1_micro",
    ]
    rows = {r.key: r for r in compare_tables({"a": table_a, "b": table_b}, CompareConfig(n_boot=50, n_rounds=4))}
    # a: tp 1 fp 1 fn 2 -> P 1/2, R 1/3, F1 2/5;  b: tp 3 -> 1, 1, 1
    assert (rows["ce_precision_micro"].value_a, rows["ce_recall_micro"].value_a) == (0.5, pytest.approx(1 / 3))
    assert rows["ce_f1_micro"].value_a == pytest.approx(0.4) and rows["ce_f1_micro"].value_b == 1.0


def test_compare_systems_values_equal_the_metric_summaries():
    ref = json.dumps(
        {
            "positive": [{"name": "edema", "probability": 3, "level": None, "location": None}],
            "negative": ["pneumothorax"],
        }
    )
    weak = json.dumps({"positive": [], "negative": ["pneumothorax"]})
    refs, good, bad = [ref] * 4, [ref, ref, ref, weak], [weak, weak, "not json", ref]
    rows = {
        r.key: r
        for r in compare_systems(
            refs, {"bad": bad, "good": good}, ["s_score", "rouge_l"], cfg=CompareConfig(n_boot=200, n_rounds=100)
        )
    }
    assert rows["s_score"].value_a == pytest.approx(evaluate(refs, bad, ["s_score"])["s_score"])
    assert rows["s_score"].value_b == pytest.approx(evaluate(refs, good, ["s_score"])["s_score"])
    assert rows["s_score"].system_a == "bad" and rows["s_score"].n == 4
    assert "s_score_hyp_status" not in rows and "rouge_l_status" not in rows  # text columns are not compared
    with pytest.raises(UserError, match="two or more systems"):
        compare_tables({"a": {"x": [1.0]}})


def test_srrg_compare_command(tmp_path, capsys):
    from srrg.cli import main

    ids = ["s1", "s2", "s3"]
    pl.DataFrame(
        {"study_id": ids, "report": ["the heart is normal", "small left effusion", "no pneumothorax"]}
    ).write_parquet(tmp_path / "refs.parquet")
    pl.DataFrame({"study_id": ids, "report": ["the heart is normal", "small effusion", "pneumothorax"]}).write_parquet(
        tmp_path / "a.parquet"
    )
    pl.DataFrame({"study_id": ids[:2] + ["s9"], "report": ["heart normal", "effusion", "x"]}).write_parquet(
        tmp_path / "b.parquet"
    )
    out = tmp_path / "cmp"
    code = main(
        [
            "compare",
            "--refs",
            str(tmp_path / "refs.parquet"),
            "--hyps",
            f"A={tmp_path / 'a.parquet'}",
            "--hyps",
            f"B={tmp_path / 'b.parquet'}",
            "--metrics",
            "rouge_l",
            "--out",
            str(out),
            "--n-boot",
            "100",
        ]
    )
    assert code == 0
    md = (out / "compare.md").read_text()
    assert (
        md.startswith("### B vs A (2 studies; 95% paired-bootstrap CIs)")
        and "| rouge_l | mean of per-report values |" in md
    )
    table = pl.read_csv(out / "compare.csv")
    assert table["metric"].to_list() == ["rouge_l"] and table["n"].to_list() == [2]
    unmatched = pl.read_csv(out / "unmatched.csv")
    assert sorted(zip(unmatched["study_id"], unmatched["side"], unmatched["system"])) == [
        ("s3", "reference", "B"),
        ("s9", "hypothesis", "B"),
    ]
    capsys.readouterr()
    assert (
        main(
            [
                "compare",
                "--refs",
                str(tmp_path / "refs.parquet"),
                "--hyps",
                f"A={tmp_path / 'a.parquet'}",
                "--metrics",
                "rouge_l",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert "two or more systems" in capsys.readouterr().err


def test_bleu_is_compared_as_corpus_bleu():
    refs = ["the heart is normal", "small left pleural effusion", "no pneumothorax", "the lungs are clear"]
    a = ["the heart is normal", "large effusion", "pneumothorax", "clear lungs"]
    b = ["heart normal", "small left effusion", "no pneumothorax", "the lungs are clear"]
    rows = {
        r.key: r for r in compare_systems(refs, {"a": a, "b": b}, ["bleu"], cfg=CompareConfig(n_boot=50, n_rounds=16))
    }
    for k in range(1, 5):  # the tested statistic is the summary's corpus BLEU, not a mean of sentence BLEU
        assert rows[f"bleu_{k}"].value_a == pytest.approx(evaluate(refs, a, ["bleu"])[f"bleu_{k}"], rel=1e-12)
        assert rows[f"bleu_{k}"].value_b == pytest.approx(evaluate(refs, b, ["bleu"])[f"bleu_{k}"], rel=1e-12)
        assert rows[f"bleu_{k}"].statistic.startswith("corpus BLEU")
    assert not any(key.startswith("bleu_stat_") for key in rows)


def test_srrg_compare_on_per_report_tables(tmp_path, capsys):
    from srrg.cli import main

    pl.DataFrame(
        {
            "study_id": ["1", "2", "3"],
            "rouge_l": [0.0, 0.5, None],
            "rouge_l_status": ["ok"] * 3,
            "green": [0.2, 0.4, 0.6],
        }
    ).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame(
        {
            "study_id": ["3", "2", "1", "4"],
            "rouge_l": [1.0, 1.0, 0.5, 0.0],
            "rouge_l_status": ["ok"] * 4,
            "green": [0.6, 0.4, 0.2, 0.0],
        }
    ).write_parquet(tmp_path / "b.parquet")
    out = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                "--per-report",
                f"a={tmp_path / 'a.parquet'}",
                "--per-report",
                f"b={tmp_path / 'b.parquet'}",
                "--out",
                str(out),
                "--n-boot",
                "50",
                "--n-rounds",
                "8",
                "--allow-mixed",  # hand-made tables carry no signatures
            ]
        )
        == 0
    )
    table = {r["metric"]: r for r in pl.read_csv(out / "compare.csv").iter_rows(named=True)}
    assert set(table) == {"rouge_l", "green"}  # aligned on study_id; text columns left out
    # a: (0, 0.5) with a null skipped -> 0.25; b on the same studies 1, 2, 3: (0.5, 1, 1) -> 5/6
    assert table["rouge_l"]["value_a"] == pytest.approx(0.25) and table["rouge_l"]["value_b"] == pytest.approx(5 / 6)
    assert table["green"]["difference"] == pytest.approx(0.0) and table["green"]["p_randomization"] == 1.0
    assert pl.read_csv(out / "unmatched.csv", schema_overrides={"study_id": pl.String})["study_id"].to_list() == ["4"]
    capsys.readouterr()
    assert main(["compare", "--per-report", f"a={tmp_path / 'a.parquet'}", "--refs", "x", "--out", str(out)]) == 2
    assert "not both" in capsys.readouterr().err


def test_compare_output_over_an_input_names_the_option_and_system_once(tmp_path, capsys):
    from srrg.cli import main

    a = tmp_path / "a.parquet"
    pl.DataFrame({"study_id": ["1", "2"], "m": [0.0, 1.0]}).write_parquet(a)
    assert main(["compare", "--per-report", f"a={a}", "--per-report", f"b={a}", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--out {tmp_path}: holds the input --per-report (system a) {a};" in err and "\n" not in err
    assert main(["compare", "--refs", str(a), "--hyps", f"x={a}", "--metrics", "bleu", "--out", str(a)]) == 2
    assert f"--out {a}: is also the input --refs" in capsys.readouterr().err
    assert (
        main(
            ["compare", "--refs", str(tmp_path / "r.parquet"), "--hyps", f"x={a}", "--metrics", "bleu", "--out", str(a)]
        )
        == 2
    )
    assert f"--out {a}: is also the input --hyps (system x);" in capsys.readouterr().err


def test_sentence_bleu_means_are_labeled_as_such():
    labels = {s.key: s.label for s in statistics(["bleu_4", "rouge_l"])}
    assert labels == {"bleu_4": "mean of sentence BLEU, not corpus BLEU", "rouge_l": "mean of per-report values"}
