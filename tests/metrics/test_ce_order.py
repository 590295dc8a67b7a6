"""Order independence of the CheXpert labeling of `ce` (srrg.metrics.ce): two findings of one
observation give the same labels and weights whichever comes first, the heavier first included
(issue 38). Weights: hemothorax is urgent (2), pleural effusion plain (1), scarring incidental (0.5);
hemothorax and pleural effusion both count as Pleural Effusion, scarring and lung opacity as Lung Opacity."""

from __future__ import annotations

import pytest

from srrg.metrics import evaluate
from srrg.metrics.ce import label_weights, observation_labels
from srrg.metrics.chexpert import NO_FINDING, chexpert_map
from srrg.report import Finding, StructuredReport


def report(*names: str, probability: int = 3) -> StructuredReport:
    return StructuredReport(tuple(Finding(n, probability, None, None) for n in names), ())


@pytest.mark.parametrize("names", [("hemothorax", "pleural effusion"), ("pleural effusion", "hemothorax")])
def test_an_observation_weighs_as_its_heaviest_finding_in_either_order(names: tuple[str, str]) -> None:
    """Bug caught: `out[label] = weight(...)` (the last finding wins) gives 1 when the urgent
    hemothorax comes first; `setdefault` (the first wins) gives 1 in the other order."""
    mapping = chexpert_map()
    assert label_weights((report(*names),), "weighted", mapping) == {"Pleural Effusion": 2.0}
    heavy, light = report("hemothorax"), report("pleural effusion")
    assert label_weights((heavy, light), "weighted", mapping) == {"Pleural Effusion": 2.0}
    assert label_weights((light, heavy), "weighted", mapping) == {"Pleural Effusion": 2.0}
    assert label_weights((report("lung opacity", "scarring"),), "weighted", mapping) == {"Lung Opacity": 1.0}
    assert label_weights((report("scarring", "lung opacity"),), "weighted", mapping) == {"Lung Opacity": 1.0}


@pytest.mark.parametrize("names", [("hemothorax", "pleural effusion"), ("pleural effusion", "hemothorax")])
def test_per_report_f1_does_not_depend_on_finding_order(names: tuple[str, str]) -> None:
    """ref {Pleural Effusion} weighs 2 (hemothorax), hyp {No Finding} weighs 1: tp 0, fp 1, fn 2,
    smoothing 1 -> (0 + 1) / (0 + 1 + 2 + 1) = 1/4 (a lost urgent weight gives 1/3)."""
    out = evaluate([report(*names).to_json()], [StructuredReport().to_json()], ["ce"], per_report=True)
    assert out["ce_f1"] == [pytest.approx(1 / 4)]
    assert out["ce_ref_labels"] == ["Pleural Effusion"] and out["ce_hyp_labels"] == [NO_FINDING]


@pytest.mark.parametrize("first_definite", [True, False])
def test_a_possible_finding_does_not_unlabel_a_definite_one_of_the_same_observation(first_definite: bool) -> None:
    """Bug caught: labels kept per observation as the last finding's verdict (a dict, not a set)
    drop Pleural Effusion when the possible (probability 1) hemothorax follows the definite effusion."""
    definite = Finding("pleural effusion", 3, None, None)
    possible = Finding("hemothorax", 1, None, None)
    pair = (definite, possible) if first_definite else (possible, definite)
    assert observation_labels(StructuredReport(pair, ()), definite_only=False) == frozenset({"Pleural Effusion"})
