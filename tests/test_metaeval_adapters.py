"""Dataset adapters on invented fixtures in each published layout, and the metaeval commands (`srrg metaeval-prepare`, `metaeval-correlate`, `judge-subset`) end to end."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.metaeval.adapters import human_category_counts, human_scores, load_dataset
from srrg.metaeval.run import MetaevalConfig, run_metaeval

DATA = Path(__file__).parent / "data" / "metaeval"


def _human(ds, target):
    frame, lower = human_scores(ds.ratings, target)
    return dict(zip(frame["pair_id"], frame["human"])), lower


def test_rexval_pairs_and_error_counts():
    ds = load_dataset("rexval", DATA / "rexval")
    assert sorted(ds.pairs["pair_id"]) == ["1:bleu", "1:radgraph", "2:bleu", "2:radgraph"]
    assert ds.pairs.filter(pl.col("pair_id") == "1:bleu")["candidate"][0] == "Large right pneumothorax."
    sig, lower = _human(ds, "errors_significant")
    # 1:bleu rater 0: 1 + 1 = 2, rater 1: 2 + 1 = 3 -> mean 2.5
    assert lower and sig["1:bleu"] == 2.5 and sig["1:radgraph"] == 0 and sig["2:bleu"] == 1
    total, _ = _human(ds, "errors_total")
    assert total["1:bleu"] == pytest.approx((3 + 3) / 2)
    counts = human_category_counts(ds.ratings)
    row = counts.filter(pl.col("pair_id") == "1:bleu").row(0, named=True)
    assert row["a"] == 1.5 and row["b"] == 1.0


def test_radpref_ratings_and_errors():
    ds = load_dataset("radpref", DATA / "radpref")
    assert ds.pairs.height == 4
    ratings, lower = _human(ds, "rating")
    assert not lower
    assert ratings["case1:C1"] == pytest.approx(14 / 3) and ratings["case1:C2"] == pytest.approx(7 / 3)
    assert ratings["case2:C2"] == 5
    sig, _ = _human(ds, "errors_significant")
    assert sig["case1:C2"] == 2 and sig["case2:C1"] == 1 and sig["case2:C2"] == 0
    insig, _ = _human(ds, "errors_insignificant")
    assert insig["case2:C1"] == 1


def test_rate_eval_and_radevalx_csv():
    rate = load_dataset("rate_eval", DATA / "rate_eval.csv")
    assert rate.pairs.height == 3 and _human(rate, "rating")[0]["1"] == pytest.approx(0.1)
    rx = load_dataset("radevalx", DATA / "radevalx.csv", rater_col="rater")
    scores, _ = _human(rx, "rating")
    assert rx.pairs.height == 2 and scores == {"0": 4.5, "1": 2.5}
    with pytest.raises(ValueError, match="missing column"):
        load_dataset("rate_eval", DATA / "radevalx.csv")
    with pytest.raises(ValueError, match="unknown ratings adapter"):
        load_dataset("nope", DATA)


def test_run_metaeval_counts_and_paired():
    ds = load_dataset("rexval", DATA / "rexval")
    ids = sorted(ds.pairs["pair_id"])
    scores = pl.DataFrame(
        {
            "study_id": ids,
            "good": [0.2, 1.0, 0.3, 0.9],  # 1:bleu, 1:radgraph, 2:bleu, 2:radgraph
            "bad": [0.9, 0.1, 0.8, 0.2],
            "green_sig_a": [1, 0, 1, 0],
            "green_sig_b": [0, 0, 0, 0],
        }
    )
    res = run_metaeval(scores, ds.ratings, MetaevalConfig(metrics=["good", "bad"], n_boot=20))
    k = res.correlations.filter((pl.col("metric") == "good") & (pl.col("method") == "kendall"))["value"][0]
    assert k > 0.5 and res.info["human_target"] == "errors_significant" and res.info["human_lower_is_better"]
    assert res.paired["metric_a"][0] == "good"
    prf = {r["category"]: r for r in res.category_prf.iter_rows(named=True)}
    # category a: judge (1, 0, 1, 0) vs human (1.5, 0, 1, 0) -> TP 2, FN 0.5
    assert prf["a"]["tp"] == 2 and prf["a"]["fn"] == 0.5 and prf["a"]["precision"] == 1.0


def test_correlate_cli_end_to_end(tmp_path):
    prep = tmp_path / "prep"
    assert srrg_main(["metaeval-prepare", "--adapter", "radpref", "--data", str(DATA / "radpref"), "--out-dir", str(prep)]) == 0
    refs = pl.read_parquet(prep / "refs.parquet")
    assert refs.columns == ["study_id", "report"] and refs.height == 4
    scores = refs.select("study_id").with_columns(
        pl.Series("m1", [0.9, 0.2, 0.3, 1.0]), pl.Series("m2", [0.5, 0.5, 0.4, 0.6]), pl.Series("m3", [0.1, 0.9, 0.8, 0.0])
    )
    scores.write_parquet(tmp_path / "per_report.parquet")
    cfg = json.dumps({"n_boot": 50, "ensembles": {"m1+m2": ["m1", "m2"]}, "test_fraction": 0.5, "caveat": "toy data"})
    out = tmp_path / "out"
    rc = srrg_main(["metaeval-correlate", "--scores", str(tmp_path / "per_report.parquet"), "--ratings", str(prep / "ratings.parquet"), "--out", str(out), "--config", cfg])
    assert rc == 0
    gema = (out / "table_gema.md").read_text()
    assert gema.startswith("toy data") and "| m1 |" in gema and "Kendall τb" in gema
    assert "\\begin{tabular}" in (out / "table_srrg.tex").read_text()
    info = json.loads((out / "info.json").read_text())
    assert info["human_target"] == "rating" and info["n_with_human"] == 4
    assert pl.read_csv(out / "table_gema.csv").columns[0] == "metric"


def test_correlate_with_proxy_column_and_errors(tmp_path, capsys):
    scores = pl.DataFrame({"study_id": ["a", "b", "c", "d"], "m": [0.1, 0.4, 0.5, 0.9], "proxy_rating": [0.2, 0.3, 0.6, 0.8]})
    scores.write_parquet(tmp_path / "s.parquet")
    cfg = json.dumps({"human_column": "proxy_rating", "n_boot": 10})
    assert srrg_main(["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "o"), "--config", cfg]) == 0
    corr = pl.read_csv(tmp_path / "o" / "correlations.csv")
    assert corr["metric"].unique().to_list() == ["m"] and corr["value"][0] == pytest.approx(1.0)
    assert srrg_main(["metaeval-correlate", "--scores", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "o2")]) == 2
    assert "no human ratings" in capsys.readouterr().err


def test_judge_chain_score_cli_then_proxy_correlation(tmp_path, monkeypatch):
    """The workflow's judge path: prepare a subset, `srrg score` the judges through an
    OpenAI-compatible server, correlate against the proxy rating (S-RRG Table 3)."""
    import re

    from openai_stub import OpenAIStub, Reply, last_user_message

    from judge_responses import green_answer, stub_llm_config

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    ids = [f"s{i}" for i in range(6)]
    pairs = pl.DataFrame({"study_id": ids[::-1], "reference": ["Small left effusion."] * 6, "report": [f"candidate {i}" for i in range(6)][::-1]})
    pairs.write_parquet(tmp_path / "pairs.parquet")
    sub = tmp_path / "subset"
    args = ["judge-subset", "--predictions", str(tmp_path / "pairs.parquet"), "--limit", "5", "--ref-col", "reference", "--hyp-col", "report", "--out-dir", str(sub)]
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
        rc = srrg_main(["score", "--refs", str(sub / "refs.parquet"), "--hyps", str(sub / "hyps.parquet"), "--metrics", "green,vert,proxy_rating", "--out", str(scored), "--config", options])
        assert rc == 0
    per = pl.read_parquet(scored / "per_report.parquet")
    assert per.height == 5 and "green_explanation" in per.columns
    cfg = json.dumps({"human_column": "proxy_rating", "n_boot": 20, "caveat": "scripted judge"})
    assert srrg_main(["metaeval-correlate", "--scores", str(scored / "per_report.parquet"), "--out", str(tmp_path / "t"), "--config", cfg]) == 0
    corr = pl.read_csv(tmp_path / "t" / "correlations.csv")
    assert set(corr["metric"]) == {"green", "vert", "green_formula", "f1_formula", "weighted_formula"}
    assert corr.filter(pl.col("metric") == "green")["value"].to_list() == pytest.approx([1.0, 1.0])
    assert "scripted judge" in (tmp_path / "t" / "table_srrg.md").read_text()
