"""The ReXrank leaderboard's columns, each computed the way ReXrank computes it (docs/metrics.md,
"ReXrank preset"): `srrg score --preset rexrank` scores the metric `rexrank`, which runs the parts
below and writes one row comparable with the leaderboard, every column with its signature.

- `rexrank_bleu`: CXR-Report-Metric's BLEU, a per-report BLEU-2 (fast_bleu, NLTK smoothing method 1
  with epsilon 0.1) on lower-cased text split on spaces with periods split off, averaged over reports;
- `rexrank_radcliq`: one RadEval RadCliQ-v1 pass, which computes the composite's four inputs per
  report (BERTScore, SembScore, RadGraph entity/relation F1, BLEU-2) and RadCliQ-v1 from them;
  ReXrank's BERTScore, SembScore and RadGraph columns are those inputs, its 1/RadCliQ-v1 the inverse;
- `ratescore` and `green_model` (srrg.metrics.radeval) for RaTEScore and GREEN;
- 1/FineRadScore, an LLM judge srrg does not implement: an explicit unavailable column.

A part whose weights or extra are missing does not stop the others: its columns are NaN with status
`unavailable`, their signatures say so, and one line names the reason.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from srrg.errors import UserError
from srrg.metrics import radeval as rv
from srrg.metrics.base import Metric, MetricResult, get_metric, nanmean, register
from srrg.metrics.signature import compose, insert_part
from srrg.settings.metrics import METRIC_OPTIONS, RadEvalConfig, RexrankConfig

UNAVAILABLE = "unavailable"
# smoothing of fast_bleu's default (NLTK method 1): a zero n-gram match count becomes epsilon
BLEU_EPSILON = 0.1
FINERADSCORE_REASON = (
    "FineRadScore is an LLM judge (GPT-4 or Claude 3 with the rajpurkarlab/FineRadScore prompts) "
    "that srrg does not implement"
)


def cxr_tokens(text: str) -> list[str]:
    """CXR-Report-Metric's report tokens: lower case, a space put before every period, split on the
    space character only (a newline stays inside its token), empty strings dropped."""
    return [t for t in text.lower().replace(".", " .").split(" ") if t]


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def sentence_bleu(refs: Sequence[Sequence[str]], hyp: Sequence[str], order: int = 2) -> float:
    """BLEU of one hypothesis as fast_bleu (hence NLTK's sentence BLEU) computes it: clipped n-gram
    precisions with uniform weights, each zero match count replaced by epsilon 0.1 (method 1), 0 when
    no unigram matches, brevity penalty against the closest reference length (the shorter on a tie)."""
    log_sum = 0.0
    for n in range(1, order + 1):
        counts = _ngrams(hyp, n)
        most = Counter[tuple[str, ...]]()
        for ref in refs:
            most |= _ngrams(ref, n)
        matches = sum(min(c, most[g]) for g, c in counts.items())
        total = max(1, sum(counts.values()))
        if n == 1 and matches == 0:
            return 0.0
        log_sum += math.log((matches or BLEU_EPSILON) / total) / order
    c = len(hyp)
    r = min((abs(len(ref) - c), len(ref)) for ref in refs)[1]
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * math.exp(log_sum)


@register
class RexrankBleu(Metric):
    """ReXrank's BLEU column: per-report BLEU-2 (CXR-Report-Metric), corpus = mean over reports."""

    name = "rexrank_bleu"
    keys = ("rexrank_bleu",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        per = [sentence_bleu([cxr_tokens(r)], cxr_tokens(h)) for r, h in zip(rv.texts(refs), rv.texts(hyps))]
        return MetricResult({"rexrank_bleu": per}, {"rexrank_bleu": nanmean(per)})

    def signature(self, key: str) -> str:
        parts = [("n", "2"), ("tok", "cxr-report-metric"), ("smoothing", "epsilon0.1"), ("avg", "report")]
        return compose(self.name, parts)


# rexrank_radcliq per-report column -> the RadEval RadCliQ-v1 input it is
RADCLIQ_INPUTS = {
    "rexrank_bertscore": "bertscore",
    "rexrank_sembscore": "semb_score",
    "rexrank_radgraph": "radgraph",
}
# what fixes each column beyond RadEval's version and the weights
RADCLIQ_PARTS: dict[str, list[tuple[str, str]]] = {
    "rexrank_bertscore": [
        ("model", "distilroberta-base"),
        ("layers", "5"),
        ("rescale", "true"),
        ("idf", "refs-of-call"),
        ("unverified", "idf"),
    ],
    "rexrank_sembscore": [("model", "chexbert"), ("value", "cls-cosine")],
    "rexrank_radgraph": [("model", "radgraph"), ("value", "entity-relation-f1-mean")],
    "rexrank_radcliq_v1": [("version", "1"), ("value", "mean"), ("direction", "lower")],
    "rexrank_radcliq_v1_inverse": [
        ("version", "1"),
        ("value", "1/mean"),
        ("direction", "higher"),
        ("unverified", "inversion"),
    ],
}


def radcliq_v1(composite: Any, features: Any) -> list[float]:
    """RadCliQ-v1 of each row of the four inputs: RadEval's scaler, then its linear coefficients
    (the last one the intercept), as CXR-Report-Metric's radcliq-v1.pkl predicts."""
    import numpy as np

    scaled = composite.scaler.transform(features)
    return [float(v) for v in np.hstack([scaled, np.ones((scaled.shape[0], 1))]) @ composite.coefs]


@register
class RexrankRadCliQ(Metric):
    """ReXrank's BERTScore, SembScore, RadGraph and 1/RadCliQ-v1 columns from one RadEval RadCliQ-v1
    pass. Not cached per report: BERTScore's idf comes from the references of the same call."""

    name = "rexrank_radcliq"
    keys = (*RADCLIQ_INPUTS, "rexrank_radcliq_v1", "rexrank_radcliq_status")

    def signature(self, key: str) -> str:
        parts = RADCLIQ_PARTS.get(key, [("column", "all")])
        return compose(self.name, [rv.version_part(), *parts, *rv.weights(self.name)])

    def raw(self, refs: list[str], hyps: list[str]) -> dict[str, list[float]]:
        """The four inputs and RadCliQ-v1 per report (RadEval's CompositeMetric, one pass)."""
        composite = rv.radeval_metric("radcliq", self.name)._scorer
        inputs = composite._compute_sub_metrics(refs, hyps)
        out = {key: [float(v) for v in inputs[name]] for key, name in RADCLIQ_INPUTS.items()}
        out["rexrank_radcliq_v1"] = radcliq_v1(composite, composite._build_matrix(inputs))
        for key, values in out.items():
            if len(values) != len(refs):
                raise ValueError(f"RadEval radcliq: {len(values)} values of {key} for {len(refs)} pairs")
        return out

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        if not refs:
            return MetricResult({k: [] for k in self.keys}, {})
        # CXR-Report-Metric collapses runs of spaces before BERTScore; the other inputs split on
        # whitespace, so the same texts serve all four
        ref_texts, hyp_texts = ([re.sub(" +", " ", t) for t in rv.texts(side)] for side in (refs, hyps))
        per = {k: [rv.as_float(v) for v in values] for k, values in self.raw(ref_texts, hyp_texts).items()}
        status = [rv.OK if all(math.isfinite(per[k][i]) for k in per) else rv.NO_SCORE for i in range(len(refs))]
        summary = {k: rv.mean(v) for k, v in per.items()}
        summary["rexrank_radcliq_v1_inverse"] = rv.inverse(summary["rexrank_radcliq_v1"])
        summary["rexrank_radcliq_failures"] = float(status.count(rv.NO_SCORE))
        return MetricResult({**per, "rexrank_radcliq_status": status}, summary)


@dataclass(frozen=True)
class Column:
    """One ReXrank leaderboard column: its heading, the srrg metric that computes it and the summary key."""

    heading: str
    metric: str
    key: str


COLUMNS = (
    Column("BLEU", "rexrank_bleu", "rexrank_bleu"),
    Column("BERTScore", "rexrank_radcliq", "rexrank_bertscore"),
    Column("SembScore", "rexrank_radcliq", "rexrank_sembscore"),
    Column("RadGraph", "rexrank_radcliq", "rexrank_radgraph"),
    Column("1/RadCliQ-v1", "rexrank_radcliq", "rexrank_radcliq_v1_inverse"),
    Column("RaTEScore", "ratescore", "ratescore"),
    Column("GREEN", "green_model", "green_model"),
    Column("1/FineRadScore", "fineradscore", "fineradscore_inverse"),
)
# the parts `rexrank` runs, in column order (FineRadScore has no srrg metric)
PARTS = tuple(dict.fromkeys(c.metric for c in COLUMNS if c.metric != "fineradscore"))


def note(line: str) -> None:
    """One line on stderr: why a ReXrank column holds no number."""
    print(f"rexrank: {line}", file=sys.stderr)


@register
class Rexrank(Metric):
    """Every ReXrank column (COLUMNS) with its part's signature. A part that cannot load (RadEval,
    a dependency or its weights missing: a UserError) leaves its columns NaN, its `<part>_status`
    `unavailable`, `status:unavailable` in their signatures, and one line on stderr."""

    name = "rexrank"
    keys = (
        "rexrank_bleu",
        *RexrankRadCliQ.keys,
        "ratescore",
        "ratescore_status",
        "green_model",
        "green_model_status",
        "fineradscore_status",
    )
    cfg: RexrankConfig

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.signatures: dict[str, str] = {}

    def part(self, name: str) -> Metric:
        """The part `name`, given this metric's cache folder when it keeps a per-report cache."""
        if METRIC_OPTIONS[name] is RadEvalConfig:
            return get_metric(name, cache_dir=self.cfg.cache_dir)
        return get_metric(name)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        merged = MetricResult({}, {})
        failed: set[str] = set()
        for name in PARTS:
            metric = self.part(name)
            try:
                result = metric.compute(refs, hyps)
            except UserError as err:
                failed.add(name)
                columns = [c for c in COLUMNS if c.metric == name]
                result = MetricResult({f"{name}_status": [UNAVAILABLE] * len(refs)}, {c.key: math.nan for c in columns})
                note(f"{', '.join(c.heading for c in columns)} not scored: {str(err).strip().splitlines()[0]}")
            merged.per_report.update(result.per_report)
            merged.summary.update(result.summary)
            for key in (*result.per_report, *result.summary):
                signature = metric.signature(key)
                self.signatures[key] = insert_part(signature, "status", UNAVAILABLE) if name in failed else signature
        merged.per_report["fineradscore_status"] = [UNAVAILABLE] * len(refs)
        merged.summary["fineradscore_inverse"] = math.nan
        note(f"1/FineRadScore not scored: {FINERADSCORE_REASON}")
        fine = compose("fineradscore", [("status", UNAVAILABLE), ("reason", "llm-judge-not-built")])
        self.signatures.update({"fineradscore_status": fine, "fineradscore_inverse": fine})
        return merged

    def signature(self, key: str) -> str:
        """The signature of the part that produced `key` (after compute)."""
        return self.signatures[key]
