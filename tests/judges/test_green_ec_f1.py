"""GREEN-EC and GREEN-F1: the per-report columns computed from the GREEN answer's counts, by hand."""

from __future__ import annotations

import math

import pytest
from judge_responses import FIVE_PAIRS, green_answer

from srrg.metrics.judges.green import F1_WEIGHTS, score_responses
from srrg.metrics.judges.vert import FORMULAS


def test_green_ec_is_the_significant_error_total():
    """The five-pair example: EC = 1, 5, 2, 1, 3 (mean 12/5). Fails if the insignificant errors or
    the matched count were added in, or a category were dropped."""
    res = score_responses(FIVE_PAIRS)
    assert res.per_report["green_ec"] == [1.0, 5.0, 2.0, 1.0, 3.0]
    assert res.summary["green_ec"] == pytest.approx(12 / 5)


def test_green_ec_ignores_insignificant_errors():
    """2 significant (a, f) and 4 insignificant errors: EC is 2, not 6."""
    res = score_responses([green_answer((1, 0, 0, 0, 0, 1), 3, insig=(1, 1, 1, 1, 0, 0))])
    assert res.per_report["green_ec"] == [2.0]


def test_green_f1_is_two_m_over_two_m_plus_s():
    """The five-pair example: M, S = (0, 1), (1, 5), (1, 2), (1, 1), (1, 3) give F1 = 0, 2/7, 2/4,
    2/3, 2/5. Fails if F1 were GREEN's M / (M + S) (1/6 for the second pair) or counted I."""
    res = score_responses(FIVE_PAIRS)
    by_hand = [0.0, 2 / 7, 2 / 4, 2 / 3, 2 / 5]
    assert res.per_report["green_f1"] == pytest.approx(by_hand)
    assert res.summary["green_f1"] == pytest.approx(sum(by_hand) / 5)


def test_green_f1_ignores_insignificant_errors_and_is_zero_without_counts():
    """M = 3, S = 1, I = 3: 6 / 7. An answer with no matched finding and no error (2M + S = 0)
    scores 0, not NaN and not 1 (a division-by-zero guard that returns 1 would pass an empty pair)."""
    res = score_responses([green_answer((1, 0, 0, 0, 0, 0), 3, insig=(0, 0, 3, 0, 0, 0)), green_answer((0,) * 6, 0)])
    assert res.per_report["green_f1"] == [pytest.approx(6 / 7), 0.0]
    assert res.per_report["green_ec"][1] == 0.0


def test_failed_answers_are_nan_and_left_out_of_the_means():
    """An unparseable answer and a missing one: both columns NaN (never EC 0, "no errors"), and the
    means are those of the one parsed answer (M = 1, S = 1: EC 1, F1 2/3)."""
    res = score_responses(["I cannot evaluate these reports.", None, green_answer((1,) + (0,) * 5, 1)])
    assert all(math.isnan(v) for v in res.per_report["green_ec"][:2] + res.per_report["green_f1"][:2])
    assert res.summary["green_ec"] == 1.0
    assert res.summary["green_f1"] == pytest.approx(2 / 3)


def test_green_f1_uses_the_unified_family_f1_weights():
    """GREEN-F1 is VERT's f1_formula on GREEN's answer (a = 2, bS = 1, bI = 0): fails if the shared
    weights drift from the F1 of the unified family."""
    assert F1_WEIGHTS == FORMULAS["f1_formula"] == (2.0, 1.0, 0.0)
