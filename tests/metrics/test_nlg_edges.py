"""NLG wrapper edges (srrg.metrics.nlg, docs/metrics.md): option validation, empty inputs, the R2Gen
cleaning's repeats and numbering, the ROUGE-L token cap and the corpus BLEU arithmetic."""

from __future__ import annotations

import math

import pytest

from srrg.errors import UserError
from srrg.metrics import evaluate, nlg
from srrg.settings.metrics import NLGConfig, RougeConfig


@pytest.mark.parametrize("max_tokens", [0, -3, True, 2.5, "10"])
def test_rouge_token_cap_must_be_a_positive_integer(max_tokens):
    with pytest.raises(ValueError, match="max_tokens"):
        RougeConfig(max_tokens=max_tokens)
    assert RougeConfig(max_tokens=1).max_tokens == 1
    assert RougeConfig().max_tokens == 1000 and NLGConfig().tokenization == "r2gen"


def test_capped():
    assert nlg.capped("a b c", 3) == ("a b c", False)
    assert nlg.capped("a b c d", 3) == ("a b c", True)
    assert nlg.capped("", 3) == ("", False)


def test_rouge_cap_marks_truncated_pairs_and_counts_them():
    refs, hyps = ["a b c d e", "a b"], ["a b c d e", "a b"]
    out = evaluate(
        refs, hyps, ["rouge_l"], per_report=True, options={"rouge_l": {"max_tokens": 3, "tokenization": "none"}}
    )
    assert out["rouge_l_status"] == ["truncated", "ok"] and out["rouge_l"] == [1.0, 1.0]
    assert (
        evaluate(refs, hyps, ["rouge_l"], options={"rouge_l": {"max_tokens": 3, "tokenization": "none"}})[
            "rouge_l_truncated"
        ]
        == 1.0
    )


@pytest.mark.parametrize(
    ("metric", "keys"),
    [("bleu", ["bleu_1", "bleu_4"]), ("cider", ["cider"]), ("meteor", ["meteor"]), ("rouge_l", ["rouge_l"])],
)
def test_no_pairs_score_zero_with_empty_lists(metric, keys):
    per = evaluate([], [], [metric], per_report=True)
    assert all(per[k] == [] for k in keys)
    assert all(evaluate([], [], [metric])[k] == 0.0 for k in keys)


def test_r2gen_collapses_repeats_and_removes_numbering():
    assert nlg.clean_r2gen("a____b    c") == "ab c ."  # '_' runs collapse, then '_' goes as punctuation
    assert nlg.clean_r2gen("heart..  normal") == "heart . normal ."
    assert (
        nlg.clean_r2gen("1. lungs clear. 2. heart normal. 3. no effusion")
        == "lungs clear . heart normal . no effusion ."
    )
    assert nlg.clean_r2gen("a\nb") == "a b ."


def test_prepare_keeps_refs_and_hyps_apart():
    gts, res = nlg.prepare(["The Heart.", "lungs"], ["heart", "LUNGS clear"], "none")
    assert gts == {0: ["The Heart."], 1: ["lungs"]} and res == {0: ["heart"], 1: ["LUNGS clear"]}
    gts, res = nlg.prepare(["The Heart."], ["heart"], NLGConfig().tokenization)  # r2gen by default
    assert gts == {0: ["the heart ."]} and res == {0: ["heart ."]}


def test_corpus_bleu_arithmetic_hand_computed():
    # 2 hypothesis tokens against 4 reference tokens: brevity exp(1 - 4/2); p1 = 2/2, p2 = 1/1, and
    # zero counts become 1e-15 / 1e-9 = 1e-6 for n = 3, 4
    scores = nlg.corpus_bleu([2, 4, 2, 1, 0, 0, 2, 1, 0, 0])
    bp = math.exp(1 - 2)
    assert scores == pytest.approx([bp, bp, (1e-6) ** (1 / 3) * bp, (1e-12) ** (1 / 4) * bp], rel=1e-6)
    assert nlg.corpus_bleu([4, 4, 4, 3, 2, 1, 4, 3, 2, 1]) == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert nlg.corpus_bleu([5, 4, 5, 4, 3, 2, 4, 2, 1, 0])[0] == pytest.approx(0.8)  # longer: no penalty


def test_bleu_statistics_per_pair():
    stats = nlg.bleu_statistics(["the heart is normal"], ["the heart"], "none")
    assert stats == [(2.0, 4.0, 2.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0)]
    assert len(nlg.BLEU_STATS) == 10


def test_meteor_without_java_says_how_to_fix_it(monkeypatch):
    monkeypatch.setattr(nlg.shutil, "which", lambda _name: None)
    with pytest.raises(UserError, match=r"apt-get install default-jre-headless`, or leave 'meteor' out of the metrics"):
        evaluate(["a"], ["a"], ["meteor"])


@pytest.mark.parametrize("tokenization", ["r2gen", "none"])
def test_rouge_of_a_pair_without_tokens_is_zero(tokenization):
    """Even two empty texts score 0: a pair without tokens has nothing in common to measure."""
    per = evaluate(
        ["", "heart", ""],
        ["", "", "heart"],
        ["rouge_l"],
        per_report=True,
        options={"rouge_l": {"tokenization": tokenization}},
    )
    assert per["rouge_l"] == [0.0, 0.0, 0.0]
