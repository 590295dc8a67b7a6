"""`srrg score` with LLM judges end to end, as a user runs it: recorded official-format GREEN answers
served by the loopback OpenAI stub, a dead endpoint, and answers cut off by max_tokens."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time

import polars as pl
import pytest
from judge_responses import stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message

# Answers in the format the official GREEN model writes (a leading ":" left by its cleaner, category
# lines that may skip zero categories, "None." sections, a trailing "</s>"), keyed by candidate.
RECORDED = {
    "cand-miss": (
        ":\nThe candidate misses the left effusion and places the opacity on the wrong side.\n\n"
        "[Clinically Significant Errors]:\n"
        "(a) False report of a finding in the candidate: 0.\n"
        "(b) Missing a finding present in the reference: 1. Small left pleural effusion.\n"
        "(c) Misidentification of a finding's anatomic location/position: 1. Opacity is in the right base, not the "
        "left.\n"
        "(d) Misassessment of the severity of a finding: 0.\n"
        "(e) Mentioning a comparison that isn't in the reference: 0.\n"
        "(f) Omitting a comparison detailing a change from a prior study: 0.\n\n"
        "[Clinically Insignificant Errors]:\n"
        "(a) False report of a finding in the candidate: 0.\n"
        "(b) Missing a finding present in the reference: 1. Degenerative changes of the spine.\n"
        "(c) Misidentification of a finding's anatomic location/position: 0.\n"
        "(d) Misassessment of the severity of a finding: 0.\n"
        "(e) Mentioning a comparison that isn't in the reference: 0.\n"
        "(f) Omitting a comparison detailing a change from a prior study: 0.\n\n"
        "[Matched Findings]:\n2. Normal heart size; No pneumothorax.</s>"
    ),
    "cand-sparse": (
        ":\nThe candidate adds a comparison and misses the nodule.\n\n"
        "[Clinically Significant Errors]:\n"
        "(b) Missing a finding present in the reference: 1. Right upper lobe nodule.\n"
        "(e) Mentioning a comparison that isn't in the reference: 1. Comparison with a prior CT.\n\n"
        "[Clinically Insignificant Errors]:\nNone.\n\n"
        "[Matched Findings]:\n3. Clear lungs; Normal mediastinum; No effusion.</s>"
    ),
    "cand-same": (
        ":\nThe candidate is equivalent to the reference.\n\n"
        "[Clinically Significant Errors]:\nNo clinically significant errors.\n\n"
        "[Clinically Insignificant Errors]:\nNo clinically insignificant errors.\n\n"
        "[Matched Findings]:\n1. No acute cardiopulmonary process.</s>"
    ),
}
# hand-computed: matched / (matched + significant errors)
EXPECTED = {"cand-miss": 2 / 4, "cand-sparse": 3 / 5, "cand-same": 1.0}


def write_pairs(tmp_path, hyps=tuple(RECORDED)):
    refs = tmp_path / "refs.jsonl"
    refs.write_text(
        "".join(json.dumps({"study_id": f"s{i}", "report": f"reference {i}."}) + "\n" for i in range(len(hyps)))
    )
    hyp_file = tmp_path / "hyps.jsonl"
    hyp_file.write_text("".join(json.dumps({"study_id": f"s{i}", "report": h}) + "\n" for i, h in enumerate(hyps)))
    return refs, hyp_file


def srrg_score(tmp_path, refs, hyps, options, metrics="green", timeout=60):
    env = {**os.environ, "SRRG_JUDGE_TEST_KEY": "sk-test"}
    cmd = [
        sys.executable,
        "-m",
        "srrg",
        "score",
        "--refs",
        str(refs),
        "--hyps",
        str(hyps),
        "--metrics",
        metrics,
        "--out",
        str(tmp_path / "out"),
        "--config",
        json.dumps(options),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def candidate_of(body) -> str:
    return last_user_message(body).split("3. Candidate Report:\n    ")[1].split()[0]


def test_recorded_official_answers_score_end_to_end(tmp_path):
    refs, hyps = write_pairs(tmp_path)
    with OpenAIStub(responder=lambda body: Reply(RECORDED[candidate_of(body)], completion_tokens=400)) as stub:
        options = {"green": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        done = srrg_score(tmp_path, refs, hyps, options)
        assert done.returncode == 0, done.stderr
        assert {b["max_tokens"] for b in stub.requests} == {1024}  # GREEN's default answer length
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    assert per["green"].to_list() == pytest.approx([EXPECTED[h] for h in RECORDED])
    assert per["green_status"].to_list() == ["ok", "ok", "ok"]
    assert per["green_sig_b"].to_list() == [1, 1, 0] and per["green_sig_e"].to_list() == [0, 1, 0]
    assert per["green_insig_b"].to_list() == [1, 0, 0] and per["green_matched"].to_list() == [2, 3, 1]
    summary = pl.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["green"][0] == pytest.approx(sum(EXPECTED.values()) / 3)
    assert summary["green_failures"][0] == 0 and summary["green_truncated"][0] == 0


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_endpoint_exits_non_zero_within_the_retry_budget_and_keeps_partial_results(tmp_path):
    refs, hyps = write_pairs(tmp_path)
    llm = stub_llm_config(f"http://127.0.0.1:{closed_port()}/v1", str(tmp_path / "cache"))
    llm.update(max_retries=2, retry_base_delay_s=0.05, retry_max_delay_s=0.1)
    start = time.monotonic()
    done = srrg_score(tmp_path, refs, hyps, {"green": {"llm": llm}}, timeout=180)
    assert done.returncode == 1 and time.monotonic() - start < 90  # ~7 s idle; wide for a loaded machine
    line = done.stderr.strip().splitlines()[-1]
    assert "green: 3 of 3 judge answers failed (3 no_response" in line and "openai endpoint http://127.0.0.1:" in line
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")  # written before the exit
    assert per["green_status"].to_list() == ["no_response"] * 3
    assert all(math.isnan(v) for v in per["green"].to_list() + per["green_sig_a"].to_list())


def test_cut_off_answers_are_truncated_never_scored(tmp_path):
    refs, hyps = write_pairs(tmp_path)

    def responder(body):
        cand = candidate_of(body)
        if cand == "cand-sparse":  # the limit stops the answer inside the significant errors
            return Reply(RECORDED[cand][:150], finish_reason="length")
        return Reply(RECORDED[cand])

    with OpenAIStub(responder=responder) as stub:
        options = {"green": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        strict = srrg_score(tmp_path, refs, hyps, options)
        assert strict.returncode == 1 and "1 of 3 judge answers failed (1 truncated" in strict.stderr
        options["green"]["max_failure_fraction"] = 0.5
        lenient = srrg_score(tmp_path, refs, hyps, options)
        assert lenient.returncode == 0, lenient.stderr
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    assert per["green_status"].to_list() == ["ok", "truncated", "ok"]
    assert math.isnan(per["green"][1]) and math.isnan(per["green_sig_b"][1]) and math.isnan(per["green_matched"][1])
    summary = pl.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["green"][0] == pytest.approx((0.5 + 1.0) / 2)  # the cut-off answer is not averaged in
    assert summary["green_truncated"][0] == 1 and summary["green_failures"][0] == 1
