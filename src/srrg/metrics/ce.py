"""Clinical efficacy (CE) as the R2Gen family of papers reports it (docs/metrics.md, "Clinical
efficacy"): the 14 CheXpert observations are labeled on both reports, then precision, recall and F1,
micro and macro averaged and per observation.

Labels come from srrg's own structured reports instead of the CheXpert labeler: JSON reports are
parsed, free text goes through the extractor (srrg.extract), and the packaged data file
vocab/chexpert_map.yaml says which findings count as which observation. An observation is positive
when one of its findings is definite or probable (probability 3 or 2; option: definite only); No
Finding is positive when no finding is mentioned at all, at any probability, devices aside.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from srrg.errors import UserError
from srrg.metrics.base import Metric, MetricResult, hypothesis_rates, register
from srrg.metrics.chexpert import NO_FINDING, ChexpertMap, chexpert_map
from srrg.metrics.sscore_text import FREE_TEXT, hypothesis_kinds, structure, weight
from srrg.report import UNPARSEABLE, StructuredReport

NAME = "ce"


def slug(observation: str) -> str:
    """Summary-key form of an observation name: "Pleural Effusion" -> "pleural_effusion"."""
    return re.sub(r"\W+", "_", observation.lower()).strip("_")


def observation_labels(
    report: StructuredReport, definite_only: bool, mapping: ChexpertMap | None = None
) -> frozenset[str]:
    """The positive observations of one report (definite_only: CEConfig's). A finding without a
    probability is mentioned but not positive: it rules out No Finding without labeling its observation."""
    mapping = mapping or chexpert_map()
    threshold = 3 if definite_only else 2
    labels = {
        label
        for f in report.positive
        if f.probability is not None and f.probability >= threshold
        for label in mapping.findings.get(f.name, ())
    }
    if not any(f.name not in mapping.no_finding_ignores for f in report.positive):
        labels.add(NO_FINDING)
    return frozenset(labels)


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall, F1; a zero denominator gives 0 (scikit-learn's default, used by R2Gen)."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


def ce_summary(
    ref_labels: Sequence[frozenset[str]], hyp_labels: Sequence[frozenset[str]], observations: Sequence[str]
) -> dict[str, float]:
    """Micro (pooled counts), macro (mean over all 14 observations) and per-observation P/R/F1."""
    counts = {o: [0, 0, 0] for o in observations}  # tp, fp, fn
    for ref, hyp in zip(ref_labels, hyp_labels, strict=True):
        for o in observations:
            counts[o][0] += o in ref and o in hyp
            counts[o][1] += o in hyp and o not in ref
            counts[o][2] += o in ref and o not in hyp
    per = {o: prf(*c) for o, c in counts.items()}
    micro = prf(*(sum(c[i] for c in counts.values()) for i in range(3)))
    macro = [sum(v[i] for v in per.values()) / len(per) if per else math.nan for i in range(3)]
    out = {
        f"{NAME}_{m}_{avg}": vals[i]
        for avg, vals in (("micro", micro), ("macro", macro))
        for i, m in enumerate(("precision", "recall", "f1"))
    }
    for o, (p, r, f) in per.items():
        out.update({f"{NAME}_precision_{slug(o)}": p, f"{NAME}_recall_{slug(o)}": r, f"{NAME}_f1_{slug(o)}": f})
    return out


def label_weights(reports: Sequence[StructuredReport], significance: str, mapping: ChexpertMap) -> dict[str, float]:
    """Observation -> the largest significance weight (srrg.metrics.sscore_text.weight) of the
    findings that label it in these reports; an observation not listed weighs 1."""
    out: dict[str, float] = {}
    for report in reports:
        for f in report.positive:
            for label in mapping.findings.get(f.name, ()):
                out[label] = max(out.get(label, 0.0), weight(f.name, significance))
    return out


def report_f1(
    ref: frozenset[str], hyp: frozenset[str], smoothing: float, weights: Mapping[str, float] | None = None
) -> float:
    """Per-report F1 of two observation sets, (2 tp + a) / (2 tp + fp + fn + a) with a = smoothing
    and each observation counted with its weight (default 1); no label on either side -> 1
    (docs/metrics.md)."""
    weights = weights or {}

    def total(labels: frozenset[str]) -> float:
        return sum(weights.get(o, 1.0) for o in labels)

    tp, fp, fn = total(ref & hyp), total(hyp - ref), total(ref - hyp)
    denominator = 2 * tp + fp + fn + smoothing
    return (2 * tp + smoothing) / denominator if denominator else 1.0


def _status(ref: str, hyp: str) -> str:
    """ok, or the sides whose text could not be read, e.g. "hyp:unparseable"."""
    bad = [f"{side}:{s}" for side, s in (("ref", ref), ("hyp", hyp)) if s not in {"ok", "valid", "repaired"}]
    return ",".join(bad) or "ok"


@register
class CE(Metric):
    """Per report: true/false positive and false negative counts over the 14 observations, their F1
    (`ce_f1`, the per-report score), both label sets and a status; summary: P/R/F1 micro, macro,
    per observation, hypothesis parse rates."""

    name = NAME
    keys = (
        f"{NAME}_tp", f"{NAME}_fp", f"{NAME}_fn", f"{NAME}_f1",
        f"{NAME}_ref_labels", f"{NAME}_hyp_labels", f"{NAME}_status",
    )  # fmt: skip

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        mapping = chexpert_map()
        table = structure([*refs, *hyps], self.cfg.extract)
        ref_rows = [table[r if isinstance(r, str) else ""] for r in refs]
        hyp_rows = [table[h if isinstance(h, str) else ""] for h in hyps]
        broken = [i for i, (_, s) in enumerate(ref_rows) if s == UNPARSEABLE]
        if broken:
            raise UserError(
                f"ce: reference at row {broken[0]} looks like JSON but is not a structured report "
                f"({len(broken)} in all); give structured reports or free text"
            )
        ref_labels = [observation_labels(r, self.cfg.definite_only, mapping) for r, _ in ref_rows]
        hyp_labels = [observation_labels(h, self.cfg.definite_only, mapping) for h, _ in hyp_rows]
        order = {o: i for i, o in enumerate(mapping.observations)}
        per: dict[str, list[Any]] = {
            f"{NAME}_tp": [float(len(r & h)) for r, h in zip(ref_labels, hyp_labels)],
            f"{NAME}_fp": [float(len(h - r)) for r, h in zip(ref_labels, hyp_labels)],
            f"{NAME}_fn": [float(len(r - h)) for r, h in zip(ref_labels, hyp_labels)],
            f"{NAME}_f1": [
                report_f1(r, h, self.cfg.smoothing, label_weights((rr, hr), self.cfg.significance, mapping))
                for r, h, (rr, _), (hr, _) in zip(ref_labels, hyp_labels, ref_rows, hyp_rows)
            ],
            f"{NAME}_ref_labels": ["; ".join(sorted(r, key=order.__getitem__)) for r in ref_labels],
            f"{NAME}_hyp_labels": ["; ".join(sorted(h, key=order.__getitem__)) for h in hyp_labels],
            f"{NAME}_status": [_status(r[1], h[1]) for r, h in zip(ref_rows, hyp_rows)],
        }
        summary = ce_summary(ref_labels, hyp_labels, mapping.observations)
        kinds = hypothesis_kinds(hyps, [s for _, s in hyp_rows])
        summary.update(hypothesis_rates(NAME, kinds, extra=(FREE_TEXT,)))
        summary[f"{NAME}_failures"] = float(sum(s != "ok" for s in per[f"{NAME}_status"]))
        return MetricResult(per, summary)
