"""Dataset readers on synthetic fixtures in each published layout (tests/fixtures/rating_layouts), and the metaeval
commands (`srrg metaeval-prepare`, `metaeval-correlate`, `judge-subset`) end to end."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from metaeval_helpers import radpref_prepared
from paths import FIXTURES, SHARED_DATA

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metaeval.readers.common import human_category_counts, human_scores
from srrg.metaeval.readers.load import load_dataset
from srrg.metaeval.run import run_metaeval
from srrg.settings.metaeval import MetaevalConfig

LAYOUTS = FIXTURES / "rating_layouts"
SHARED_RADPREF = SHARED_DATA / "rating_layouts" / "radpref"


def _human(ds, target):
    frame, lower = human_scores(ds.ratings, target)
    return dict(zip(frame["pair_id"], frame["human"])), lower


def test_radpref_layout_counts_ratings_and_errors():
    ds = load_dataset("radpref", LAYOUTS / "radpref")
    # 4 cases x 2 candidates; 3 raters, user_3 skips study_04: 8 + 8 + 6 rated candidates, each
    # with 1 rating row and 8 false/missing-finding rows (4 levels each) plus 4 attribute rows
    assert ds.pairs.height == 8 and ds.pairs["cluster"].n_unique() == 4
    assert ds.ratings["rater"].unique().sort().to_list() == ["user_1", "user_2", "user_3"]
    assert ds.ratings.filter(pl.col("kind") == "rating").height == 22
    assert ds.ratings.height == 22 + 22 * 8 + 4
    assert ds.notes["skipped_cases_per_rater"] == {"user_1": 0, "user_2": 0, "user_3": 1}
    assert ds.notes["pairs_without_rating"] == 0
    ratings, lower = _human(ds, "rating")
    assert not lower and ratings["study_01:C1"] == pytest.approx(13 / 3) and ratings["study_04:C1"] == 2.5
    sig, lower = _human(ds, "errors_significant")
    # study_01:C2: user_1 location attribute (significant) + urgent false finding + actionable
    # missing finding = 3, user_2 urgent missing = 1, user_3 benign false finding = 0
    assert (
        lower and sig["study_01:C2"] == pytest.approx(4 / 3) and sig["study_04:C1"] == 0.5 and sig["study_02:C2"] == 0
    )
    insig, _ = _human(ds, "errors_insignificant")
    assert insig["study_01:C2"] == pytest.approx(2 / 3) and insig["study_02:C1"] == pytest.approx(2 / 3)
    attrs = ds.ratings.filter(pl.col("category").str.starts_with("attribute_"))
    assert sorted(zip(attrs["category"], attrs["significance"])) == [
        ("attribute_location", "negligible"), ("attribute_location", "significant"),
        ("attribute_measurement", "significant"), ("attribute_severity", "negligible"),
    ]  # fmt: skip
    levels = set(ds.ratings.filter(pl.col("category") == "missing_finding")["significance"])
    assert levels == {"urgent", "actionable_not_urgent", "not_actionable_not_urgent", "benign_expected"}
    row = ds.pairs.filter(pl.col("pair_id") == "study_02:C1").row(0, named=True)
    assert row["system"] == "gen_beta" and json.loads(row["context"])["PatientAge"] == "81"


@pytest.mark.skipif(not SHARED_RADPREF.is_dir(), reason="../shared/data/rating_layouts/radpref is absent")
def test_radpref_reads_the_shared_layout_sample_in_place():
    ds = load_dataset("radpref", SHARED_RADPREF)
    assert ds.pairs.height == 6 and ds.ratings["rater"].n_unique() == 3
    assert ds.ratings.filter(pl.col("kind") == "rating").height == 16  # user_3 skips case_c
    assert ds.notes["skipped_cases_per_rater"]["user_3"] == 1
    assert _human(ds, "rating")[0]["case_c:C2"] == 2.5


def _copy_radpref(tmp_path):
    import shutil

    return Path(shutil.copytree(LAYOUTS / "radpref", tmp_path / "radpref"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["annotations"].clear(), "annotated no case"),
        (lambda d: d["annotations"].update(nope=d["annotations"]["study_01"]), "not in preference_data.json"),
        (
            lambda d: d["annotations"]["study_01"]["C1"].update(finding_errors=[{"error_type": "false"}]),
            "keyed by finding index",
        ),
        (lambda d: d["annotations"]["study_01"]["C1"].update(rating=7), "rating must be a number 1-5"),
        (
            lambda d: d["annotations"]["study_03"]["C2"]["finding_errors"]["0"].update(clinical_significance="major"),
            "clinical_significance",
        ),
        (lambda d: d.pop("user_id"), "user_id"),
    ],
)
def test_radpref_bad_annotation_files_are_one_line_errors(tmp_path, edit, message):
    root = _copy_radpref(tmp_path)
    path = root / "radiologist_annotations" / "user_1.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message):
        load_dataset("radpref", root)


def test_rexval_layout_counts_and_error_counts():
    ds = load_dataset("rexval", LAYOUTS / "rexval")
    # 3 studies x 4 candidate types; full grid of 6 categories x 6 raters x 2 significance levels
    assert ds.pairs.height == 12 and ds.ratings.height == 12 * 6 * 6 * 2 and ds.ratings["rater"].n_unique() == 6
    assert ds.pairs.filter(pl.col("pair_id") == "0:bleu")["candidate"][0] == "Large left pneumothorax."
    assert ds.pairs.filter(pl.col("pair_id") == "0:bleu")["cluster"][0] == "0"
    sig, lower = _human(ds, "errors_significant")
    # 0:bleu significant: rater 0 has 2, rater 1 has 1, rater 3 has 1 -> 4 / 6 raters
    assert lower and sig["0:bleu"] == pytest.approx(4 / 6) and sig["2:s_emb"] == 0.5 and sig["0:radgraph"] == 0
    total, _ = _human(ds, "errors_total")
    assert total["0:bleu"] == pytest.approx(5 / 6) and total["1:radgraph"] == pytest.approx(2 / 6)
    row = human_category_counts(ds.ratings).filter(pl.col("pair_id") == "0:bleu").row(0, named=True)
    assert row["a"] == 0.5 and row["b"] == pytest.approx(1 / 6)


def test_rate_eval_folder_and_file(tmp_path):
    folder = LAYOUTS / "rate_eval" / "Task2_paragraph_rate"
    ds = load_dataset("rate_eval", folder)
    assert ds.pairs.height == 7 and ds.ratings.height == 6 and ds.notes["pairs_without_rating"] == 1
    ratings, _ = _human(ds, "rating")
    assert ratings["rate_train:0"] == 4.25 and ratings["rate_test:2"] == 0.0
    assert ds.pairs.filter(pl.col("reference") == "Moderate pulmonary edema.")["cluster"].n_unique() == 1
    one = load_dataset("rate_eval", folder / "rate_test.csv")
    assert one.pairs["pair_id"].to_list() == ["0", "1", "2", "3"] and one.ratings.height == 3


def test_radevalx_layout_counts_and_errors(tmp_path):
    root = LAYOUTS / "radevalx"
    ds = load_dataset("radevalx", root / "radevalx_annotations.csv", reports=str(root / "radevalx_report.csv"))
    # 3 reports x 2 error types x 8 categories
    assert ds.pairs.height == 3 and ds.ratings.height == 48 and ds.notes["pairs_without_rating"] == 0
    sig, lower = _human(ds, "errors_significant")
    assert lower and sig == {"701": 1.0, "702": 0.0, "703": 1.0}
    assert _human(ds, "errors_total")[0]["701"] == 3.0  # "four" and "eight" insignificant errors too
    row = human_category_counts(ds.ratings).filter(pl.col("pair_id") == "703").row(0, named=True)
    assert row["a"] == 1.0 and row["b"] == 0.0
    with pytest.raises(UserError, match="pass option reports"):
        load_dataset("radevalx", root / "radevalx_annotations.csv")
    bad = tmp_path / "a.csv"
    bad.write_text((root / "radevalx_annotations.csv").read_text().replace("701,significant,0,1", "701,significant,,1"))
    with pytest.raises(UserError, match="error count must be a number"):
        load_dataset("radevalx", bad, reports=str(root / "radevalx_report.csv"))
    with pytest.raises(UserError, match="missing column"):
        load_dataset("rate_eval", root / "radevalx_report.csv")
    with pytest.raises(UserError, match="unknown ratings adapter"):
        load_dataset("nope", root)
    with pytest.raises(UserError, match=r"unknown key\(s\) rexval\.options\.reference_col \(allowed: candidates\)"):
        load_dataset("rexval", LAYOUTS / "rexval", reference_col="x")


def test_radeval_expert_layout_counts_and_unreadable_cells():
    ds = load_dataset("radeval_expert", LAYOUTS / "radeval_expert")
    # 3 rows x 3 candidates; 7 readable annotation cells x 7 categories x 2 significance levels;
    # one blank cell and one with a missing line have no rating (never zeros)
    assert ds.pairs.height == 9 and ds.ratings.height == 7 * 14 and ds.notes["unreadable_annotation_cells"] == 2
    assert ds.pairs["cluster"].n_unique() == 2 and sorted(ds.ratings["rater"].unique()) == ["reader_a", "reader_b"]
    sig, _ = _human(ds, "errors_significant")
    assert "0:3" not in sig and "2:2" not in sig and sig["0:2"] == 2.0 and sig["1:2"] == 1.0
    total, _ = _human(ds, "errors_total")
    assert total["0:1"] == 1.0 and total["1:3"] == 1.0  # insignificant inarticulate / comparison errors
    assert ds.pairs.filter(pl.col("pair_id") == "1:3")["system"][0] == "prediction3"


def test_readers_that_read_no_rating_fail(tmp_path):
    (tmp_path / "rate_test.csv").write_text("gt_report,similar_report,Score\nA.,B.,\n")
    with pytest.raises(UserError, match="no rating was read"):
        load_dataset("rate_eval", tmp_path)
    rex = tmp_path / "rex"
    rex.mkdir()
    (rex / "50_samples_gt_and_candidates.csv").write_text("study_id,gt_report,bleu\n1,A.,B.\n")
    (rex / "6_valid_raters_per_rater_error_categories.csv").write_text(
        "study_number,candidate_type,error_category,rater_index,clinically_significant,num_errors\n5,bleu,1,0,True,1\n"
    )
    with pytest.raises(UserError, match="no rating was read"):
        load_dataset("rexval", rex)


def test_run_metaeval_counts_and_paired():
    ds = load_dataset("rexval", LAYOUTS / "rexval")
    ids = sorted(ds.pairs["pair_id"])
    sig = _human(ds, "errors_significant")[0]
    scores = pl.DataFrame(
        {
            "study_id": ids,
            "good": [1 - sig[i] for i in ids],
            "bad": [sig[i] for i in ids],
            "green_sig_a": [1 if i == "0:bleu" else 0 for i in ids],
            "green_sig_b": [0] * len(ids),
        }
    )
    res = run_metaeval(scores, ds.ratings, MetaevalConfig(metrics=["good", "bad"], n_boot=20), ds.pairs)
    k = res.correlations.filter((pl.col("metric") == "good") & (pl.col("method") == "kendall"))
    assert k["value"][0] == pytest.approx(1.0) and k["n_clusters"][0] == 3
    assert res.info["human_target"] == "errors_significant" and res.info["human_lower_is_better"]
    assert res.info["resampling"] == "cases (3 clusters)" and res.paired["metric_a"][0] == "good"
    prf = {r["category"]: r for r in res.category_prf.iter_rows(named=True)}
    # category a: judge 1 on 0:bleu vs the raters' mean 0.5 -> TP 0.5, FP 0.5, FN 0
    assert (prf["a"]["tp"], prf["a"]["fp"], prf["a"]["fn"]) == (0.5, 0.5, 0.0)
    # three studies with 4 candidates each: 6 within-study comparisons per study
    pref = res.preference.filter(pl.col("metric") == "good").row(0, named=True)
    assert (
        pref["n_cases"] == 3
        and pref["n_comparisons"] == 18
        and pref["disagree"] == 0
        and pref["agreement_untied"] == 1.0
    )


def test_prepare_writes_pairs_and_counts(tmp_path, capsys):
    prep = radpref_prepared(tmp_path)
    assert "8 pairs in 4 cases, 3 raters, 202 rating rows, 0 pairs without rating" in capsys.readouterr().out
    info = json.loads((prep / "info.json").read_text())
    assert (info["n_pairs"], info["n_clusters"], info["n_raters"], info["n_rating_rows"]) == (8, 4, 3, 202)
    assert info["skipped_cases_per_rater"]["user_3"] == 1
    pairs = pl.read_parquet(prep / "pairs.parquet")
    assert pairs.columns == ["pair_id", "reference", "candidate", "cluster", "system", "context", "split"]
    assert set(pairs["split"]) == {""}  # this layout publishes no split


def test_correlate_cli_end_to_end(tmp_path):
    prep = radpref_prepared(tmp_path)
    refs = pl.read_parquet(prep / "refs.parquet")
    assert refs.columns == ["study_id", "report", "age", "sex", "indication"] and refs.height == 8  # + patient context
    rating = _human(load_dataset("radpref", LAYOUTS / "radpref"), "rating")[0]
    ids = refs["study_id"].to_list()
    scores = refs.select("study_id").with_columns(
        pl.Series("m1", [rating[i] / 5 for i in ids]),
        pl.Series("m2", [0.5 + 0.01 * k for k in range(8)]),
        pl.Series("m3", [1 - rating[i] / 5 for i in ids]),
    )
    scores = pl.concat([scores, pl.DataFrame({"study_id": ["extra"], "m1": [0.5], "m2": [0.5], "m3": [0.5]})])
    scores.write_parquet(tmp_path / "per_report.parquet")
    cfg = json.dumps({"n_boot": 50, "ensembles": {"m1+m2": ["m1", "m2"]}, "test_fraction": 0.5, "caveat": "toy data"})
    out = tmp_path / "out"
    args = ["metaeval-correlate", "--scores", str(tmp_path / "per_report.parquet"),
            "--ratings", str(prep / "ratings.parquet"), "--out", str(out), "--config", cfg]  # fmt: skip
    assert srrg_main([*args, "--pairs", str(prep / "pairs.parquet")]) == 2  # "extra" is not a pair of the dataset
    scores.filter(pl.col("study_id") != "extra").write_parquet(tmp_path / "per_report.parquet")
    assert srrg_main([*args, "--pairs", str(prep / "pairs.parquet")]) == 0
    gema = (out / "table_gema.md").read_text()
    assert gema.startswith("toy data") and "| m1 |" in gema and "Kendall τb" in gema and "cases (4 clusters)" in gema
    assert "\\begin{tabular}" in (out / "table_srrg.tex").read_text()
    info = json.loads((out / "info.json").read_text())
    assert info["human_target"] == "rating" and info["n_with_human"] == 8 and info["n_without_human"] == 0
    corr = pl.read_csv(out / "correlations.csv")
    assert corr.filter(pl.col("metric") == "m1")["value"].to_list() == pytest.approx([1.0, 1.0])
    # 4 cases are fewer than the default min_cases (10): no clustered CI or paired test, the caption says why
    assert corr["ci_low"].is_nan().all() and corr["ci_high"].is_nan().all()
    assert set(corr["ci_status"]) == {"too_few_cases"}
    assert set(pl.read_csv(out / "paired_tests.csv")["status"]) == {"too_few_cases"}
    assert (
        "No CI or paired test (–) where only 4 or fewer cases were resampled: a case-clustered bootstrap "
        "needs at least 10 cases (metaeval.correlate.min_cases)."
    ) in gema
    assert (info["min_cases"], info["ci_note"] != "") == (10, True)
    four = json.dumps({"n_boot": 50, "min_cases": 4})
    assert srrg_main([*args[:-1], four, "--pairs", str(prep / "pairs.parquet")]) == 0
    corr = pl.read_csv(out / "correlations.csv")
    assert corr.filter(pl.col("method") == "kendall")["ci_low"].is_finite().all() and set(corr["ci_status"]) == {"ok"}
    assert "min_cases" not in (out / "table_gema.md").read_text()
    pref = {r["metric"]: r for r in pl.read_csv(out / "preference_agreement.csv").iter_rows(named=True)}
    assert pref["m1"]["agree"] == 4 and pref["m3"]["disagree"] == 4 and pref["m1"]["n_cases"] == 4
    systems = pl.read_csv(out / "system_agreement.csv")
    human_m1 = systems.filter((pl.col("metric_a") == "human") & (pl.col("metric_b") == "m1"))
    assert human_m1["kendall"][0] == pytest.approx(1.0) and human_m1["n_systems"][0] == 3
    assert "| human |" in (out / "system_agreement.md").read_text()


def test_correlate_measuring_nothing_exits_2(tmp_path, capsys):
    prep = radpref_prepared(tmp_path)
    capsys.readouterr()
    ids = pl.read_parquet(prep / "refs.parquet")["study_id"].to_list()

    def correlate(scores: pl.DataFrame, ratings: Path) -> tuple[int, str]:
        scores.write_parquet(tmp_path / "s.parquet")
        rc = srrg_main(
            [
                "metaeval-correlate",
                "--scores",
                str(tmp_path / "s.parquet"),
                "--ratings",
                str(ratings),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        err = capsys.readouterr().err.strip()
        assert "\n" not in err  # one line
        return rc, err

    ratings = prep / "ratings.parquet"
    rc, err = correlate(
        pl.DataFrame({"study_id": [f"x{i}" for i in range(8)], "m": [0.1 * i for i in range(8)]}), ratings
    )
    assert rc == 2 and "no scored pair has a human score" in err
    rc, err = correlate(
        pl.DataFrame({"study_id": ids, "m": [float("nan")] * 8, "k": [0.1 * i for i in range(8)]}), ratings
    )
    assert rc == 2 and "'m' has no finite value" in err
    # with drop_unmeasured the empty column is left out and named in the caption and info.json
    scores = pl.DataFrame({"study_id": ids, "m": [float("nan")] * 8, "k": [0.1 * i for i in range(8)]})
    scores.write_parquet(tmp_path / "s.parquet")
    rc = srrg_main(
        [
            "metaeval-correlate",
            "--scores",
            str(tmp_path / "s.parquet"),
            "--ratings",
            str(ratings),
            "--out",
            str(tmp_path / "d"),
            "--config",
            '{"drop_unmeasured": true}',
        ]
    )
    assert rc == 0
    info = json.loads((tmp_path / "d" / "info.json").read_text())
    assert info["metrics"] == ["k"] and info["metrics_without_value"] == ["m"]
    assert "Left out, no finite value on a rated pair: m." in (tmp_path / "d" / "table_gema.md").read_text()
    # ... but not when it is the only column
    rc, err = correlate(pl.DataFrame({"study_id": ids, "m": [float("nan")] * 8}), ratings)
    assert rc == 2 and "'m' has no finite value" in err
    pl.read_parquet(ratings).head(0).write_parquet(tmp_path / "empty.parquet")
    rc, err = correlate(pl.DataFrame({"study_id": ids, "m": [0.1 * i for i in range(8)]}), tmp_path / "empty.parquet")
    assert rc == 2 and "empty.parquet: no rating rows" in err


def test_correlate_tables_without_their_columns_are_one_line(tmp_path, capsys):
    """A scores, ratings or pairs table that lacks the columns the correlation reads (a file mixed
    up with another) is one line naming the file and the columns, exit 2, not a join traceback."""
    prep = radpref_prepared(tmp_path)
    scores = tmp_path / "s.jsonl"
    scores.write_text('{"a": 1}\n')
    good = tmp_path / "good.parquet"
    ids = pl.read_parquet(prep / "refs.parquet")["study_id"].to_list()
    pl.DataFrame({"study_id": ids, "m": [0.1 * i for i in range(len(ids))]}).write_parquet(good)
    cases = [
        (scores, prep / "ratings.parquet", None, "s.jsonl: lacks column(s) ['study_id']"),
        (good, prep / "refs.parquet", None, "refs.parquet: lacks column(s) ['pair_id', 'rater', 'kind'"),
        (good, prep / "ratings.parquet", prep / "refs.parquet", "refs.parquet: lacks column(s) ['pair_id']"),
    ]
    for i, (s, ratings, pairs, expected) in enumerate(cases):
        capsys.readouterr()
        args = ["metaeval-correlate", "--scores", str(s), "--ratings", str(ratings), "--out", str(tmp_path / f"o{i}")]
        rc = srrg_main(args + (["--pairs", str(pairs)] if pairs else []))
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "\n" not in err and expected in err, err


def test_correlate_with_proxy_column_and_errors(tmp_path, capsys):
    scores = pl.DataFrame(
        {"study_id": ["a", "b", "c", "d"], "m": [0.1, 0.4, 0.5, 0.9], "proxy_rating": [0.2, 0.3, 0.6, 0.8]}
    )
    scores.write_parquet(tmp_path / "s.parquet")
    cfg = json.dumps({"human_column": "proxy_rating", "n_boot": 10})
    assert (
        srrg_main(
            [
                "metaeval-correlate",
                "--scores",
                str(tmp_path / "s.parquet"),
                "--out",
                str(tmp_path / "o"),
                "--config",
                cfg,
            ]
        )
        == 0
    )
    corr = pl.read_csv(tmp_path / "o" / "correlations.csv")
    assert corr["metric"].unique().to_list() == ["m"] and corr["value"][0] == pytest.approx(1.0)
    assert (
        srrg_main(["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "o2")]) == 2
    )
    assert "no human ratings" in capsys.readouterr().err


def test_judge_chain_score_cli_then_proxy_correlation(tmp_path, monkeypatch):
    """The workflow's judge path: prepare a subset, `srrg score` the judges through an
    OpenAI-compatible server, correlate against the proxy rating (S-RRG Table 3)."""
    import re

    from judge_responses import green_answer, stub_llm_config
    from openai_stub import OpenAIStub, Reply, last_user_message

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    ids = [f"s{i}" for i in range(6)]
    pairs = pl.DataFrame(
        {
            "study_id": ids[::-1],
            "reference": ["Small left effusion."] * 6,
            "report": [f"candidate {i}" for i in range(6)][::-1],
        }
    )
    pairs.write_parquet(tmp_path / "pairs.parquet")
    sub = tmp_path / "subset"
    args = [
        "judge-subset",
        "--predictions",
        str(tmp_path / "pairs.parquet"),
        "--limit",
        "5",
        "--ref-col",
        "reference",
        "--hyp-col",
        "report",
        "--out-dir",
        str(sub),
    ]
    assert srrg_main(args) == 0
    assert pl.read_parquet(sub / "hyps.parquet")["study_id"].to_list() == ids[:5]

    def responder(body):
        prompt = last_user_message(body)
        k = int(re.search(r"candidate (\d)", prompt).group(1)) if re.search(r"candidate (\d)", prompt) else 0
        if "Disease Prediction" in prompt:
            return Reply(json.dumps({"disease_prediction": 10 - k, "detailed_descriptions": 10 - k}))
        return Reply(green_answer((k,) + (0,) * 5, 2, score=f"{1 - k / 10:.2f}"))

    with OpenAIStub(responder=responder) as stub:
        llm = stub_llm_config(stub.base_url, str(tmp_path / "cache"))
        options = json.dumps({m: {"llm": llm} for m in ("green", "vert", "proxy_rating")})
        scored = tmp_path / "scored"
        rc = srrg_main(
            [
                "score",
                "--refs",
                str(sub / "refs.parquet"),
                "--hyps",
                str(sub / "hyps.parquet"),
                "--metrics",
                "green,vert,proxy_rating",
                "--out",
                str(scored),
                "--config",
                options,
            ]
        )
        assert rc == 0
    per = pl.read_parquet(scored / "per_report.parquet")
    assert per.height == 5 and "green_explanation" in per.columns
    cfg = json.dumps({"human_column": "proxy_rating", "n_boot": 20, "caveat": "scripted judge"})
    assert (
        srrg_main(
            [
                "metaeval-correlate",
                "--scores",
                str(scored / "per_report.parquet"),
                "--out",
                str(tmp_path / "t"),
                "--config",
                cfg,
            ]
        )
        == 0
    )
    corr = pl.read_csv(tmp_path / "t" / "correlations.csv")
    assert set(corr["metric"]) == {"green", "vert", "green_formula", "f1_formula", "weighted_formula"}
    assert corr.filter(pl.col("metric") == "green")["value"].to_list() == pytest.approx([1.0, 1.0])
    assert "scripted judge" in (tmp_path / "t" / "table_srrg.md").read_text()
