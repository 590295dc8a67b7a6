"""Each rule family of the extractor on real report sentences (IU X-ray, CheXpert labeler examples,
NegEx / ConText style phrasing); expectations are written by hand."""

from __future__ import annotations

import csv

import pytest

from srrg.extract import extract, extract_detailed, extract_many
from srrg.settings.extract import ExtractConfig


def pos(report: dict) -> dict[str, dict]:
    return {f["name"]: f for f in report["positive"]}


# --- mentions: synonyms, longest match, unmentions, compositions ------------------------------------


def test_synonyms_and_longest_match() -> None:
    r = extract("Calcified granuloma in the right upper lobe. Small bilateral pleural effusions.")
    p = pos(r)
    assert set(p) == {"granuloma", "pleural effusion"}  # not "calcification", not a bare "effusion"
    assert p["granuloma"]["location"] == "right upper lobe"
    assert p["pleural effusion"]["level"] == "small" and p["pleural effusion"]["location"] == "bilateral"


def test_unmention_hides_the_finding_inside() -> None:
    assert extract("No mass effect. Bilateral nipple shadows.")["positive"] == []
    assert extract("There is a pericardial effusion.")["positive"][0]["name"] == "pericardial effusion"


@pytest.mark.parametrize(
    "text, name, level",
    [
        ("The heart is mildly enlarged.", "cardiomegaly", "mild"),
        ("Heart size is borderline.", "cardiomegaly", "borderline"),
        ("The thoracic aorta is mildly tortuous.", "tortuous aorta", "mild"),
        ("Elevation of the right hemidiaphragm.", "elevated hemidiaphragm", None),
        ("The costophrenic XXXX are blunted.", "blunting of the costophrenic angle", None),
        ("Lung volumes are low.", "hypoinflation", None),
    ],
)
def test_compositions(text: str, name: str, level: str | None) -> None:
    p = pos(extract(text))
    assert name in p and p[name]["level"] == level


def test_composition_needs_same_clause_and_no_normal_verdict() -> None:
    assert (
        extract("Heart size is normal and the hilar contours are enlarged.")["positive"][0]["name"]
        == "hilar enlargement"
    )
    assert extract("The heart is normal in size.")["positive"] == []


# --- context: negation, pseudo-negation, double negation, hedges, terminations ----------------------


def test_chexpert_labeler_examples(shared_data) -> None:
    """The four CheXpert labeler toy reports with their published labels (1 pos, 0 neg, -1 unc)."""
    path = shared_data("chexpert-labeler/sample_reports.csv")
    reports = [row[0] for row in csv.reader(path.open(encoding="utf-8"))]
    r = extract_many(reports)
    # "heart size normal" rules out cardiomegaly as the labeler does (0.0); "lungs are clear" rules
    # out lung opacity and consolidation (this project's normal statements, docs/extraction.md)
    assert r[0] == {
        "positive": [],
        "negative": ["cardiomegaly", "consolidation", "lung opacity", "edema", "pneumonia", "pleural effusion"],
    }
    p1 = pos(r[1])
    assert set(p1) == {"pleural effusion", "atelectasis", "cardiomegaly"} and r[1]["negative"] == ["edema"]
    p2 = pos(r[2])
    assert p2["lung opacity"]["probability"] == 3 and p2["lung opacity"]["location"] == "lingula"
    assert p2["atelectasis"]["probability"] == 2 and p2["consolidation"]["probability"] == 2
    assert set(pos(r[3])) == {"cardiomegaly", "hyperinflation"} and pos(r[3])["cardiomegaly"]["level"] == "mild"


@pytest.mark.parametrize(
    "text, negative",
    [
        (
            "No pneumothorax, pleural effusion, or focal airspace disease.",
            ["pneumothorax", "pleural effusion", "lung opacity"],
        ),
        ("There are no XXXX of a pleural effusion.", ["pleural effusion"]),
        ("Cardiomegaly without overt edema.", ["edema"]),
        ("Pneumothorax is not seen.", ["pneumothorax"]),
        ("The previously seen right effusion is no longer seen.", ["pleural effusion"]),
        ("Interval resolution of the left lower lobe pneumonia.", ["pneumonia"]),
        ("The effusion has resolved.", ["pleural effusion"]),
        ("Pneumonia is unlikely.", ["pneumonia"]),
        ("There is no focal air space opacity to suggest a pneumonia.", ["lung opacity", "pneumonia"]),
    ],
)
def test_negation(text: str, negative: list[str]) -> None:
    r = extract(text)
    assert r["negative"] == negative
    assert not set(pos(r)) & set(negative)


def test_pseudo_negation_is_not_negation() -> None:
    r = extract("No change in the small left pleural effusion.")
    assert pos(r)["pleural effusion"]["level"] == "small" and r["negative"] == []
    assert pos(extract("No significant interval change in cardiomegaly."))["cardiomegaly"]["probability"] == 3


def test_double_negation_becomes_uncertain() -> None:
    assert pos(extract("Pneumothorax cannot be excluded."))["pneumothorax"]["probability"] == 1
    assert pos(extract("Early pneumonia is not ruled out."))["pneumonia"]["probability"] == 1
    assert pos(extract("Cannot exclude a small effusion."))["pleural effusion"]["probability"] == 1


@pytest.mark.parametrize(
    "text, name, probability",
    [
        ("Left basilar opacity, likely atelectasis.", "atelectasis", 2),
        ("Findings may represent pneumonia.", "pneumonia", 2),
        ("Possible small right pleural effusion.", "pleural effusion", 2),
        ("Questionable minimal atelectasis.", "atelectasis", 1),
        ("This might represent edema.", "edema", 1),
        ("Mild cardiomegaly.", "cardiomegaly", 3),
    ],
)
def test_hedges(text: str, name: str, probability: int) -> None:
    assert pos(extract(text))[name]["probability"] == probability


def test_hedge_does_not_reach_backwards_over_its_clause() -> None:
    p = pos(extract("Left basilar opacity, likely atelectasis."))
    assert p["lung opacity"]["probability"] == 3
    p = pos(extract("Atelectasis versus pneumonia.", ExtractConfig(versus_probability=1)))
    assert p["atelectasis"]["probability"] == p["pneumonia"]["probability"] == 1  # "versus" reaches both ways


def test_versus_probability_is_an_option() -> None:
    # docs/extraction.md, "Conventions": both alternatives stated by default (NIH labels, IU MeSH codes)
    text = "Right basilar atelectasis versus consolidation. No effusion."
    p = pos(extract(text))
    assert p["atelectasis"]["probability"] == p["consolidation"]["probability"] == 3
    p = pos(extract(text, ExtractConfig(versus_probability=2)))
    assert p["atelectasis"]["probability"] == p["consolidation"]["probability"] == 2
    assert extract(text, ExtractConfig(versus_probability=1))["negative"] == ["pleural effusion"]
    assert pos(extract("Possible atelectasis versus pneumonia."))["atelectasis"]["probability"] == 2  # nearest wins


@pytest.mark.parametrize(
    "text, probability",
    [
        ("Question small right pleural effusion versus pleural thickening.", 1),
        ("Findings may represent subsegmental atelectasis versus mild interstitial edema.", 2),
        ("Left basilar atelectasis versus scar.", 3),
    ],
)
def test_a_differential_keeps_the_certainty_of_its_sentence(text: str, probability: int) -> None:
    # another trigger reaching a "versus" alternative wins over the "versus" itself, on both sides
    assert {f["probability"] for f in extract(text)["positive"]} == {probability}


@pytest.mark.parametrize(
    "text, name",
    [
        ("Minimal apical capping, slightly greater at the left.", "pleural thickening"),
        ("Mildly increased interstitial markings and fissural thickening.", "pleural thickening"),
        ("There is thickening of the minor fissure.", "pleural thickening"),
        ("Stable right upper lobe cavity related to prior tuberculous infection.", "tuberculosis"),
    ],
)
def test_paraphrases(text: str, name: str) -> None:
    assert name in pos(extract(text))
    assert "pneumonia" not in pos(extract(text))


def test_a_calcified_nodule_is_a_nodule_and_a_calcification() -> None:
    # NIH labels (Nodule) and the IU MeSH codes (Nodule, Calcinosis) agree; a calcified granuloma stays a granuloma
    assert set(pos(extract("There is an 8 mm calcified nodule in the left midlung."))) == {"nodule", "calcification"}
    assert set(pos(extract("Calcified granuloma in the right upper lobe."))) == {"granuloma"}


@pytest.mark.parametrize("text", ["Small bilateral pleural effusions suspected.", "A small effusion is a possibility."])
def test_post_hedges_of_suspicion(text: str) -> None:
    assert pos(extract(text))["pleural effusion"]["probability"] == 2


def test_termination_stops_negation() -> None:
    r = extract("No pleural effusion but there is mild atelectasis.")
    assert r["negative"] == ["pleural effusion"] and pos(r)["atelectasis"]["level"] == "mild"
    r = extract("No focal consolidation; cardiomegaly.")
    assert "cardiomegaly" in pos(r)


def test_history_and_rule_out_are_neither_positive_nor_negative() -> None:
    assert extract("Evaluate for pneumonia.") == {"positive": [], "negative": []}


def test_positive_wins_and_most_certain_mention_wins() -> None:
    r = extract(
        "FINDINGS: No pneumothorax. Possible effusion.\nIMPRESSION: Small pleural effusion. Small pneumothorax."
    )
    p = pos(r)
    assert p["pleural effusion"]["probability"] == 3 and "pneumothorax" in p and r["negative"] == []


# --- linking: severity and location stay with their own finding --------------------------------------


def test_attributes_do_not_swap_across_coordinated_findings() -> None:
    p = pos(extract("There is mild cardiomegaly and small left effusion."))
    assert p["cardiomegaly"] == {"name": "cardiomegaly", "probability": 3, "level": "mild", "location": None}
    assert p["pleural effusion"]["level"] == "small" and p["pleural effusion"]["location"] == "left"
    p = pos(extract("Moderate right pleural effusion with adjacent mild bibasilar atelectasis."))
    assert (p["pleural effusion"]["level"], p["pleural effusion"]["location"]) == ("moderate", "right")
    assert (p["atelectasis"]["level"], p["atelectasis"]["location"]) == ("mild", "bibasilar")
    p = pos(extract("Atelectasis in the left lower lobe and a large right pneumothorax."))
    assert p["atelectasis"]["location"] == "left lower lobe" and p["atelectasis"]["level"] is None
    assert (p["pneumothorax"]["level"], p["pneumothorax"]["location"]) == ("large", "right")


def test_location_phrases_and_inheritance() -> None:
    p = pos(extract("Patchy opacity in the right upper and middle lobes."))
    assert p["lung opacity"]["location"] == "right upper and middle lobes"
    assert extract("The lungs are hyperinflated.")["positive"][0]["location"] is None  # generic words only
    p = pos(extract("Streaky left basilar opacity, most likely atelectasis."))
    assert p["atelectasis"]["location"] == "left basilar"


def test_provenance_spans_point_at_the_words() -> None:
    text = "IMPRESSION: Possible small left effusion."
    (result,) = extract_detailed([text])
    (rec,) = result.provenance
    spans = rec["spans"]
    assert text[slice(*spans["name"])] == "effusion"
    assert text[slice(*spans["trigger"])] == "Possible"
    assert text[slice(*spans["level"])] == "small"
    assert [text[slice(*s)] for s in spans["location"]] == ["left"]
    assert rec["section"] == "impression" and result.status == "ok"


def test_negex_negation_agreement(shared_data) -> None:
    """NegEx/ConText test set rows whose condition is a vocabulary finding: negated vs not negated."""
    path = shared_data("negex_context_testset/rsAnnotations-1-120-random.txt")
    from srrg.vocab import synonym_map

    syn = synonym_map()
    rows = [line.rstrip("\n").split("\t") for line in path.open(encoding="latin-1")]
    rows = [r for r in rows if len(r) > 4 and r[2].strip().lower() in syn]
    results = extract_detailed(r[3] for r in rows)
    agree = sum(
        (syn[r[2].strip().lower()] in res.report.negative) == (r[4] == "Negated") for r, res in zip(rows, results)
    )
    assert len(rows) >= 50
    assert agree / len(rows) >= 0.9


def test_alternatives_share_their_location_but_coordination_does_not() -> None:
    p = pos(extract("Minimal atelectasis versus scarring seen in the left lung base."))
    assert p["atelectasis"]["location"] == p["scarring"]["location"] == "left lung base"
    assert p["atelectasis"]["level"] == "minimal" and p["scarring"]["level"] is None
    p = pos(extract("Small left effusion and cardiomegaly."))
    assert p["cardiomegaly"]["location"] is None


def test_descriptive_adjective_describes_the_next_finding() -> None:
    p = pos(extract("Calcified right hilar granulomas."))
    assert set(p) == {"granuloma"} and p["granuloma"]["location"] == "right hilar"
    assert set(pos(extract("Calcified 5 mm granuloma in the left upper lobe."))) == {"granuloma"}
    assert set(pos(extract("The aorta is calcified."))) == {"calcification"}


def test_within_normal_limits_rules_out() -> None:
    r = extract("Heart size and pulmonary vascular engorgement appear within limits of normal.")
    assert r == {"positive": [], "negative": ["pulmonary vascular congestion"]}


def test_double_period_ends_a_sentence_and_clause_breaks_stop_linking() -> None:
    r = extract("No pneumothorax or pleural effusion.. Mild streaky opacities in the left upper lobe.")
    assert pos(r)["lung opacity"]["location"] == "left upper lobe" and "lung opacity" not in r["negative"]
    p = pos(extract("Low lung volumes but the lungs are clear bilaterally."))
    assert p["hypoinflation"]["location"] is None
    p = pos(extract("Opacity is seen in the left lung base."))
    assert p["lung opacity"]["location"] == "left lung base"


def test_negbio_openi_examples(shared_data) -> None:
    """NegBio's Open-i examples (lower case, ad-hoc headers, wrapped lines)."""
    folder = shared_data("negbio_openi_labels")
    r = extract((folder / "00019248.txt").read_text(encoding="utf-8"))
    p = pos(r)
    assert p["enlarged pulmonary artery"]["probability"] == 2
    assert p["cardiomegaly"]["level"] == "mild" and p["support devices"]["location"] == "right, upper svc"
    assert r["negative"] == ["infiltration", "pleural effusion", "pneumothorax"]
    r = extract((folder / "00000086.txt").read_text(encoding="utf-8"))
    assert r["negative"] == ["pneumothorax"] and "scoliosis" in pos(r)


def test_resolved_reaches_both_ways_but_forwards_only_within_the_phrase() -> None:
    assert extract("Resolved right upper lobe pneumonia.") == {"positive": [], "negative": ["pneumonia"]}
    r = extract("Effusion resolved, atelectasis persists.")
    assert r["negative"] == ["pleural effusion"] and "atelectasis" in pos(r)


def test_interpretation_inherits_location_through_link_words_only() -> None:
    p = pos(extract("Bibasilar opacities likely reflect atelectasis, though infection cannot be excluded."))
    assert p["atelectasis"]["location"] == "bibasilar" and p["pneumonia"]["probability"] == 1
    assert pos(extract("Left pleural effusion with adjacent atelectasis."))["atelectasis"]["location"] is None


def test_a_state_pairs_with_its_nearest_subject_in_the_clause() -> None:
    assert extract("Heart size moderately enlarged, stable mediastinal contours.")["positive"] == [
        {"name": "cardiomegaly", "probability": 3, "level": "moderate", "location": None}
    ]
    names = [f["name"] for f in extract("The heart and mediastinum are enlarged.")["positive"]]
    assert names == ["cardiomegaly", "enlarged cardiomediastinum"]
    p = pos(extract("Right paratracheal prominence."))
    assert p["enlarged cardiomediastinum"]["location"] == "right"
