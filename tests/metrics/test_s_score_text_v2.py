"""The free-text S-Score's v2 reading (docs/metrics.md, "Free-text S-Score"): clinical weight by
vocab/significance.yaml, diagnostic precision by vocab/hierarchy.yaml and patient context by
vocab/expected.yaml, hand-computed on small invented pairs; and v1 still giving the earlier numbers."""

from __future__ import annotations

import pytest

from srrg.metrics import get_metric
from srrg.metrics.sscore_text import finding_weight, fold_general, pair_credit, score_pair_text
from srrg.report import Finding, StructuredReport
from srrg.settings.metrics import SScoreTextConfig
from srrg.vocab import findings
from srrg.vocab.clinical import ancestors, expected_findings, is_vaguer, significance_classes

V2 = SScoreTextConfig()
V1 = SScoreTextConfig(variant="v1")
ELDERLY = frozenset({"atherosclerosis", "degenerative changes"})


def rep(*names: str) -> StructuredReport:
    return StructuredReport(tuple(Finding(n) for n in names))


def s(ref: StructuredReport, hyp: StructuredReport, cfg: SScoreTextConfig = V2, expected=frozenset()) -> float:
    return score_pair_text(ref, hyp, cfg, expected)["s_score"]


def test_v2_is_the_default():
    """The documented default reading is v2 (a silent fall back to v1 would undo the issue)."""
    assert SScoreTextConfig().variant == "v2"
    assert SScoreTextConfig.s_rrg().variant == "v1"


def test_missed_pneumothorax_costs_more_than_missed_spine_degeneration():
    """Urgent 2, incidental 0.5: missing the pneumothorax gives p = 2/4, d = 0.5/2.5; missing the
    degeneration p = 5/5.5, d = 2/2.5 (uniform weights would score both alike)."""
    ref = rep("pneumothorax", "degenerative changes")
    missed_ptx = s(ref, rep("degenerative changes"))
    missed_spine = s(ref, rep("pneumothorax"))
    assert missed_ptx == pytest.approx((2 / 4 + 0.5 / 2.5) / 2)
    assert missed_spine == pytest.approx((5 / 5.5 + 2 / 2.5) / 2)
    uniform = SScoreTextConfig(significance="uniform")
    assert s(ref, rep("degenerative changes"), uniform) == pytest.approx(s(ref, rep("pneumothorax"), uniform))


def test_class_weights_are_options():
    """w_urgent/w_actionable/w_incidental reach the weight (they are in the signature)."""
    cfg = SScoreTextConfig(w_urgent=3.0, w_incidental=0.25)
    assert finding_weight("pneumothorax", cfg) == 3.0
    assert finding_weight("scoliosis", cfg) == 0.25
    assert finding_weight("pleural effusion", cfg) == 1.0
    assert "w_urgent:3" in get_metric("s_score_text", w_urgent=3.0).signature("s_score_text")


def test_vague_parent_earns_partial_credit():
    """Pneumonia answered by consolidation (its vaguer name): credit 0.5, p = 2/3, d = 0.5, between
    the exact answer (1) and no answer (p = 1/2, d = 0: 0.25)."""
    ref = rep("pneumonia")
    assert s(ref, rep("consolidation")) == pytest.approx((2 / 3 + 0.5) / 2)
    assert s(ref, rep("pneumonia")) == 1.0
    assert s(ref, rep()) == pytest.approx(0.25)
    assert s(ref, rep("lung opacity")) == pytest.approx((2 / 3 + 0.5) / 2)  # two levels up: same credit


def test_specific_answer_not_penalized_against_vague_reference():
    """Consolidation answered by pneumonia, a widened mediastinum by an aortic aneurysm: full credit;
    specific_credit=0.5 gives the vague answer's value back."""
    assert s(rep("consolidation"), rep("pneumonia")) == 1.0
    assert s(rep("enlarged cardiomediastinum"), rep("aortic aneurysm")) == 1.0
    half = SScoreTextConfig(specific_credit=0.5)
    assert s(rep("consolidation"), rep("pneumonia"), half) == pytest.approx((2 / 3 + 0.5) / 2)


def test_unrelated_and_sibling_findings_keep_their_credit():
    """A nodule for a mass (one CheXpert observation, neither vaguer) keeps related_credit; a
    pneumothorax for an effusion earns nothing."""
    assert pair_credit("mass", "nodule", V2) == V2.related_credit
    assert pair_credit("pleural effusion", "pneumothorax", V2) == 0.0
    assert pair_credit("pneumonia", "consolidation", V2) == V2.vague_credit
    assert pair_credit("consolidation", "pneumonia", V2) == V2.specific_credit


def test_hierarchy_does_not_fold_a_report():
    """A granuloma beside a nodule, cardiomegaly beside a pericardial effusion stay two findings each:
    the hierarchy names answers, only the observation hierarchy folds (a lost nodule would go unscored)."""
    report = {n: Finding(n) for n in ("granuloma", "nodule", "cardiomegaly", "pericardial effusion")}
    assert set(fold_general(report)) == set(report)
    assert s(rep("granuloma", "nodule"), rep("granuloma")) < s(rep("granuloma"), rep("granuloma"))


def test_context_changes_only_expected_findings():
    """An elderly patient's expected atherosclerosis weighs 0.5 * 0.5 when missed (p = 5/5.25,
    d = 2/2.25); a missed pneumothorax, which no rule expects, scores the same with and without it."""
    ref = rep("pneumothorax", "atherosclerosis")
    assert s(ref, rep("pneumothorax"), expected=ELDERLY) == pytest.approx((5 / 5.25 + 2 / 2.25) / 2)
    assert s(ref, rep("pneumothorax")) == pytest.approx((5 / 5.5 + 2 / 2.5) / 2)
    missed = rep("atherosclerosis")
    assert s(rep("pneumothorax"), missed, expected=ELDERLY) != s(rep("pneumothorax"), missed)  # a false one too
    assert s(rep("pneumothorax", "pleural effusion"), rep("pleural effusion"), expected=ELDERLY) == s(
        rep("pneumothorax", "pleural effusion"), rep("pleural effusion")
    )
    assert s(ref, rep("pneumothorax"), SScoreTextConfig(expected_weight=1.0), ELDERLY) == s(ref, rep("pneumothorax"))


def test_expected_rules_read_age_and_indication():
    """Age >= 65 expects age-related findings; 'status post CABG' expects postoperative air, a
    preoperative visit does not; resuscitation expects fractures; no context expects nothing."""
    assert "degenerative changes" in expected_findings({"age": "78 years"})
    assert "degenerative changes" not in expected_findings({"age": "40"})
    assert "pneumomediastinum" in expected_findings({"indication": "Status post CABG, day 1"})
    assert not expected_findings({"indication": "preoperative assessment"})
    assert "fracture" in expected_findings({"indication": "after CPR"})
    assert expected_findings({}) == frozenset()


def test_metric_reads_context_only_in_v2():
    """compute_with_context: v2 scores an elderly patient's missed atherosclerosis higher than a young
    one's; v1 and a pair without context ignore it."""
    refs = ["Small right pneumothorax. Aortic atherosclerosis."] * 2
    hyps = ["Small right pneumothorax."] * 2
    contexts = [{"age": "30"}, {"age": "85"}]
    young, old = get_metric("s_score_text").compute_with_context(refs, hyps, contexts).per_report["s_score_text"]
    assert old > young
    assert young == get_metric("s_score_text").compute(refs[:1], hyps[:1]).per_report["s_score_text"][0]
    v1 = get_metric("s_score_text", variant="v1").compute_with_context(refs, hyps, contexts).per_report
    assert v1["s_score_text"][0] == v1["s_score_text"][1]


def test_v1_reproduces_the_earlier_reading():
    """variant v1 gives a vague pair related_credit both ways and ignores the v2 table (low lung
    volumes weigh 1 there, 0.5 as incidental in v2): the numbers of the reading before v2."""
    assert s(rep("consolidation"), rep("pneumonia"), V1) == pytest.approx((2 / 3 + 0.5) / 2)
    assert finding_weight("hypoinflation", V1) == 1.0
    assert finding_weight("hypoinflation", V2) == 0.5


def test_vocab_tables_cover_the_vocabulary():
    """Every finding has a significance class; every hierarchy name is a finding and no name is its
    own ancestor (a cycle would fold findings forever)."""
    assert set(significance_classes()) == set(findings())
    assert all(name not in up for name, up in ancestors().items())
    assert is_vaguer("lung opacity", "pneumonia") and not is_vaguer("pneumonia", "lung opacity")
