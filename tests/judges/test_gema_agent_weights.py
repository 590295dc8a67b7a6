"""GEMA's agent-set aspect weights (GemaConfig.aspect_weights_by: agent; Eq. 5): the subjective
agent writes a weight per aspect, srrg validates and normalizes them; fixed 1/3 weights stay the
default and keep the packaged prompt byte for byte."""

from __future__ import annotations

import json
import math

import pytest

from srrg.metrics.judges.gema import (
    WEIGHTED_SUBJECTIVE,
    agent_weights,
    gema_requests,
    score_answers,
    subjective_score,
)
from srrg.settings.metrics import GemaConfig

ENTITIES = json.dumps({"entities": [{"disease": "pleural effusion", "location": "left", "severity": "small",
                                     "uncertainty": "certain"}]})  # fmt: skip


def answer(errors=(0, 4, 10), weights=(0.5, 0.25, 0.25)):
    keys = ("fluency", "grammar", "terminology")
    obj = {f"{k}_errors": e for k, e in zip(keys, errors)}
    obj.update({f"{k}_weight": w for k, w in zip(keys, weights) if w is not None})
    return json.dumps({**obj, "explanation": "x"})


def test_weights_are_validated_and_normalized():
    """Bugs caught: weights used unnormalized (a sum of 2 doubling S_sub), a negative, missing,
    boolean or all-zero weight accepted."""
    assert agent_weights(answer(weights=(2, 1, 1))) == {"fluency": 0.5, "grammar": 0.25, "terminology": 0.25}
    for bad in ((-1, 1, 1), (0.5, None, 0.5), (0, 0, 0), (True, 0.5, 0.5)):
        assert agent_weights(answer(weights=bad)) is None, bad
    assert agent_weights("not json") is None


def test_agent_weights_reach_the_score():
    """S_sub with the agent's weights: 0.5 x 1 + 0.25 x 0.8 + 0.25 x 0.5 = 0.825 -> 0.8 (nearest 0.2);
    with fixed thirds (1 + 0.8 + 0.5) / 3 = 0.767 -> 0.8 as well, so the test also checks a pair
    where they differ; a pair without valid weights is NaN and unparseable."""
    cfg = GemaConfig(aspect_weights_by="agent")
    heavy = answer(errors=(0, 0, 20), weights=(0.0, 0.0, 1.0))  # only terminology counts: 1 - 0.05 x 20 = 0
    res = score_answers([ENTITIES] * 3, [ENTITIES] * 3, [answer(), heavy, answer(weights=(0, 0, 0))], cfg)
    assert res.per_report["gema_sub"][0] == pytest.approx(
        subjective_score(
            {"fluency": 0, "grammar": 4, "terminology": 10}, {"fluency": 0.5, "grammar": 0.25, "terminology": 0.25}
        )
    )
    assert res.per_report["gema_sub"][1] == 0.0
    fixed = score_answers([ENTITIES], [ENTITIES], [heavy], GemaConfig())
    assert fixed.per_report["gema_sub"][0] == pytest.approx(0.6)  # (1 + 1 + 0) / 3 = 0.667 -> 0.6
    assert math.isnan(res.per_report["gema"][2]) and res.per_report["gema_status"][2] == "unparseable:subjective"


def test_agent_mode_asks_for_weights_and_fixed_mode_does_not():
    """Bugs caught: the weights prompt sent by default (changing every cached GEMA answer), or the
    agent mode asking without weights."""
    _, _, fixed = gema_requests(["r"], ["h"], GemaConfig())
    _, _, agent = gema_requests(["r"], ["h"], GemaConfig(aspect_weights_by="agent"))
    assert "_weight" not in fixed[0].messages[0]["content"] and fixed[0].template == "gema_subjective"
    assert '"fluency_weight"' in agent[0].messages[0]["content"] and agent[0].template == WEIGHTED_SUBJECTIVE
    with pytest.raises(ValueError):
        GemaConfig(aspect_weights_by="model")
