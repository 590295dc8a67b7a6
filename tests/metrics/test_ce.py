"""Clinical efficacy (docs/metrics.md): CheXpert observation labels from srrg reports, P/R/F1 by hand."""

from __future__ import annotations

import json

import pytest
from paths import SHARED_DATA

from srrg.errors import UserError
from srrg.metrics import evaluate
from srrg.metrics.ce import NO_FINDING, ce_summary, chexpert_map, label_weights, observation_labels, prf, report_f1
from srrg.report import Finding, StructuredReport

CHEXPERT_14 = (
    "No Finding",
    "Enlarged Cardiomediastinum",
    "Cardiomegaly",
    "Lung Lesion",
    "Lung Opacity",
    "Edema",
    "Consolidation",
    "Pneumonia",
    "Atelectasis",
    "Pneumothorax",
    "Pleural Effusion",
    "Pleural Other",
    "Fracture",
    "Support Devices",
)


def rep(*findings: Finding) -> StructuredReport:
    return StructuredReport(tuple(findings), ())


def js(positive=(), negative=()) -> str:
    return json.dumps({"positive": list(positive), "negative": list(negative)})


def test_map_file_has_the_14_observations_and_vocabulary_names():
    mapping = chexpert_map()  # the loader rejects names outside findings.yaml and unknown labels
    assert mapping.observations == CHEXPERT_14
    assert mapping.findings["pleural effusion"] == ("Pleural Effusion",)
    assert mapping.findings["nodule"] == ("Lung Lesion",)
    assert "granuloma" not in mapping.findings and "support devices" in mapping.no_finding_ignores


def test_positive_is_definite_or_probable():
    r = rep(Finding("cardiomegaly", 3), Finding("edema", 2), Finding("pneumonia", 1))
    # uncertain pneumonia is not positive
    assert observation_labels(r, definite_only=False) == {"Cardiomegaly", "Edema"}
    assert observation_labels(r, definite_only=True) == {"Cardiomegaly"}


def test_no_finding_rules():
    assert observation_labels(rep(), definite_only=False) == {NO_FINDING}
    # devices are not a finding
    devices = rep(Finding("support devices", 3))
    assert observation_labels(devices, definite_only=False) == {NO_FINDING, "Support Devices"}
    # an uncertain mention, an unmapped finding or a missing probability still rules out No Finding
    assert observation_labels(rep(Finding("pneumonia", 1)), definite_only=False) == set()
    assert observation_labels(rep(Finding("granuloma", 3)), definite_only=False) == set()
    assert observation_labels(rep(Finding("edema", None)), definite_only=False) == set()
    # a finding can count as two observations
    both = rep(Finding("hydropneumothorax", 3))
    assert observation_labels(both, definite_only=False) == {"Pneumothorax", "Pleural Effusion"}


def test_prf_zero_denominators():
    assert prf(0, 0, 0) == (0.0, 0.0, 0.0)
    assert prf(1, 1, 0) == (0.5, 1.0, pytest.approx(2 / 3))


def test_summary_hand_computed():
    refs = [frozenset("AB"), frozenset("C"), frozenset()]
    hyps = [frozenset("A"), frozenset("BC"), frozenset("A")]
    # A: tp 1 fp 1 fn 0 -> P .5 R 1 F1 2/3;  B: tp 0 fp 1 fn 1 -> 0;  C: tp 1 -> 1;  D: never present -> 0
    out = ce_summary(refs, hyps, ("A", "B", "C", "D"))
    assert out["ce_precision_micro"] == pytest.approx(0.5)  # 2 / (2 + 2)
    assert out["ce_recall_micro"] == pytest.approx(2 / 3)  # 2 / (2 + 1)
    assert out["ce_f1_micro"] == pytest.approx(4 / 7)  # 2*2 / (2*2 + 2 + 1)
    assert out["ce_precision_macro"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert out["ce_recall_macro"] == pytest.approx((1 + 0 + 1 + 0) / 4)
    assert out["ce_f1_macro"] == pytest.approx((2 / 3 + 0 + 1 + 0) / 4)
    assert out["ce_f1_a"] == pytest.approx(2 / 3) and out["ce_precision_d"] == 0.0


def test_structured_and_free_text_reports():
    refs = [
        js([{"name": "pleural effusion", "probability": 3, "level": "small", "location": None}], ["pneumothorax"]),
        "The heart is enlarged. No pleural effusion or pneumothorax.",
        "No acute cardiopulmonary process.",
    ]
    hyps = [
        js(
            [
                {"name": "pleural effusion", "probability": 2, "level": None, "location": None},
                {"name": "atelectasis", "probability": 3, "level": None, "location": None},
            ]
        ),
        "Cardiomegaly.",
        "{not a report",
    ]
    per = evaluate(refs, hyps, ["ce"], per_report=True)
    assert per["ce_ref_labels"] == ["Pleural Effusion", "Cardiomegaly", NO_FINDING]
    assert per["ce_hyp_labels"] == ["Atelectasis; Pleural Effusion", "Cardiomegaly", NO_FINDING]
    assert (per["ce_tp"], per["ce_fp"], per["ce_fn"]) == ([1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert per["ce_status"] == ["ok", "ok", "hyp:unparseable"]
    out = evaluate(refs, hyps, ["ce"])
    assert out["ce_precision_micro"] == pytest.approx(3 / 4) and out["ce_recall_micro"] == 1.0
    assert out["ce_f1_pleural_effusion"] == 1.0 and out["ce_f1_atelectasis"] == 0.0
    assert (out["ce_hyp_valid"], out["ce_hyp_unparseable"], out["ce_hyp_free_text"]) == (pytest.approx(1 / 3),) * 3
    assert out["ce_failures"] == 1.0
    strict = evaluate(refs, hyps, ["ce"], options={"ce": {"definite_only": True}}, per_report=True)
    assert strict["ce_hyp_labels"][0] == "Atelectasis"  # probable effusion no longer counts


def test_broken_structured_reference_is_a_user_error():
    with pytest.raises(UserError, match="row 1 looks like JSON"):
        evaluate([js(), '{"impression": "clear"}'], [js(), js()], ["ce"])


LABELED = SHARED_DATA / "chexpert-labeler" / "labeled_reports.csv"


@pytest.mark.skipif(not LABELED.is_file(), reason="../shared/data/chexpert-labeler not present")
def test_labels_of_the_chexpert_labeler_examples():
    """The labeler's 4 labeled reports: with definite_only, our positives are its positives (1.0); by
    default "may reflect atelectasis or consolidation" (labeler: uncertain) counts as probable."""
    import polars as pl

    table = pl.read_csv(LABELED)
    texts = table["Reports"].to_list()
    want = ["; ".join(c for c in CHEXPERT_14 if row[c] == 1.0) for row in table.iter_rows(named=True)]
    strict = evaluate(texts, texts, ["ce"], per_report=True, options={"ce": {"definite_only": True}})
    assert strict["ce_ref_labels"] == want
    default = evaluate(texts, texts, ["ce"], per_report=True)
    assert default["ce_ref_labels"][2] == "Lung Opacity; Consolidation; Atelectasis"


def test_report_f1_smoothing_and_weights_hand_computed():
    one, two, three = frozenset({"Edema"}), frozenset({"Edema", "Atelectasis"}), frozenset({"Atelectasis"})
    # (2 tp + a) / (2 tp + fp + fn + a)
    assert report_f1(one, three, 1.0) == pytest.approx(1 / 3)  # tp 0, fp 1, fn 1
    assert report_f1(two, one, 1.0) == pytest.approx(3 / 4) and report_f1(two, one, 0.0) == pytest.approx(2 / 3)
    assert report_f1(frozenset(), frozenset(), 0.0) == 1.0 and report_f1(frozenset(), one, 0.0) == 0.0
    # Atelectasis weighs 2: tp 1, fn 2 -> (2 + 1) / (2 + 2 + 1)
    assert report_f1(two, one, 1.0, {"Atelectasis": 2.0}) == pytest.approx(3 / 5)


def test_observation_weights_follow_the_most_significant_finding():
    mapping = chexpert_map()
    ref = rep(Finding("pneumothorax"), Finding("cardiomegaly"))
    hyp = rep(Finding("pleural effusion"), Finding("hemothorax"), Finding("scarring"))
    weights = label_weights((ref, hyp), "weighted", mapping)
    assert weights == {"Pneumothorax": 2.0, "Cardiomegaly": 1.0, "Pleural Effusion": 2.0, "Lung Opacity": 0.5}
    assert set(label_weights((ref, hyp), "uniform", mapping).values()) == {1.0}
    hyps = [rep(Finding("cardiomegaly")).to_json(), rep(Finding("pneumothorax")).to_json()]
    out = evaluate([ref.to_json()] * 2, hyps, ["ce"], per_report=True)
    # a missed pneumothorax (2) costs more than a missed cardiomegaly (1):
    # (2 + 1) / (2 + 2 + 1) vs (4 + 1) / (4 + 1 + 1)
    assert out["ce_f1"] == [pytest.approx(3 / 5), pytest.approx(5 / 6)]


def test_per_report_f1_ranks_more_false_labels_lower():
    ref = js([{"name": "cardiomegaly", "probability": 3}])
    one = js([{"name": "atelectasis", "probability": 3}])
    four = js([{"name": n, "probability": 3} for n in ("atelectasis", "pleural effusion", "edema", "pneumonia")])
    out = evaluate([ref] * 3, [one, four, ref], ["ce"], per_report=True)
    # cardiomegaly vs atelectasis: tp 0, fp 1, fn 1 -> 1/3; four false labels and the miss: 1/6; equal: 1
    assert out["ce_f1"] == [pytest.approx(1 / 3), pytest.approx(1 / 6), 1.0]
    plain = evaluate([ref] * 2, [one, four], ["ce"], per_report=True, options={"ce": {"smoothing": 0.0}})
    assert plain["ce_f1"] == [0.0, 0.0]


def test_per_report_f1_of_two_reports_without_labels_is_one():
    # granuloma has no observation, but it is a finding: neither side has No Finding or any label
    ref, hyp = js([{"name": "granuloma", "probability": 3}]), js([{"name": "scoliosis", "probability": 3}])
    out = evaluate([ref], [hyp], ["ce"], per_report=True, options={"ce": {"smoothing": 0.0}})
    assert out["ce_ref_labels"] == [""] and out["ce_hyp_labels"] == [""] and out["ce_f1"] == [1.0]


@pytest.mark.parametrize("options", [{"smoothing": -1}, {"significance": "clinical"}])
def test_bad_per_report_options_are_user_errors(options):
    with pytest.raises(UserError, match=next(iter(options))):
        evaluate([js()], [js()], ["ce"], options={"ce": options})
