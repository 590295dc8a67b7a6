"""GREEN: parsing of the documented answer format and the score, with hand-computed values."""

from __future__ import annotations

import math

import pytest
from judge_responses import FIVE_PAIRS, green_answer

from srrg.metrics.judges.common import NO_RESPONSE, OK, PARTIAL, UNPARSEABLE, load_prompt, parse_error_report
from srrg.metrics.judges.green import Green, green_requests, score_responses
from srrg.settings.metrics import GreenConfig


def test_published_prompt_is_reproduced():
    text = load_prompt("green")
    assert text.startswith("Objective: Evaluate the accuracy of a candidate radiology report")
    for line in (
        "a) False report of a finding in the candidate.",
        "f) Omitting a comparison detailing a change from a prior study.",
        "[Clinically Insignificant Errors]:",
        "<The number of matched findings>. <Finding 1>; <Finding 2>; ...; <Finding n>",
    ):
        assert line in text
    req = green_requests(["a b c"], ["x y"], GreenConfig())[0]
    content = req.messages[0]["content"]
    assert "2. Reference Report:\n    a b c\n" in content and "3. Candidate Report:\n    x y\n" in content


def test_reports_are_truncated_to_max_words():
    req = green_requests([" ".join(["w"] * 400)], ["h"], GreenConfig(max_words=300))[0]
    assert " ".join(["w"] * 300) + "\n" in req.messages[0]["content"]
    assert " ".join(["w"] * 301) not in req.messages[0]["content"]


def test_well_formed_answer():
    r = parse_error_report(green_answer((2, 1, 0, 0, 0, 1), 3, insig=(0, 0, 1, 0, 0, 0)), number_words=True)
    assert r.status == OK
    assert r.significant == (2, 1, 0, 0, 0, 1) and r.insignificant == (0, 0, 1, 0, 0, 0)
    assert r.matched == 3 and r.matched_findings == ("finding 1", "finding 2", "finding 3")
    res = score_responses([green_answer((2, 1, 0, 0, 0, 1), 3)])
    assert res.per_report["green"] == [pytest.approx(3 / 7)]


def test_five_pair_example_mean_and_population_std():
    res = score_responses(FIVE_PAIRS)
    assert res.per_report["green"] == pytest.approx([0, 1 / 6, 1 / 3, 1 / 2, 1 / 4])
    assert res.summary["green"] == pytest.approx(0.25)
    assert res.summary["green_std"] == pytest.approx(0.1667, abs=1e-4)
    # share of answers with zero significant errors per category: (a) 1 of 5, (b) 1 of 5, (c) 3 of 5
    assert res.summary["green_zero_sig_a"] == pytest.approx(1 / 5)
    assert res.summary["green_zero_sig_b"] == pytest.approx(1 / 5)
    assert res.summary["green_zero_sig_c"] == pytest.approx(3 / 5)
    assert res.summary["green_zero_sig_f"] == pytest.approx(1.0)
    assert res.summary["green_failures"] == 0


def test_missing_sections_are_partial_and_read_as_zero():
    text = "[Explanation]:\nfine\n\n[Matched Findings]:\n2. effusion; edema\n"
    r = parse_error_report(text, number_words=True)
    assert r.status == PARTIAL and r.significant == (0,) * 6 and r.matched == 2
    res = score_responses([text])
    assert res.per_report["green"] == [1.0] and res.summary["green_partial"] == 1


def test_no_scorable_section_is_a_flagged_failure_not_a_zero():
    res = score_responses(["I cannot evaluate these reports.", None, green_answer((1,) + (0,) * 5, 1)])
    assert res.per_report["green_status"] == [UNPARSEABLE, NO_RESPONSE, OK]
    assert math.isnan(res.per_report["green"][0]) and math.isnan(res.per_report["green"][1])
    assert res.summary["green"] == pytest.approx(0.5)  # only the parsed answer counts
    assert res.summary["green_failures"] == 2 and res.summary["green_n_parsed"] == 1


def test_extra_text_around_the_answer():
    text = "Sure! Here is my assessment.\n<|assistant|>\n" + green_answer((1, 0, 0, 0, 0, 0), 2) + "\nHope this helps."
    res = score_responses([text])
    assert res.per_report["green"] == [pytest.approx(2 / 3)]


def test_numbers_written_as_words():
    text = (
        "[Clinically Significant Errors]:\n(a) False report of a finding in the candidate: Two. x; y\n"
        "(b) Missing a finding present in the reference: one. z\n\n"
        "[Matched Findings]:\nthree. a; b; c\n"
    )
    r = parse_error_report(text, number_words=True)
    assert r.significant[:2] == (2, 1) and r.matched == 3
    assert score_responses([text]).per_report["green"] == [pytest.approx(3 / 6)]
    official = parse_error_report(text, number_words=False)  # the official parser reads words as 0
    assert official.significant == (0,) * 6 and official.matched == 0


def test_duplicated_lines_are_not_added_up():
    sig = "(a) False report of a finding in the candidate: 1. x\n"
    text = f"[Clinically Significant Errors]:\n{sig}{sig}{sig}\n[Matched Findings]:\n1. y\n"
    r = parse_error_report(text, number_words=True)
    assert r.significant[0] == 1
    assert score_responses([text]).per_report["green"] == [0.5]


def test_numbered_categories_and_no_errors_sections():
    text = (
        "[Clinically Significant Errors]:\n(1) False report: 0.\n(2) Missing: 2. a; b\n\n"
        "[Clinically Insignificant Errors]:\nNo errors.\n\n[Matched Findings]:\n2. c; d\n"
    )
    r = parse_error_report(text, number_words=True)
    assert r.significant == (0, 2, 0, 0, 0, 0) and r.insignificant == (0,) * 6 and r.status == OK
    assert score_responses([text]).per_report["green"] == [0.5]


def test_section_runs_to_the_first_blank_line():
    # a category line after a blank line belongs to no section (official rule)
    text = "[Clinically Significant Errors]:\n(a) False report: 1.\n\n(b) Missing: 4.\n\n[Matched Findings]:\n1. x\n"
    assert parse_error_report(text, number_words=True).significant == (1, 0, 0, 0, 0, 0)


def test_metric_rejects_unknown_options():
    with pytest.raises(ValueError, match=r"unknown key\(s\) green\.temperature \(allowed: "):
        Green(temperature=3)


def test_green_end_to_end_through_openai_server_and_warm_rerun(tmp_path, monkeypatch):
    from judge_responses import stub_llm_config
    from openai_stub import OpenAIStub, Reply, Status, last_user_message

    from srrg.metrics import evaluate

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")

    def responder(body):
        prompt = last_user_message(body)
        return Reply(FIVE_PAIRS[int(prompt.split("Candidate Report:\n    cand")[1].split()[0])])

    refs = [f"reference {i}" for i in range(5)]
    hyps = [f"cand{i} text" for i in range(5)]
    with OpenAIStub(responder=responder) as stub:
        stub.enqueue(Status(500))  # a transient fault is retried by the client
        options = {"green": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        out = evaluate(refs, hyps, ["green"], options=options)
        assert out["green"] == pytest.approx(0.25) and out["green_std"] == pytest.approx(0.1667, abs=1e-4)
        sent = len(stub.requests)
        assert sent == 6
        per = evaluate(refs, hyps, ["green"], per_report=True, options=options)
        assert per["green"] == pytest.approx([0, 1 / 6, 1 / 3, 1 / 2, 1 / 4])
        assert len(stub.requests) == sent  # warm cache: zero requests


def test_rules_backend_cannot_judge():
    with pytest.raises(ValueError, match="need llm.backend"):
        Green(llm={"backend": "rules"}).compute(["a"], ["b"])


@pytest.mark.slow
def test_all_judges_through_local_smollm2(tmp_path):
    """The real (tiny) local LLM end to end with an 8-token limit: the answers are cut off, which
    must surface as `truncated` statuses (never a crash, never a score); cut-off answers are not
    cached, so a rerun asks for exactly those again."""
    import os

    from srrg.llm import LLMClient
    from srrg.settings.llm import LLMConfig

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = LLMConfig.from_dict({"backend": "local", "cache_dir": str(tmp_path / "cache"), "batch_size": 4})
    client = LLMClient(cfg)
    refs, hyps = ["Small left pleural effusion."], ["Small right pleural effusion."]
    from srrg.metrics import get_metric

    results = {}
    for name in ("green", "vert", "gema", "proxy_rating"):
        metric = get_metric(name, client=client, max_tokens=8, max_failure_fraction=1.0)
        results[name] = metric.compute(refs, hyps)
    assert results["green"].per_report["green_status"][0] in {"truncated", "unparseable"}
    assert math.isnan(results["green"].per_report["green"][0])
    assert len(results["gema"].per_report["gema"]) == 1
    total = client.usage.total()
    assert total.sent == 1 + 1 + 3 + 1 and total.truncated >= 1
    warm = LLMClient(cfg)
    for name in ("green", "vert", "gema", "proxy_rating"):
        get_metric(name, client=warm, max_tokens=8, max_failure_fraction=1.0).compute(refs, hyps)
    # cut-off (and blank) answers were not cached: the rerun asks for those again, and only those
    assert total.truncated <= warm.usage.total().sent == total.sent - len(client.cache)


def test_echoed_answer_template_is_unparseable_not_zero():
    prompt = load_prompt("green").replace("{reference}", "r").replace("{candidate}", "c")
    res = score_responses([prompt])
    assert res.per_report["green_status"] == [UNPARSEABLE] and math.isnan(res.per_report["green"][0])
