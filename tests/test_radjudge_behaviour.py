"""RadJudge ranking cases (CRIMSON) as a behaviour report of the free-text metrics (docs/metrics.md,
"Free-text S-Score"): the pass counts may not fall below the bars reached, and the ranking rule of
benchmarks/radjudge_metrics.py is checked by hand. The cases are read in place from
../shared/data/radjudge and the test skips when that folder is absent."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("radjudge_metrics", Path(__file__).parents[1] / "benchmarks" / "radjudge_metrics.py")
radjudge = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = radjudge  # dataclasses look their module up there
_SPEC.loader.exec_module(radjudge)

# the bars reached (Done-when of issue 23: s_score_text >= 15, ce >= 14); S-Score settings pass 7
BARS = {"s_score_text": 22, "ce": 14}


def test_ranking_rule_by_hand():
    assert radjudge.holds("C1 > C2", {"C1": 0.5, "C2": 0.49})
    assert not radjudge.holds("C1 > C2", {"C1": 0.5, "C2": 0.5})  # strictly greater
    assert radjudge.holds("C1 = C2", {"C1": 0.5, "C2": 0.505}) and radjudge.holds("C2 = C1", {"C1": 0.5, "C2": 0.495})
    assert not radjudge.holds("C1 = C2", {"C1": 0.5, "C2": 0.52})
    with pytest.raises(ValueError, match="unknown relation"):
        radjudge.holds("C1 < C2", {"C1": 0.0, "C2": 1.0})


def test_cases_file_layout_and_passes_on_an_invented_case(tmp_path):
    cases = [{"category": "Invented", "description": "", "tests": [
        {"id": "x1", "ground_truth": "Cardiomegaly.", "expected_ranking": ["C1 > C2", "C2 > C3"],
         "candidates": {"C1": {"text": "Cardiomegaly."}, "C2": {"text": "Atelectasis."},
                        "C3": {"text": "Atelectasis. Pleural effusion. Pneumonia."}}},
        {"id": "x2", "ground_truth": "Pleural effusion.", "expected_ranking": "C1 = C2",
         "candidates": {"C1": {"text": "Pleural effusion. No pneumothorax."}, "C2": {"text": "Pleural effusion.", "context": {"age": "40"}}}},
    ]}]  # fmt: skip
    path = tmp_path / "ranking_tests.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    loaded = radjudge.load_cases(path)
    assert [(c.case_id, c.relations, list(c.candidates)) for c in loaded] == [
        ("x1", ("C1 > C2", "C2 > C3"), ["C1", "C2", "C3"]), ("x2", ("C1 = C2",), ["C1", "C2"])]
    scores = radjudge.case_scores(loaded, ["s_score_text", "ce"])
    # s_score_text: exact 1; one false + one missed: P = 1/3, S = 1/6; three false + one missed: P = 1/5, S = 1/10
    assert scores[0]["s_score_text"] == pytest.approx({"C1": 1.0, "C2": 1 / 6, "C3": 1 / 10})
    assert radjudge.passes(loaded, scores, "s_score_text") == [True, True]
    table = radjudge.category_table(loaded, {"s_score_text": [True, True], "ce": [True, False]})
    assert "| Invented | 2 | 2 | 1 |" in table and "| **all** | 2 | 2 | 1 |" in table


@pytest.mark.slow
def test_radjudge_pass_counts_stay_at_the_bars():
    if not radjudge.DEFAULT_CASES.is_file():
        pytest.skip(f"RadJudge cases not found at {radjudge.DEFAULT_CASES} (../shared/data/radjudge)")
    cases = radjudge.load_cases()
    assert len(cases) == 30
    scores = radjudge.case_scores(cases, list(BARS))
    counts = {m: sum(radjudge.passes(cases, scores, m)) for m in BARS}
    assert all(counts[m] >= bar for m, bar in BARS.items()), counts
    parity = radjudge.case_scores(cases, ["s_score_text"], {"s_score_text": radjudge.PARITY})
    assert sum(radjudge.passes(cases, parity, "s_score_text")) < counts["s_score_text"]
