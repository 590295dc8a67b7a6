"""Patient context from the rating layouts to a metric: RadPref's PatientAge/PatientSex/Indication
through `srrg metaeval-prepare` and `srrg score` to CRIMSON's prompt, RadJudge's per-candidate
context through `metaeval-rank`, and layouts without context scoring as before."""

from __future__ import annotations

import json

import polars as pl
import pytest
from judge_responses import stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message
from paths import FIXTURES, SHARED_DATA

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.llm.base import LLMResponse
from srrg.metaeval.prepare import run_metaeval_prepare
from srrg.metaeval.radjudge import candidate_scores, check_cases, read_cases
from srrg.metrics.context import patient_context
from srrg.metrics.score import run_score

LAYOUTS = FIXTURES / "rating_layouts"
RADJUDGE = SHARED_DATA / "radjudge" / "ranking_tests.json"


def crimson_answer(missing_level: str) -> str:
    """One urgent reference finding found, a second one of `missing_level` missed."""
    return json.dumps({
        "reference_findings": [
            {"id": "R1", "finding": "atelectasis", "clinical_significance": "urgent"},
            {"id": "R2", "finding": "aortic atherosclerosis", "clinical_significance": missing_level},
        ],
        "predicted_findings": [{"id": "P1", "finding": "atelectasis", "clinical_significance": "urgent"}],
        "matched_findings": [{"ref_id": "R1", "pred_id": "P1"}],
        "errors": {"false_findings": [], "missing_findings": ["R2"], "attribute_errors": []},
    })  # fmt: skip


class ContextJudge:
    """Answers as a judge that reads the patient context would: a missed atherosclerosis is benign at
    82, actionable at 25 and when no age is given."""

    def __init__(self):
        self.prompts: list[str] = []

    def complete(self, requests):
        self.prompts += [r.messages[-1]["content"] for r in requests]
        return [
            LLMResponse(
                crimson_answer("benign_expected" if "Age: 82" in r.messages[-1]["content"] else "actionable_not_urgent")
            )
            for r in requests
        ]


def test_patient_context_reads_the_layouts_keys():
    assert patient_context(
        {"PatientAge": "67", "PatientSex": " F ", "Indication": "Cough.", "Comparison": "None."}
    ) == {
        "age": "67",
        "sex": "F",
        "indication": "Cough.",
    }
    assert patient_context({"indication": "Chest pain.", "age": 25}) == {"age": "25", "indication": "Chest pain."}
    assert patient_context({"study_id": "s1", "age": "  ", "sex": None}) == {} and patient_context(None) == {}
    with pytest.raises(UserError, match="age twice"):
        patient_context({"age": "25", "PatientAge": "26"})


def test_radpref_context_goes_from_metaeval_prepare_through_srrg_score_into_the_prompt(tmp_path):
    prepared = tmp_path / "prepared"
    run_metaeval_prepare("radpref", str(LAYOUTS / "radpref"), {}, prepared)
    refs, hyps = pl.read_parquet(prepared / "refs.parquet"), pl.read_parquet(prepared / "hyps.parquet")
    assert refs.columns == ["study_id", "report", "age", "sex", "indication"] and hyps.columns == ["study_id", "report"]
    pairs = pl.read_parquet(prepared / "pairs.parquet")
    first = json.loads(pairs["context"][0])
    row = refs.row(0, named=True)
    assert (row["age"], row["sex"], row["indication"]) == (
        first["PatientAge"],
        first["PatientSex"],
        first["Indication"],
    )
    assert json.loads((prepared / "info.json").read_text())["context_columns"] == ["age", "sex", "indication"]
    judge = ContextJudge()
    out = tmp_path / "scores"
    run_score(
        prepared / "refs.parquet", prepared / "hyps.parquet", ["crimson", "bleu"], out, {"crimson": {"client": judge}}
    )
    assert len(judge.prompts) == refs.height
    expected = f"Patient Context:\n    Age: {row['age']}\n    Sex: {row['sex']}\n    Indication: {row['indication']}\n"
    assert any(expected in p for p in judge.prompts)
    per = pl.read_parquet(out / "per_report.parquet")
    assert per["crimson_status"].to_list() == ["ok"] * refs.height and per["bleu_4"].null_count() == 0


def test_a_layout_without_patient_context_adds_no_column_and_scores_as_before(tmp_path):
    prepared = tmp_path / "prepared"
    run_metaeval_prepare("rexval", str(LAYOUTS / "rexval"), {}, prepared)
    assert pl.read_parquet(prepared / "refs.parquet").columns == ["study_id", "report"]  # its context is a study id
    judge = ContextJudge()
    run_score(
        prepared / "refs.parquet",
        prepared / "hyps.parquet",
        ["crimson"],
        tmp_path / "scores",
        {"crimson": {"client": judge}},
    )
    assert judge.prompts and not any("Patient Context" in p for p in judge.prompts)


@pytest.mark.skipif(not RADJUDGE.is_file(), reason="../shared/data/radjudge is absent")
def test_radjudge_candidates_reach_crimson_with_their_context():
    cases = [c for c in read_cases(RADJUDGE) if c.case_id == "2a"]
    assert cases[0].contexts == {
        "C1": {"age": "25", "indication": "Chest pain."},
        "C2": {"age": "82", "indication": "Routine preoperative evaluation"},
    }
    judge = ContextJudge()
    scores = candidate_scores(cases, ["crimson", "bleu"], {"bleu": "bleu_4"}, {"crimson": {"client": judge}})
    # C1 (25): R2 actionable missed, 1 / 1.5; C2 (82): R2 benign, 1 / 1
    assert scores["crimson"][0] == {"C1": round(1 / 1.5, 4), "C2": 1.0}
    checked = check_cases(cases, scores, {"crimson": "crimson", "bleu": "bleu_4"})
    assert dict(zip(checked["metric"], checked["passed"])) == {"crimson": True, "bleu": False}  # the texts are equal
    assert sum("Patient Context:\n    Age: 25\n    Indication: Chest pain.\n" in p for p in judge.prompts) == 1


def test_a_candidate_context_that_is_not_an_object_is_refused(tmp_path):
    doc = [{"category": "x", "tests": [{"id": "1", "ground_truth": "a", "expected_ranking": "C1 > C2",
            "candidates": {"C1": {"text": "a", "context": "age 3"}, "C2": {"text": "b"}}}]}]  # fmt: skip
    path = tmp_path / "ranking_tests.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="context must be an object"):
        read_cases(path)


@pytest.mark.skipif(not RADJUDGE.is_file(), reason="../shared/data/radjudge is absent")
def test_metaeval_rank_runs_crimson_on_every_radjudge_case_against_the_stub(tmp_path, monkeypatch):
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")

    def responder(body):
        prompt = last_user_message(body)
        return Reply(crimson_answer("benign_expected" if "Age: 82" in prompt else "actionable_not_urgent"))

    out = tmp_path / "rank"
    with OpenAIStub(responder=responder) as stub:
        config = {"crimson": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        args = ["metaeval-rank", "--cases", str(RADJUDGE), "--metrics", "crimson", "--out", str(out)]
        assert srrg_main([*args, "--config", json.dumps(config)]) in (0, None)
        n_requests = len(stub.requests)
    rows = pl.read_csv(out / "rank_cases.csv")
    assert rows.height == 30 and set(rows["metric"]) == {"crimson"} and rows["key"][0] == "crimson"
    assert n_requests == sum(len(c.candidates) for c in read_cases(RADJUDGE))
    # every candidate gets the same answer except the 82-year-old's: of the age/indication cases only 2a holds
    passed = dict(zip(rows["case_id"], rows["passed"]))
    assert passed["2a"] and not passed["2b"] and not passed["2c"]
    assert json.loads((out / "info.json").read_text())["n_cases_with_context"] == 5
