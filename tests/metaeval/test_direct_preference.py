"""GREEN Table 7's direct preference (srrg.metaeval.direct_preference, docs/metaeval.md "Direct
preference"): the answer parser, the comparisons and the accuracies by hand, and the command on the
RadPref layout fixture against the loopback OpenAI stub (exact request counts, none on a rerun)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from judge_responses import stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message
from paths import FIXTURES

from srrg.cli import main
from srrg.metaeval.direct_preference import (
    Comparison,
    accuracy_row,
    comparisons,
    metric_outcome,
    parse_preference,
    run_metaeval_preference,
)
from srrg.metrics.judges.common import JudgeFailed
from srrg.metrics.judges.common import Reply as JudgeReply
from srrg.settings.metaeval import DirectPreference


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("B has no false finding.\nPreferred: B", ("B", "ok")),
        ("Reasons.\n**Preferred: Candidate a.**\n\n", ("A", "ok")),
        ('"Preferred: B"', ("B", "ok")),
        ("Preferred: A or B", (None, "unparseable")),
        ("Preferred: B\nOn reflection, A.", (None, "unparseable")),  # the choice is not on the last line
        ('Give it exactly as "Preferred: A" or "Preferred: B".', (None, "unparseable")),  # the template echoed
        ("", (None, "unparseable")),
        (JudgeReply("Preferred: A", "truncated"), (None, "truncated")),  # cut off: never read
        (None, (None, "no_response")),
    ],
)
def test_parse_preference(answer, expected):
    """Bugs caught: a choice guessed from an answer that names both, from an echoed template or from a
    cut-off answer; emphasis or 'Candidate' breaking an exact answer."""
    assert parse_preference(answer) == expected


def test_comparisons_and_accuracies_by_hand():
    """Bugs caught: an expert tie asked about, a candidate without a rating compared, the side of an
    error-count target (fewer is better) flipped, a metric tie or a NaN counted as correct, the
    accuracy's denominator dropping failures. Case x: ratings 3, 1, 3 -> (x1, x2) A, (x1, x3) tie,
    (x2, x3) B; case y: y2 unrated -> 1 left out; case z: one candidate, no comparison."""
    pairs = pl.DataFrame({"pair_id": ["x1", "x2", "x3", "y1", "y2", "z1"], "cluster": ["x", "x", "x", "y", "y", "z"]})
    human = {"x1": 3.0, "x2": 1.0, "x3": 3.0, "y1": 2.0, "z1": 1.0}
    got, left = comparisons(pairs, human, lower=False)
    assert got == [Comparison("x", "x1", "x2", "A"), Comparison("x", "x2", "x3", "B")]
    assert left == {"expert_ties": 1, "without_human": 1}
    flipped, _ = comparisons(pairs, human, lower=True)  # error counts: the smaller count is preferred
    assert [c.human for c in flipped] == ["B", "A"]
    c = Comparison("x", "a", "b", "A")
    assert metric_outcome(c, {"a": 0.5, "b": 0.2}) == "correct" and metric_outcome(c, {"a": 0.1, "b": 0.2}) == "wrong"
    assert metric_outcome(c, {"a": 0.2, "b": 0.2}) == "tie" and metric_outcome(c, {"a": math.nan, "b": 0.2}) == "failed"
    row = accuracy_row("m", "metric", ["correct", "correct", "wrong", "tie", "failed"])
    assert (row["correct"], row["wrong"], row["tie"], row["failed"]) == (2, 1, 1, 1)
    assert row["accuracy"] == pytest.approx(2 / 5) and row["accuracy_answered"] == pytest.approx(2 / 3)


# RadPref fixture: experts prefer C1 in study_01 and study_03, C2 in study_02 and study_04 (mean ratings)
ANSWERS = {  # reference text -> the stub's answer: right, wrong, unreadable, cut off
    "Moderate right pleural effusion": Reply("C1 matches.\nPreferred: A"),
    "Nasogastric tube": Reply("Preferred: A"),
    "Clear lungs": Reply("Both are fine."),
    "Left apical pneumothorax": Reply("Preferred:", finish_reason="length"),
}


def answer(body):
    text = last_user_message(body)
    return next(reply for key, reply in ANSWERS.items() if key in text)


@pytest.fixture
def prepared(tmp_path):
    """The RadPref layout fixture prepared and scored with BLEU and ROUGE-L."""
    prep, scores = tmp_path / "prep", tmp_path / "scores"
    main(["metaeval-prepare", "--adapter", "radpref", "--data", str(FIXTURES / "rating_layouts" / "radpref"),
          "--out-dir", str(prep)])  # fmt: skip
    main(["score", "--refs", str(prep / "refs.parquet"), "--hyps", str(prep / "hyps.parquet"), "--metrics",
          "bleu,rouge_l", "--out", str(scores)])  # fmt: skip
    return prep, scores / "per_report.parquet"


def test_command_asks_once_per_comparison_and_reports_beside_the_metrics(tmp_path, prepared, monkeypatch):
    """Bugs caught: a request per candidate instead of per comparison, an expert tie asked about, an
    unreadable or cut-off answer scored as a choice, the metrics' accuracy on other comparisons than
    the judge's, a rerun asking an answered comparison again (the cache). 4 cases, 2 candidates each, no expert tie: 4
    requests; the judge is right once, wrong once and fails twice: accuracy 1/4, answered 1/2."""
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    prep, scores = prepared
    with OpenAIStub(responder=answer) as stub:
        cfg = json.dumps({"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache")), "max_failure_fraction": 1})
        args = ["metaeval-preference", "--pairs", str(prep / "pairs.parquet"), "--ratings",
                str(prep / "ratings.parquet"), "--scores", str(scores), "--out", str(tmp_path / "pref"),
                "--config", cfg]  # fmt: skip
        main(args)
        assert len(stub.requests) == 4
        main(args)  # from the cache, but for the cut-off answer, which the LLM client never caches
        assert len(stub.requests) == 5 and "Left apical pneumothorax" in last_user_message(stub.requests[-1])
    table = pl.read_csv(tmp_path / "pref" / "preference.csv")
    judge = table.row(0, named=True)
    assert judge["row"] == "direct preference (stub-judge)" and judge["comparisons"] == 4
    assert (judge["correct"], judge["wrong"], judge["failed"]) == (1, 1, 2)
    assert judge["accuracy"] == pytest.approx(0.25) and judge["accuracy_answered"] == pytest.approx(0.5)
    per_report = pl.read_parquet(scores)
    bleu = dict(zip(per_report["study_id"], per_report["bleu_1"]))
    preferred = {"study_01": "C1", "study_02": "C2", "study_03": "C1", "study_04": "C2"}
    correct = sum(
        (bleu[f"{s}:C1"] > bleu[f"{s}:C2"]) == (p == "C1") and bleu[f"{s}:C1"] != bleu[f"{s}:C2"]
        for s, p in preferred.items()
    )
    row = table.filter(pl.col("row") == "bleu_1").row(0, named=True)
    assert row["comparisons"] == 4 and row["correct"] == correct
    assert set(table["row"][1:]) == {"bleu_1", "bleu_4", "rouge_l"}
    compared = pl.read_parquet(tmp_path / "pref" / "comparisons.parquet")
    assert compared["status"].to_list() == ["ok", "ok", "unparseable", "truncated"]
    assert compared["judge"].to_list() == ["A", "A", None, None]


def test_too_many_failed_answers_fail_after_writing(tmp_path, prepared, monkeypatch):
    """Bugs caught: a table whose judge row rests on 2 of 4 answers passing as a result. With the
    default max_failure_fraction 0.1 the stage fails (JudgeFailed), the files written first."""
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    prep, scores = prepared
    with OpenAIStub(responder=answer) as stub:
        cfg = DirectPreference(llm=stub_llm_config(stub.base_url, str(tmp_path / "cache")))
        with pytest.raises(JudgeFailed, match="2 of 4 judge answers failed"):
            run_metaeval_preference(
                str(prep / "pairs.parquet"), str(prep / "ratings.parquet"), str(scores), cfg, tmp_path / "pref"
            )
    assert (tmp_path / "pref" / "preference.md").exists()
