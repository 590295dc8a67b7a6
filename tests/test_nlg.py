"""NLG metrics (DESIGN §4.2): pycocoevalcap scorers on lower-cased, punctuation-split text."""

from __future__ import annotations

import json
import math

import pytest

from srrg.metrics import evaluate
from srrg.metrics import nlg


def test_tokenize_lowercases_and_splits_punctuation():
    assert nlg.tokenize("Heart size is NORMAL, no effusion.") == "heart size is normal , no effusion ."
    assert nlg.tokenize("  ") == ""


def test_bleu_hand_computed():
    # p1 = 3/4, p2 = 2/3, equal lengths so no brevity penalty
    out = evaluate(["the heart is normal"], ["the heart is large"], ["bleu"])
    assert out["bleu_1"] == pytest.approx(0.75, rel=1e-6)
    assert out["bleu_2"] == pytest.approx(math.sqrt(0.75 * 2 / 3), rel=1e-6)
    assert out["bleu_4"] < 1e-3  # no 4-gram match
    same = evaluate(["No acute cardiopulmonary process."], ["no acute cardiopulmonary process ."], ["bleu"])
    assert all(same[f"bleu_{n}"] == pytest.approx(1.0) for n in range(1, 5))


def test_rouge_l_hand_computed_and_empty():
    # LCS = 3, P = 1, R = 3/4, beta = 1.2
    beta2 = 1.2**2
    want = (1 + beta2) * 1 * 0.75 / (0.75 + beta2 * 1)
    per = evaluate(["a b c d", "a b", "x"], ["a c d", "", "x"], ["rouge_l"], per_report=True)["rouge_l"]
    assert per[0] == pytest.approx(want)
    assert per[1] == 0.0  # empty hypothesis scores 0 instead of dividing by zero
    assert per[2] == pytest.approx(1.0)


def test_structured_reports_are_scored_as_sentences():
    ref = json.dumps({"positive": [{"name": "edema", "probability": 2, "level": "mild", "location": None}], "negative": ["pneumothorax"]})
    out = evaluate([ref], ["there may be mild edema. no evidence of pneumothorax."], ["bleu", "rouge_l"])
    assert out["bleu_4"] == pytest.approx(1.0) and out["rouge_l"] == pytest.approx(1.0)


def test_cider_per_report_and_range():
    refs = ["the heart is normal", "small left pleural effusion", "no pneumothorax"]
    hyps = ["the heart is normal", "large right effusion", ""]
    per = evaluate(refs, hyps, ["cider"], per_report=True)["cider"]
    assert per[2] == 0.0 and per[0] > per[1] > 0.0
    assert all(0.0 <= v <= 10.0 for v in per)


def test_meteor_without_java_names_the_metric(monkeypatch):
    monkeypatch.setattr(nlg.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="METEOR needs Java"):
        evaluate(["a"], ["a"], ["meteor"])


@pytest.mark.slow
def test_meteor_runs_java():
    per = evaluate(["the heart is normal in size", "small left effusion"], ["the heart is normal in size", ""], ["meteor"], per_report=True)
    assert per["meteor"][0] > 0.9 and per["meteor"][1] == 0.0


def test_unknown_metric_and_length_mismatch():
    with pytest.raises(KeyError, match="unknown metric"):
        evaluate(["a"], ["a"], ["bertscore_xl"])
    with pytest.raises(ValueError, match="differ in length"):
        evaluate(["a", "b"], ["a"], ["bleu"])
