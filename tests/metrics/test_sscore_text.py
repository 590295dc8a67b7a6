"""S-Score of free-text pairs through the project's extractor and its free-text options
(docs/metrics.md, "Free-text S-Score"), hand-computed on invented sentences."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from srrg.errors import UserError
from srrg.metrics import evaluate
from srrg.metrics.sscore import score_pair
from srrg.metrics.sscore_text import (
    INCIDENTAL,
    URGENT,
    finding_agreement,
    fold_general,
    level_agreement,
    location_agreement,
    location_words,
    related,
    score_pair_text,
    size_agreement,
    size_mm,
)
from srrg.report import Finding, StructuredReport
from srrg.settings.metrics import SScoreConfig, SScoreTextConfig

DEFAULT = SScoreTextConfig()


def rep(*findings: Finding, negative: tuple[str, ...] = ()) -> StructuredReport:
    return StructuredReport(tuple(findings), negative)


def s_text(ref: str, hyp: str, **options) -> float:
    out = evaluate([ref], [hyp], ["s_score_text"], per_report=True, options={"s_score_text": options})
    return out["s_score_text"][0]


def test_free_text_pair_hand_computed():
    out = evaluate(
        ["Small left pleural effusion. No pneumothorax."],
        ["Small right pleural effusion. No pneumothorax."],
        ["s_score_text"],
        per_report=True,
    )
    # names agree (P = 1); effusion: prob 1, level small = small -> 1, location left vs right -> BLEU 0
    assert out["p_score_text"] == [1.0]
    assert out["d_score_text"] == [pytest.approx(2 / 3)]
    assert out["s_score_text"] == [pytest.approx((1 + 2 / 3) / 2)]
    assert out["s_loc_text"] == [0.0] and out["s_score_text_status"] == ["ok"]


def test_empty_sides_are_statuses_and_count_as_empty_reports():
    out = evaluate(["", "Heart size is normal."], ["Mild cardiomegaly.", None], ["s_score_text"], per_report=True)
    assert out["s_score_text_status"] == ["ref:empty_text", "hyp:empty_text"]
    # ref empty vs hyp {cardiomegaly}: P_pos 0, P_neg 1 (both empty), D 0 -> S = 0.25
    assert out["s_score_text"][0] == pytest.approx(0.25)
    assert math.isnan(out["s_prob_text"][0])


def test_structured_side_is_parsed_not_extracted():
    ref = StructuredReport((Finding("pleural effusion", 3, "small", "left"),), ("pneumothorax",)).to_json()
    out = evaluate([ref], ["Small left pleural effusion. No pneumothorax."], ["s_score_text"], per_report=True)
    assert out["s_score_text"] == [1.0]


def test_summary_and_options():
    out = evaluate(
        ["Small left pleural effusion."] * 2,
        ["Small left pleural effusion.", "Large left pleural effusion."],
        ["s_score_text"],
        options={"s_score_text": {"w_prob": 0.0, "w_level": 1.0, "w_loc": 0.0}},
    )
    # second pair: level small vs large -> d = 0 with all weight on level; S = (1 + 0) / 2
    assert out["s_score_text"] == pytest.approx((1.0 + 0.5) / 2)
    assert out["s_score_text_failures"] == 0


def test_hypothesis_parse_rates_count_free_text_apart():
    ref = StructuredReport((Finding("pleural effusion", 3),), ()).to_json()
    hyps = [
        ref,  # valid JSON
        '```json\n{"positive": [{"name": "effusion"}], "negative": []}\n```',  # repaired (fence, missing keys)
        '{"positive": [',  # broken JSON: repaired to the empty report
        '{"findings": []}',  # a JSON object but no report
        "Small left pleural effusion.",
        None,  # no text: extracted as empty free text
    ]
    out = evaluate([ref] * len(hyps), hyps, ["s_score_text"])
    assert out["s_score_text_hyp_valid"] == pytest.approx(1 / 6)
    assert out["s_score_text_hyp_repaired"] == pytest.approx(2 / 6)
    assert out["s_score_text_hyp_unparseable"] == pytest.approx(1 / 6)
    assert out["s_score_text_hyp_free_text"] == pytest.approx(2 / 6)


def _random_report(rng: random.Random) -> StructuredReport:
    vocabulary = ["pleural effusion", "atelectasis", "lung opacity", "pneumonia", "nodule", "mass", "cardiomegaly"]
    names = rng.sample(vocabulary, rng.randint(0, 4))
    positive = tuple(
        Finding(
            n,
            rng.choice([1, 2, 3, None]),
            rng.choice([None, "small", "moderate", "large"]),
            rng.choice([None, "left", "right lower lobe", "bilateral", "both"]),
            rng.choice([None, "2 cm", "3 cm"]),
        )
        for n in names
    )
    negative = tuple(rng.sample(["pneumothorax", "edema", "consolidation", "fracture"], rng.randint(0, 2)))  # fmt: skip
    return StructuredReport(positive, negative)


@pytest.mark.parametrize("sscore_cfg", [SScoreConfig(), SScoreConfig(0.5, 0.25, 0.25, "reference")])
def test_s_rrg_settings_are_exactly_the_structured_s_score(sscore_cfg):
    rng = random.Random(7)
    cfg = SScoreTextConfig.s_rrg(
        w_prob=sscore_cfg.w_prob, w_level=sscore_cfg.w_level, w_loc=sscore_cfg.w_loc, d_over=sscore_cfg.d_over
    )
    for _ in range(300):
        ref, hyp = _random_report(rng), _random_report(rng)
        want, got = score_pair(ref, hyp, sscore_cfg), score_pair_text(ref, hyp, cfg)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, nan_ok=True), (key, ref, hyp)


def test_more_false_findings_score_lower_hand_computed():
    ref = rep(Finding("cardiomegaly"))
    one = score_pair_text(ref, rep(Finding("atelectasis")))
    four = score_pair_text(ref, rep(*(Finding(n) for n in ("atelectasis", "pleural effusion", "edema", "pneumonia"))))
    normal = score_pair_text(ref, rep(negative=("cardiomegaly",)))
    # P = (2 tp + 1) / (2 tp + fp + fn + 1), D = 0 without a match: S = P / 2
    assert one["p_score"] == pytest.approx(1 / 3) and one["s_score"] == pytest.approx(1 / 6)
    assert four["p_score"] == pytest.approx(1 / 6) and four["s_score"] == pytest.approx(1 / 12)
    assert normal["s_score"] == pytest.approx(1 / 4)
    assert score_pair_text(ref, rep(Finding("atelectasis")), SScoreTextConfig(smoothing=0.0))["p_score"] == 0.0


def test_significance_weights_hand_computed():
    ref = rep(Finding("pneumothorax"), Finding("cardiomegaly"))
    heart, lung = score_pair_text(ref, rep(Finding("cardiomegaly"))), score_pair_text(ref, rep(Finding("pneumothorax")))
    # weights: pneumothorax 2, cardiomegaly 1. Heart only: tp 1, fn 2 -> P = 3/5, D = 1/3; pneumothorax only:
    # tp 2, fn 1 -> P = 5/6, D = 2/3
    assert heart["s_score"] == pytest.approx((3 / 5 + 1 / 3) / 2)
    assert lung["s_score"] == pytest.approx((5 / 6 + 2 / 3) / 2)
    uniform = SScoreTextConfig(significance="uniform")
    assert score_pair_text(ref, rep(Finding("cardiomegaly")), uniform)["s_score"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    # a missed incidental granuloma (0.5) costs less than a missed nodule (1): P = 1 / 1.5 vs 1 / 2
    assert score_pair_text(rep(Finding("granuloma")), rep())["s_score"] == pytest.approx(1 / 3)
    assert score_pair_text(rep(Finding("nodule")), rep())["s_score"] == pytest.approx(1 / 4)


def test_significance_lists_hold_vocabulary_names():
    from srrg.report import default_synonyms

    canonical = set(default_synonyms().values())
    assert URGENT <= canonical and INCIDENTAL <= canonical and not URGENT & INCIDENTAL


def test_stated_negatives_neither_earn_nor_cost():
    ref = "Left upper lobe opacity."
    assert s_text(ref, "Left upper lobe opacity. No pleural effusion. No pneumothorax.") == 1.0
    # P_neg: reference without negatives vs two -> 0; with negatives: f1, P = (1 + 0) / 2, S = (0.5 + 1) / 2
    with_negatives = "Left upper lobe opacity. No pleural effusion. No pneumothorax."
    assert s_text(ref, with_negatives, negatives="f1") == pytest.approx(0.75)
    # two normal reports in different words agree fully; a missed finding costs the same either way
    assert s_text("No pleural effusion. Normal heart size.", "No pneumothorax. The lungs are clear.") == 1.0
    missed = "Consolidation. No pleural effusion."
    assert s_text(missed, "No pleural effusion.") == s_text(missed, "The lungs are clear.") == pytest.approx(0.25)


def test_related_findings_earn_part_credit_hand_computed():
    assert related("nodule", "mass") and related("lung opacity", "pneumonia") and related("consolidation", "pneumonia")
    assert related("pulmonary vascular congestion", "edema")
    assert not related("cardiomegaly", "pneumothorax") and not related("mass", "mass")
    assert not related("granuloma", "nodule")
    out = score_pair_text(rep(Finding("mass")), rep(Finding("nodule")))
    # tp 0.5, the other half a false and a missed finding: P = (1 + 1) / (1 + 1 + 1); D = 0.5 * d(=1) over 1
    assert out["p_score"] == pytest.approx(2 / 3) and out["d_score"] == pytest.approx(0.5)
    assert out["s_score"] == pytest.approx(7 / 12) and math.isnan(out["s_prob"])
    off = score_pair_text(rep(Finding("mass")), rep(Finding("nodule")), SScoreTextConfig(related_credit=0.0))
    assert off["s_score"] == pytest.approx(1 / 6)


def test_general_finding_folds_into_the_specific_one():
    ref = rep(Finding("lung opacity", 3), Finding("atelectasis", 2))
    assert list(fold_general({f.name: f for f in ref.positive})) == ["atelectasis"]
    siblings = {"mass": Finding("mass"), "nodule": Finding("nodule")}
    assert list(fold_general(siblings)) == ["mass", "nodule"]  # siblings stay
    apart = {"lung opacity": Finding("lung opacity", location="right lower lobe"),
             "nodule": Finding("nodule", location="left upper lobe")}  # fmt: skip
    assert list(fold_general(apart)) == ["lung opacity", "nodule"]  # no shared anatomical word: two findings
    chain = {"lung opacity": Finding("lung opacity", location="left lower lobe"),
             "consolidation": Finding("consolidation"),
             "pneumonia": Finding("pneumonia", 2)}  # fmt: skip
    assert fold_general(chain) == {"pneumonia": Finding("pneumonia", 2, location="left lower lobe")}  # takes the place
    out = score_pair_text(ref, rep(Finding("atelectasis", 3)))
    # atelectasis 2 vs 3: s_prob = 1 - (1/2)^2 = 0.75, d = (0.75 + 1 + 1) / 3; P = 1
    assert out["s_score"] == pytest.approx((1 + 11 / 12) / 2)
    kept = score_pair_text(ref, rep(Finding("atelectasis", 3)), SScoreTextConfig(fold_general=False))
    # opacity missed: P = 3 / 4, D = (11/12) / 2
    assert kept["s_score"] == pytest.approx((3 / 4 + 11 / 24) / 2)


def test_locations_compare_normalized_anatomy():
    assert location_words("bilateral") == location_words("both") == "both"
    assert location_agreement("right apex", "right apical") == 1.0
    assert location_agreement("left", "right") == 0.0  # shared filler ("on the ... side") is no agreement
    assert location_agreement("left", "right", normalize=False) == 0.0
    # only the reference gives a location: omitted_detail 0.5 -> d = (1 + 1 + 0.5) / 3; only the hypothesis: free
    assert s_text("Small left pleural effusion.", "Small pleural effusion.") == pytest.approx((1 + 5 / 6) / 2)
    assert s_text("Small pleural effusion.", "Small left pleural effusion.") == 1.0
    extra = s_text("Small pleural effusion.", "Small left pleural effusion.", extra_detail=0.0)
    assert extra == pytest.approx((1 + 2 / 3) / 2)


def test_ordinal_levels_hand_computed():
    assert level_agreement("small", "moderate", "ordinal") == 0.5
    assert level_agreement("small", "large", "ordinal") == 0.0
    assert level_agreement("severe", "marked", "ordinal") == 1.0
    assert level_agreement("mild to moderate", "moderate", "ordinal") == 0.75
    assert level_agreement("small", "moderate", "exact") == 0.0 and level_agreement("patchy", "mild", "ordinal") == 0.0
    assert s_text("Large pleural effusion.", "Moderate pleural effusion.") == pytest.approx((1 + 2.5 / 3) / 2)
    assert s_text("Large pleural effusion.", "Pleural effusion.") == pytest.approx((1 + 2.5 / 3) / 2)  # omitted level
    assert s_text("Large pleural effusion.", "Small pleural effusion.") == pytest.approx((1 + 2 / 3) / 2)


def test_sizes_hand_computed():
    assert size_mm("3 x 4 cm") == 40.0 and size_mm("12 mm") == 12.0 and size_mm("2 centimeters") == 20.0
    assert size_mm("large") is None
    assert size_agreement("2 cm", "1.5 cm") == pytest.approx(0.75) and size_agreement("12 mm", "1.2 cm") == 1.0
    two, five = Finding("pneumothorax", size="2 cm"), Finding("pneumothorax", size="5 cm")
    d, *_, s_size = finding_agreement(two, five, DEFAULT)
    assert s_size == pytest.approx(0.4) and d == pytest.approx(0.75 * 1 + 0.25 * 0.4)
    d, *_, s_size = finding_agreement(Finding("pneumothorax"), Finding("pneumothorax", size="5 cm"), DEFAULT)
    assert d == 1.0 and math.isnan(s_size)  # a size only the hypothesis gives is not scored
    d, *_ = finding_agreement(Finding("pneumothorax", size="2 cm"), Finding("pneumothorax"), DEFAULT)
    assert d == pytest.approx(0.75 + 0.25 * 0.5)
    ref = "2 cm right apical pneumothorax."
    near, far = s_text(ref, "1.5 cm right apical pneumothorax."), s_text(ref, "5 cm right apical pneumothorax.")
    assert near == pytest.approx((1 + 0.75 + 0.25 * 0.75) / 2) and far == pytest.approx((1 + 0.85) / 2)


@pytest.mark.parametrize(
    "options",
    [
        {"negatives": "both"},
        {"levels": "fuzzy"},
        {"significance": "clinical"},
        {"smoothing": -1},
        {"related_credit": 2},
        {"w_size": -0.1},
        {"w_prob": 0.9},
        {"d_over": "hyp"},
        {"nope": 1},
    ],
)
def test_invalid_options_are_user_errors(options):
    with pytest.raises(UserError):
        evaluate(["Pleural effusion."], ["Pleural effusion."], ["s_score_text"], options={"s_score_text": options})


def test_every_vocabulary_level_is_on_the_ordinal_scale():
    from importlib import resources

    import yaml

    from srrg.metrics.sscore_text import LEVEL_RANK

    text = resources.files("srrg.vocab").joinpath("attributes.yaml").read_text(encoding="utf-8")
    levels = set(yaml.safe_load(text)["severity"].values())
    assert levels <= set(LEVEL_RANK), sorted(levels - set(LEVEL_RANK))
    ladder = ["trace", "small", "moderate", "large", "massive"]
    assert all(LEVEL_RANK[a] < LEVEL_RANK[b] for a, b in itertools.pairwise(ladder))


def test_a_sign_explained_by_its_finding_is_a_paraphrase_not_a_false_finding():
    ref = "Bibasilar opacities, likely atelectasis."  # lung opacity (3) and atelectasis (2), both bibasilar
    assert s_text(ref, "Bibasilar atelectasis is likely.") == 1.0
    # without folding the opacity is a missed finding: P = 3/4, D = 1/2
    assert s_text(ref, "Bibasilar atelectasis is likely.", fold_general=False) == pytest.approx(0.625)


def test_long_location_phrases_are_not_cached():
    from srrg.metrics import sscore_text

    long_phrase = "left lower lobe " * 40
    size = sscore_text._location_words.cache_info().currsize
    assert location_words(long_phrase) == "left lower"
    assert sscore_text._location_words.cache_info().currsize == size
    probe = "right upper lobe, cache probe"
    assert location_words(probe) == sscore_text._location_words(probe)
    assert sscore_text._location_words.cache_info().currsize == size + 1
