"""NLG metrics as in the report-generation literature (DESIGN §4.2): the pycocoevalcap scorers on
lower-cased text with punctuation split off. Structured JSON is scored through its sentence rendering.

BLEU is corpus-level (option "closest"); METEOR 1.5 runs in Java; ROUGE-L uses beta 1.2; CIDEr-D
ranges over [0, 10]. Pairs where a side has no token get ROUGE-L 0 (pycocoevalcap would divide by 0).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from typing import Sequence

from srrg.metrics.base import Metric, MetricResult, register
from srrg.report import text_for_nlg

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> str:
    """Lower-case, split punctuation off words, one space between tokens."""
    return " ".join(_TOKEN.findall(text.lower()))


def prepare(refs: Sequence[str], hyps: Sequence[str]) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The {id: [text]} dictionaries the coco scorers take, after rendering and tokenization."""
    gts = {i: [tokenize(text_for_nlg(r))] for i, r in enumerate(refs)}
    res = {i: [tokenize(text_for_nlg(h))] for i, h in enumerate(hyps)}
    return gts, res


@register
class Bleu(Metric):
    name = "bleu"
    keys = ("bleu_1", "bleu_2", "bleu_3", "bleu_4")

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.bleu.bleu import Bleu as CocoBleu

        if not refs:
            return MetricResult({k: [] for k in self.keys}, {k: 0.0 for k in self.keys})
        gts, res = prepare(refs, hyps)
        with contextlib.redirect_stdout(io.StringIO()):  # the scorer prints its length ratios
            corpus, per = CocoBleu(4).compute_score(gts, res, verbose=0)
        return MetricResult(
            {k: [float(v) for v in per[i]] for i, k in enumerate(self.keys)},
            {k: float(corpus[i]) for i, k in enumerate(self.keys)},
        )


@register
class Meteor(Metric):
    name = "meteor"
    keys = ("meteor",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        if not refs:
            return MetricResult({"meteor": []}, {"meteor": 0.0})
        if shutil.which("java") is None:
            raise RuntimeError(
                "METEOR needs Java (METEOR 1.5 is a Java program): install a JRE, e.g. "
                "`apt-get install default-jre-headless`, or leave 'meteor' out of the metrics"
            )
        from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor

        gts, res = prepare(refs, hyps)
        scorer = CocoMeteor()
        try:
            corpus, per = scorer.compute_score(gts, res)
        finally:  # one JVM per call; do not leave it running
            scorer.meteor_p.kill()
            scorer.meteor_p.wait()
        return MetricResult({"meteor": [float(v) for v in per]}, {"meteor": float(corpus)})


@register
class RougeL(Metric):
    name = "rouge_l"
    keys = ("rouge_l",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.rouge.rouge import Rouge

        gts, res = prepare(refs, hyps)
        scorer = Rouge()
        per = [scorer.calc_score(res[i], gts[i]) if res[i][0] and gts[i][0] else 0.0 for i in gts]
        per = [float(v) for v in per]
        return MetricResult({"rouge_l": per}, {"rouge_l": sum(per) / len(per) if per else 0.0})


@register
class Cider(Metric):
    name = "cider"
    keys = ("cider",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.cider.cider import Cider as CocoCider

        if not refs:
            return MetricResult({"cider": []}, {"cider": 0.0})
        gts, res = prepare(refs, hyps)
        corpus, per = CocoCider().compute_score(gts, res)
        return MetricResult({"cider": [float(v) for v in per]}, {"cider": float(corpus)})
