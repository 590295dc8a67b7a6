"""NLG metrics (docs/metrics.md): pycocoevalcap scorers behind an explicit tokenization option."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from srrg.config import ConfigError
from srrg.errors import UserError
from srrg.metrics import evaluate, nlg

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="PTBTokenizer and METEOR need Java")

# report-like pairs with the punctuation, numbering, numbers and hyphens the conventions treat differently
REFS = [
    "1. Heart size is normal. 2. No focal consolidation, pleural effusion or pneumothorax.",
    "The lungs are hyperexpanded (COPD). Stable 2.5 cm nodule in the right upper lobe; no new opacity.",
    "Interval placement of a right-sided PICC line, tip at the cavo-atrial junction. Lungs: clear.",
    "No acute cardiopulmonary process.",
]
HYPS = [
    "Heart size is normal. No consolidation, effusion, or pneumothorax.",
    "Lungs are hyperexpanded, consistent with COPD. A 2.5 cm right upper lobe nodule is unchanged.",
    "Right PICC line with tip in the cavoatrial junction... Lungs are clear.",
    "",
]


@pytest.mark.parametrize(
    "text, cleaned",
    [
        ("Heart size is NORMAL, no effusion.", "heart size is normal no effusion ."),
        # list numbering removed, '...' collapsed, quotes/slashes/parentheses/colons removed, hyphens and digits kept
        ('1. Lungs: clear (no PTX)...  2. "Stable" 3/4 T-spine 12mm', "lungs clear no ptx . stable 34 t-spine 12mm ."),
        ("XXXX-year-old  male__ s/p CABG.\nNo change. ", "xxxx-year-old male sp cabg . no change ."),
        ("   ", ""),
    ],
)
def test_r2gen_cleaning_hand_computed(text, cleaned):
    assert nlg.clean_r2gen(text) == cleaned


def test_none_keeps_text_and_unknown_tokenization_is_a_user_error():
    assert nlg.tokenize(["A  b,\nc."], "none") == ["A b, c."]
    with pytest.raises(UserError, match="bleu.tokenization must be one of r2gen, ptb, none, got 'coco'"):
        evaluate(["a"], ["a"], ["bleu"], options={"bleu": {"tokenization": "coco"}})
    with pytest.raises(ConfigError, match="tokenisation"):
        evaluate(["a"], ["a"], ["bleu"], options={"bleu": {"tokenisation": "ptb"}})


def test_bleu_hand_computed():
    # r2gen adds the closing " ." token: hyp "the heart is large ." vs ref "the heart is normal ."
    # p1 = 4/5, p2 = 2/4, p3 = 1/3, p4 = 0/2, equal lengths so no brevity penalty
    out = evaluate(["the heart is normal"], ["the heart is large"], ["bleu"])
    assert out["bleu_1"] == pytest.approx(0.8, rel=1e-6)
    assert out["bleu_2"] == pytest.approx(math.sqrt(0.8 * 0.5), rel=1e-6)
    assert out["bleu_4"] < 1e-3
    # none: p1 = 3/4, p2 = 2/3
    raw = evaluate(
        ["the heart is normal"], ["the heart is large"], ["bleu"], options={"bleu": {"tokenization": "none"}}
    )
    assert raw["bleu_2"] == pytest.approx(math.sqrt(0.75 * 2 / 3), rel=1e-6)
    same = evaluate(["No acute cardiopulmonary process."], ["no acute cardiopulmonary process ."], ["bleu"])
    assert all(same[f"bleu_{n}"] == pytest.approx(1.0) for n in range(1, 5))


def test_conventions_give_different_numbers_on_the_same_pairs():
    values = {
        t: evaluate(REFS, HYPS, ["bleu"], options={"bleu": {"tokenization": t}})["bleu_4"] for t in ("r2gen", "none")
    }
    assert values["r2gen"] != pytest.approx(values["none"], abs=1e-3)


def coco_pipeline(refs, hyps):
    """pycocoevalcap run the standard way: PTBTokenizer on {id: [{"caption": text}]}, then the scorers."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tok = PTBTokenizer()
    gts = tok.tokenize({i: [{"caption": r}] for i, r in enumerate(refs)})
    res = tok.tokenize({i: [{"caption": h}] for i, h in enumerate(hyps)})
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, _ = Rouge().compute_score(gts, res)
    cider, _ = Cider().compute_score(gts, res)
    return {**{f"bleu_{n + 1}": bleu[n] for n in range(4)}, "rouge_l": rouge, "cider": cider}


@needs_java
def test_ptb_option_matches_pycocoevalcap_pipeline_exactly():
    refs, hyps = REFS[:3], HYPS[:3]  # pycocoevalcap's ROUGE divides by zero on an empty text
    want = coco_pipeline(refs, hyps)
    opts = {m: {"tokenization": "ptb"} for m in ("bleu", "rouge_l", "cider")}
    got = evaluate(refs, hyps, ["bleu", "rouge_l", "cider"], options=opts)
    for key, value in want.items():
        assert got[key] == value, key  # exact, not approx
    assert nlg.ptb_tokenize(("Lungs: clear (no PTX).", "", "a\r\nb")) == ("lungs clear -lrb- no ptx -rrb-", "", "a b")


def test_ptb_without_java_is_a_user_error(monkeypatch):
    monkeypatch.setattr(nlg.shutil, "which", lambda name: None)
    nlg.ptb_tokenize.cache_clear()
    with pytest.raises(UserError, match="'ptb' runs Stanford PTBTokenizer"):
        evaluate(["a"], ["b"], ["bleu"], options={"bleu": {"tokenization": "ptb"}})


def test_rouge_l_hand_computed_and_empty():
    # LCS = 3, P = 1, R = 3/4, beta = 1.2
    beta2 = 1.2**2
    want = (1 + beta2) * 1 * 0.75 / (0.75 + beta2 * 1)
    opts = {"rouge_l": {"tokenization": "none"}}
    per = evaluate(["a b c d", "a b", "x"], ["a c d", "", "x"], ["rouge_l"], per_report=True, options=opts)
    assert per["rouge_l"][0] == pytest.approx(want)
    assert per["rouge_l"][1] == 0.0  # empty hypothesis scores 0 instead of dividing by zero
    assert per["rouge_l"][2] == pytest.approx(1.0)
    assert per["rouge_l_status"] == ["ok", "ok", "ok"]


def test_rouge_l_length_cap_is_recorded_and_fast(monkeypatch):
    """issue 16 case 8: ROUGE-L's LCS is quadratic; two 6,000-token reports took 16.8 s uncapped.
    Fast means the LCS never sees more than max_tokens (default 1000) tokens a side: counted at the
    scorer, not timed, so a loaded machine cannot fail it (a dropped cap hands it 6,000 tokens)."""
    from pycocoevalcap.rouge.rouge import Rouge

    seen: list[int] = []
    score = Rouge.calc_score

    def counting(self, candidate, refs):
        seen.extend(len(text.split()) for text in (*candidate, *refs))
        return score(self, candidate, refs)

    monkeypatch.setattr(Rouge, "calc_score", counting)
    long_ref = " ".join(f"w{i % 97}" for i in range(6000))
    long_hyp = " ".join(f"w{i % 89}" for i in range(6000))
    opts = {"rouge_l": {"tokenization": "none", "max_tokens": 3}}
    out = evaluate(
        [long_ref, "a b c d"],
        [long_hyp, "a b c e"],
        ["rouge_l"],
        per_report=True,
        options={"rouge_l": {"tokenization": "none"}},
    )
    assert max(seen) == 1000 and seen[:2] == [1000, 1000]
    assert out["rouge_l_status"] == ["truncated", "ok"]
    summary = evaluate(
        [long_ref, "a b c d"], [long_hyp, "a b c e"], ["rouge_l"], options={"rouge_l": {"tokenization": "none"}}
    )
    assert summary["rouge_l_truncated"] == 1.0
    # a cap of 3: "a b c" vs "a b c" after truncation scores 1
    capped = evaluate(["a b c d"], ["a b c e"], ["rouge_l"], per_report=True, options=opts)
    assert capped["rouge_l"] == [pytest.approx(1.0)] and capped["rouge_l_status"] == ["truncated"]
    with pytest.raises(UserError, match="max_tokens"):
        evaluate(["a"], ["a"], ["rouge_l"], options={"rouge_l": {"max_tokens": 0}})


def test_structured_reports_are_scored_as_sentences():
    ref = json.dumps(
        {
            "positive": [{"name": "edema", "probability": 2, "level": "mild", "location": None}],
            "negative": ["pneumothorax"],
        }
    )
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
    with pytest.raises(UserError, match="METEOR needs Java"):
        evaluate(["a"], ["a"], ["meteor"])


@pytest.mark.slow
def test_meteor_runs_java():
    per = evaluate(
        ["the heart is normal in size", "small left effusion"],
        ["the heart is normal in size", ""],
        ["meteor"],
        per_report=True,
    )
    assert per["meteor"][0] > 0.9 and per["meteor"][1] == 0.0


def test_unknown_metric_and_length_mismatch():
    with pytest.raises(KeyError, match="unknown metric"):
        evaluate(["a"], ["a"], ["bertscore_xl"])
    with pytest.raises(ValueError, match="differ in length"):
        evaluate(["a", "b"], ["a"], ["bleu"])


@pytest.mark.parametrize("tokenization", ["r2gen", "none"])
def test_corpus_bleu_from_pair_statistics_equals_the_scorer(tokenization):
    stats = nlg.bleu_statistics(REFS, HYPS, tokenization)
    totals = [sum(column) for column in zip(*stats)]
    want = evaluate(REFS, HYPS, ["bleu"], options={"bleu": {"tokenization": tokenization}})
    assert nlg.corpus_bleu(totals) == [want[f"bleu_{k}"] for k in range(1, 5)]  # exact
