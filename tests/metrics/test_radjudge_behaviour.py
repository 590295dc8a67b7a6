"""RadJudge ranking cases (CRIMSON) as a behaviour report of the free-text metrics (docs/metrics.md,
"Free-text S-Score"): the pass counts under `srrg metaeval-rank`'s rule may not fall below the bars
reached. The cases are read in place from ../shared/data/radjudge; the test skips when that folder
is absent. (The reader and the rule are tested in tests/metaeval/test_metaeval_rank.py.)"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from paths import BENCHMARKS

from srrg.metaeval import radjudge

_BENCH = BENCHMARKS / "radjudge_metrics.py"
_SPEC = importlib.util.spec_from_file_location("radjudge_metrics", _BENCH)
bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = bench
_SPEC.loader.exec_module(bench)

# the bars reached (Done-when of issue 23: s_score_text >= 15, ce >= 14); the S-Score settings pass 7
BARS = {"s_score_text": 22, "ce": 15}


def test_invented_case_scores_hand_computed(tmp_path):
    cases = [{"category": "Invented", "description": "", "tests": [
        {"id": "x1", "ground_truth": "Cardiomegaly.", "expected_ranking": ["C1 > C2", "C2 > C3"],
         "candidates": {"C1": {"text": "Cardiomegaly."}, "C2": {"text": "Atelectasis."},
                        "C3": {"text": "Atelectasis. Pleural effusion. Pneumonia."}}},
        {"id": "x2", "ground_truth": "Pleural effusion.", "expected_ranking": "C1 = C2",
         "candidates": {"C1": {"text": "Pleural effusion. No pneumothorax."}, "C2": {"text": "Pleural effusion."}}},
    ]}]  # fmt: skip
    path = tmp_path / "ranking_tests.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    loaded = radjudge.read_cases(path)
    scores = radjudge.candidate_scores(loaded, list(bench.KEYS), bench.KEYS, None)
    # s_score_text: exact 1; one false + one missed: P = 1/3, S = 1/6; three false + one missed: P = 1/5, S = 1/10
    assert scores["s_score_text"][0] == pytest.approx({"C1": 1.0, "C2": 1 / 6, "C3": 1 / 10})
    # ce_f1: Cardiomegaly vs Atelectasis: 1/3; vs Atelectasis, Pleural Effusion, Pneumonia: 1/5
    assert scores["ce"][0] == pytest.approx({"C1": 1.0, "C2": 1 / 3, "C3": 1 / 5})
    assert scores["s_score_text"][1] == scores["ce"][1] == {"C1": 1.0, "C2": 1.0}  # a stated negative is no error
    assert bench.pass_count(loaded, "s_score_text") == 2
    assert bench.pass_count(loaded, "s_score_text", bench.PARITY) == 0  # S-Score: P_neg, and F1 0 without a match


@pytest.mark.slow
def test_radjudge_pass_counts_stay_at_the_bars():
    if not bench.DEFAULT_CASES.is_file():
        pytest.skip(f"RadJudge cases not found at {bench.DEFAULT_CASES} (../shared/data/radjudge)")
    cases = radjudge.read_cases(bench.DEFAULT_CASES)
    assert len(cases) == 30
    counts = {m: bench.pass_count(cases, m) for m in BARS}
    assert all(counts[m] >= bar for m, bar in BARS.items()), counts
    assert bench.pass_count(cases, "s_score_text", bench.PARITY) < counts["s_score_text"]
