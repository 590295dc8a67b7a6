"""S-Score end to end (parse_indexed + score_indexed: each distinct text and pair once per call, a
matched name's attribute scores once per distinct attribute values) gives, bit for bit, score_pair
of the two reports parse_report reads, pair by pair, on seeded random pairs: canonical and
non-canonical JSON, repeated texts, one or several matched names."""

from __future__ import annotations

import json
import math
import random

import pytest

from srrg.metrics import evaluate
from srrg.metrics.sscore import KEYS, attribute_scores, clear_caches, score_indexed, score_pair
from srrg.report import Finding, StructuredReport, index_report, parse_report
from srrg.settings.metrics import SScoreConfig

NAMES = ["pleural effusion", "cardiomegaly", "edema", "nodule", "atelectasis", "consolidation", "pneumothorax"]
LEVELS = ["mild", "small", "moderate", "large", None]
LOCATIONS = ["left lower lobe", "right lung base", "at the bases bilaterally", "left upper zone", "left", None]


def random_report(rng: random.Random) -> dict:
    names = rng.sample(NAMES, rng.randint(0, 5))
    cut = rng.randint(0, len(names))
    positive = []
    for name in names[:cut]:
        probability, level, location = rng.choice([1, 2, 3]), rng.choice(LEVELS), rng.choice(LOCATIONS)
        positive.append({"name": name, "probability": probability, "level": level, "location": location})
    return {"positive": positive, "negative": names[cut:]}


def as_text(report: dict, rng: random.Random) -> str:
    """Mostly canonical JSON; sometimes a form only the general path reads (repaired)."""
    text = json.dumps(report)
    kind = rng.random()
    if kind < 0.1 and report["positive"]:
        text = text.replace(report["positive"][0]["name"], report["positive"][0]["name"].upper(), 1)
    elif kind < 0.15:
        text = text.replace('"probability": 3', '"probability": 3.0')
    elif kind < 0.2:
        text = text[:-2]  # broken JSON that json-repair mends
    return text


@pytest.mark.parametrize("weights, d_over", [((1 / 3, 1 / 3, 1 / 3), "union"), ((0.2, 0.3, 0.5), "reference")])
def test_end_to_end_equals_score_pair_bit_for_bit(weights, d_over):
    rng = random.Random(7)
    pool = [random_report(rng) for _ in range(60)]
    refs, hyps = [], []
    for _ in range(400):  # texts and pairs recur, as in a corpus
        ref = rng.choice(pool)
        hyp = ref if rng.random() < 0.2 else rng.choice(pool)
        refs.append(as_text(ref, rng))
        hyps.append(as_text(hyp, rng) if rng.random() < 0.9 else "free text, not a report")
    options = {"w_prob": weights[0], "w_level": weights[1], "w_loc": weights[2], "d_over": d_over}
    cfg = SScoreConfig(**options)
    clear_caches()
    got = evaluate(refs, hyps, ["s_score"], per_report=True, options={"s_score": options})
    several = 0
    for i, (ref, hyp) in enumerate(zip(refs, hyps)):
        (r, _), (h, status) = parse_report(ref), parse_report(hyp)
        several += len({f.name for f in r.positive} & {f.name for f in h.positive}) > 1
        assert got["s_score_hyp_status"][i] == status
        for key, value in score_pair(r, h, cfg).items():
            value_got = got[key][i]
            assert value_got == value or (math.isnan(value) and math.isnan(value_got)), (i, key)
            assert math.copysign(1, value_got) == math.copysign(1, value), (i, key)
    assert several > 20  # the path that sums several matched names ran


def test_score_indexed_by_hand_one_and_two_matched_names():
    a = parse_report(
        json.dumps(
            {
                "positive": [
                    {"name": "edema", "probability": 3, "level": "mild", "location": "left lower lobe"},
                    {"name": "nodule", "probability": 1, "level": None, "location": None},
                ],
                "negative": ["pneumothorax"],
            }
        )
    )[0]
    b = parse_report(
        json.dumps(
            {
                "positive": [
                    {"name": "nodule", "probability": 3, "level": None, "location": None},
                    {"name": "edema", "probability": 2, "level": "mild", "location": "left lower lobe"},
                ],
                "negative": [],
            }
        )
    )[0]
    c = parse_report(
        json.dumps(
            {
                "positive": [{"name": "edema", "probability": 3, "level": None, "location": None}],
                "negative": ["pneumothorax"],
            }
        )
    )[0]
    out = score_indexed([index_report(a), index_report(a)], [index_report(b), index_report(c)]).per_report
    row = {key: out[key][0] for key in KEYS}
    # two matched names, summed in a's order: edema (1 - 1/4, 1, 1), nodule (1 - 1, 1, 1)
    d = ((0.75 + 1 + 1) / 3 + (0 + 1 + 1) / 3) / 2
    assert row["p_pos"] == 1.0 and row["p_neg"] == 0.0
    assert row["s_prob"] == pytest.approx(0.375) and row["s_level"] == 1.0 and row["s_loc"] == 1.0
    assert row["d_score"] == pytest.approx(d) and row["s_score"] == pytest.approx((0.5 + d) / 2)
    # one matched name (edema: 1, 0, 0) over a union of two; negatives agree
    assert out["p_pos"][1] == 2 * 1 / 3 and out["p_neg"][1] == 1.0
    assert (out["s_prob"][1], out["s_level"][1], out["s_loc"][1]) == (1.0, 0.0, 0.0)
    assert out["d_score"][1] == pytest.approx((1 / 3) / 2)


def test_attribute_values_shared_by_different_names_score_alike_and_different_values_do_not():
    """Names with the same attribute values share one cached score; a different value on either
    side (probability, level, location) is scored on its own: each pair's sub-scores are the means
    of attribute_scores of its matched names."""
    loc = "in the left lobe"
    ref = StructuredReport((Finding("a", 3, "mild", loc), Finding("b", 3, "mild", loc), Finding("c", 2)), ())
    b_other_probability, c_other_location = Finding("b", 1, "mild", loc), Finding("c", 2, location="base")
    hyp = StructuredReport((Finding("a", 3, "mild", loc), b_other_probability, c_other_location), ())
    ref2 = StructuredReport((Finding("d", 3, "mild", loc), Finding("e", 3, "large", loc)), ())
    hyp2 = StructuredReport((Finding("d", 3, "mild", loc), Finding("e", 3, "mild", loc)), ())
    out = score_indexed([index_report(ref), index_report(ref2)], [index_report(hyp), index_report(hyp2)]).per_report
    for i, (r, h) in enumerate(((ref, hyp), (ref2, hyp2))):
        scores = [attribute_scores(f, g) for f, g in zip(r.positive, h.positive)]
        for key, column in zip(("s_prob", "s_level", "s_loc"), zip(*scores)):
            assert out[key][i] == sum(column) / len(column)
    assert (out["s_prob"][0], out["s_level"][0], out["s_loc"][0]) == ((1 + 0 + 1) / 3, 1.0, (1 + 1 + 0) / 3)
    assert (out["s_prob"][1], out["s_level"][1], out["s_loc"][1]) == (1.0, 0.5, 1.0)
