"""VERT: direct score parsing and the unified formula family, with hand-computed values."""

from __future__ import annotations

import math

import pytest
from judge_responses import green_answer

from srrg.metrics.judges.common import UNPARSEABLE, parse_direct_score, parse_error_report, unified_score
from srrg.metrics.judges.vert import formula_scores, score_responses, vert_requests
from srrg.settings.metrics import VertConfig


def test_unified_formula_hand_computed():
    # TP = 3, S = 2, I = 2
    assert unified_score(3, 2, 2, 1, 1, 0) == pytest.approx(3 / 5)  # GREEN
    assert unified_score(3, 2, 2, 2, 1, 0) == pytest.approx(6 / 8)  # F1
    assert unified_score(3, 2, 2, 1, 2, 0.5) == pytest.approx(3 / 8)  # weighted: 3 / (3 + 4 + 1)
    assert unified_score(0, 0, 0, 1, 1, 0) == 0.0


def test_well_formed_answer_gives_direct_score_and_formulas():
    text = green_answer((1, 1, 0, 0, 0, 0), 3, insig=(0, 0, 1, 0, 0, 1), score="0.62")
    res = score_responses([text])
    assert res.per_report["vert"] == [0.62]
    assert res.per_report["green_formula"] == [pytest.approx(3 / 5)]
    assert res.per_report["f1_formula"] == [pytest.approx(6 / 8)]
    assert res.per_report["weighted_formula"] == [pytest.approx(3 / 8)]
    assert res.per_report["vert_sig_a"] == [1] and res.per_report["vert_insig_f"] == [1]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("0.756", 0.76),
        ("1.00", 1.0),
        ("Score: 0.5 (moderate)", 0.5),
        ("85%", 0.85),
        ("7/10", math.nan),
        ("none", math.nan),
        ("1.5", math.nan),
        ("With 2 significant errors and 3 matched findings the score is 0.60", 0.6),
        ("0.80 / 1.00", 0.8),
        ("8 out of 10", math.nan),
        ("0.7 out of 1", 0.7),
        ("-0.2", math.nan),
        ("**0.45**", 0.45),
    ],
)
def test_direct_score_forms(body, expected):
    value = parse_direct_score(f"[Score]:\n{body}\n")
    assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)


def test_missing_score_section_keeps_the_formulas():
    text = green_answer((1, 0, 0, 0, 0, 0), 1)
    res = score_responses([text])
    assert math.isnan(res.per_report["vert"][0]) and res.per_report["vert_score_status"] == [UNPARSEABLE]
    assert res.per_report["green_formula"] == [0.5]
    assert res.summary["vert_score_failures"] == 1 and res.summary["vert_count_failures"] == 0


def test_words_duplicates_and_extra_text():
    text = (
        "Let me think.\n[Clinically Significant Errors]:\n(b) Missing a finding present in the reference: two. a; b\n"
        "(b) Missing a finding present in the reference: two. a; b\n\n[Matched Findings]:\nfour. w; x; y; z\n\n"
        "[Score]:\n0.6\nThat is all."
    )
    res = score_responses([text])
    assert res.per_report["green_formula"] == [pytest.approx(4 / 6)]
    assert res.per_report["vert"] == [0.6]


def test_unparseable_answer_gives_nan_everywhere_and_is_counted():
    res = score_responses(["no idea", None])
    assert all(math.isnan(v) for v in res.per_report["vert"] + res.per_report["f1_formula"])
    assert res.summary["vert_count_failures"] == 2 and math.isnan(res.summary["vert"])


def test_echoed_answer_template_is_a_parse_failure_not_a_zero():
    # a (small) judge that repeats the prompt's answer format: "<number>." reads as 0 and
    # "<score between 0.00 and 1.00>" as 0.00 unless the template text is recognised
    from srrg.metrics.judges.common import load_prompt

    prompt = load_prompt("vert")
    echoed = prompt[prompt.index("[Clinically Significant Errors]:") :]
    res = score_responses([echoed])
    assert res.per_report["vert_status"] == [UNPARSEABLE]
    assert res.per_report["vert_score_status"] == [UNPARSEABLE]
    assert math.isnan(res.per_report["vert"][0]) and math.isnan(res.per_report["green_formula"][0])
    assert res.summary["vert_count_failures"] == 1 and res.summary["vert_score_failures"] == 1


def test_summary_means_over_scored_answers():
    res = score_responses([green_answer((0,) * 6, 2, score="0.9"), green_answer((1,) + (0,) * 5, 1, score="0.3"), None])
    assert res.summary["vert"] == pytest.approx(0.6)
    assert res.summary["vert_std"] == pytest.approx(0.3)
    assert res.summary["green_formula"] == pytest.approx((1 + 0.5) / 2)


def test_prompt_lists_categories_and_asks_for_two_decimals():
    content = vert_requests(["ref text"], ["cand text"], VertConfig())[0].messages[0]["content"]
    assert "ref text" in content and "cand text" in content and "two decimals" in content and "[Score]:" in content
    assert (
        formula_scores(parse_error_report("junk", number_words=True))["f1_formula"]
        != formula_scores(parse_error_report("junk", number_words=True))["f1_formula"]
    )  # NaN


def test_vert_end_to_end_through_openai_server(tmp_path, monkeypatch):
    from judge_responses import stub_llm_config
    from openai_stub import Malformed, OpenAIStub, Reply

    from srrg.metrics import evaluate

    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    with OpenAIStub(responder=lambda body: Reply(green_answer((1,) + (0,) * 5, 3, score="0.70"))) as stub:
        stub.enqueue(Malformed())
        options = {"vert": {"llm": stub_llm_config(stub.base_url, str(tmp_path / "cache"))}}
        out = evaluate(["r1", "r2"], ["h1", "h2"], ["vert"], options=options)
        assert out["vert"] == pytest.approx(0.70) and out["green_formula"] == pytest.approx(0.75)
        assert out["f1_formula"] == pytest.approx(6 / 7) and out["weighted_formula"] == pytest.approx(0.6)
        sent = len(stub.requests)
        evaluate(["r1", "r2"], ["h1", "h2"], ["vert"], options=options)
        assert len(stub.requests) == sent


@pytest.mark.parametrize("variant", ["direct", "formula", "rubric"])
def test_prompt_variants_share_the_answer_format(variant):
    content = vert_requests(["ref text"], ["cand text"], VertConfig(variant=variant))[0].messages[0]["content"]
    assert "[Score]:" in content and "[Matched Findings]:" in content and "cand text" in content
    assert ("M / (M + 2 * S + 0.5 * I)" in content) == (variant == "formula")
    assert ("0.80 to 0.99" in content) == (variant == "rubric")


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant"):
        VertConfig(variant="fancy")


def test_failed_answers_have_nan_counts():
    from srrg.metrics.judges.common import Reply

    res = score_responses(
        [
            Reply("[Clinically Significant Errors]:\n(a) False", "truncated"),
            green_answer((1,) + (0,) * 5, 1, score="0.5"),
        ]
    )
    assert res.per_report["vert_status"] == ["truncated", "ok"] and res.per_report["vert_score_status"] == [
        "truncated",
        "ok",
    ]
    assert math.isnan(res.per_report["vert_sig_a"][0]) and res.per_report["vert_sig_a"][1] == 1
    assert res.summary["vert_truncated"] == 1 and res.summary["vert_failures"] == 1 and res.summary["vert"] == 0.5
