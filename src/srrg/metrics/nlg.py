"""NLG metrics as in the report-generation literature: the pycocoevalcap scorers (BLEU corpus level
with option "closest", METEOR 1.5 in Java, ROUGE-L beta 1.2, CIDEr-D in [0, 10]) on text tokenized by
one of three explicit conventions, because published tables differ (docs/metrics.md, "Tokenization"):

- `r2gen`: the R2Gen / R2GenGPT report cleaning (lower case, punctuation except sentence periods
  removed, numbers kept, " . " between sentences);
- `ptb`: the COCO caption pipeline, Stanford PTBTokenizer (the Java jar pycocoevalcap ships) with
  lower case and punctuation tokens dropped;
- `none`: the text as given, split on whitespace.

Structured JSON is scored through its sentence rendering. Pairs where a side has no token get
ROUGE-L 0 (pycocoevalcap would divide by 0); ROUGE-L truncates pairs longer than `max_tokens`
(its LCS is quadratic) and records that per report.
"""

from __future__ import annotations

import contextlib
import io
import math
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from srrg.errors import StageFailed, UserError
from srrg.metrics.base import Metric, MetricResult, register
from srrg.report import text_for_nlg
from srrg.settings.metrics import TOKENIZATIONS

# R2Gen cleaning (docs/metrics.md): list numbering it removes, in its order of replacement
_R2GEN_NUMBERING = (
    ("1. ", ""),
    (". 2. ", ". "),
    (". 3. ", ". "),
    (". 4. ", ". "),
    (". 5. ", ". "),
    (" 2. ", ". "),
    (" 3. ", ". "),
    (" 4. ", ". "),
    (" 5. ", ". "),
)
# characters removed from every sentence: quotes and slashes, then .,?;*!%^&_+()[]{} and the ASCII
# range ':' .. '[' (which holds ;<=>?@ and the capitals, already lower-cased); '-', '#' and digits stay
_R2GEN_QUOTES = str.maketrans("", "", "\"/\\'")
_R2GEN_PUNCT = str.maketrans("", "", ".,?;*!%^&_+()]{}" + "".join(map(chr, range(ord(":"), ord("[") + 1))))

# PTB tokens the COCO pipeline drops after tokenization
PTB_PUNCTUATION = frozenset(
    {"''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"}
)
_PTB_CLASS = "edu.stanford.nlp.process.PTBTokenizer"


def _squeeze(text: str, pair: str, times: int) -> str:
    """Replace `pair` by its first character `times` times over, as R2Gen collapses repeats."""
    for _ in range(times):
        text = text.replace(pair, pair[0])
    return text


def clean_r2gen(text: str) -> str:
    """R2Gen's MIMIC-CXR report cleaning: newlines to spaces, repeated '_', ' ', '.' collapsed,
    list numbering removed, lower case, split on '. ', punctuation removed from each sentence,
    sentences joined by ' . ' and closed by ' .'. Whitespace-only text stays empty (no tokens)."""
    if not text.strip():
        return ""
    text = _squeeze(_squeeze(_squeeze(text.replace("\n", " "), "__", 7), "  ", 6), "..", 8)
    for old, new in _R2GEN_NUMBERING:
        text = text.replace(old, new)
    sentences = [
        s.translate(_R2GEN_QUOTES).strip().lower().translate(_R2GEN_PUNCT) for s in text.strip().lower().split(". ")
    ]
    return " ".join([*" . ".join(sentences).split(), "."])


def _ptb_jar() -> Path:
    """The Stanford CoreNLP jar inside pycocoevalcap (a namespace package: locate a module file)."""
    from pycocoevalcap.tokenizer import ptbtokenizer

    return Path(ptbtokenizer.__file__).parent / ptbtokenizer.STANFORD_CORENLP_3_4_1_JAR


def _one_line(text: str) -> str:
    """Every line break (\\n, \\r, ...) to a space: PTBTokenizer reads one text per line."""
    return " ".join(text.splitlines())


@lru_cache(maxsize=4)
def ptb_tokenize(texts: tuple[str, ...]) -> tuple[str, ...]:
    """The COCO tokenization of each text: Stanford PTBTokenizer (-preserveLines -lowerCase), PTB
    punctuation tokens dropped. One JVM for all texts; cached so the four NLG metrics share it."""
    if shutil.which("java") is None:
        raise UserError(
            "NLG tokenization 'ptb' runs Stanford PTBTokenizer (Java): install a JRE "
            "(e.g. apt-get install default-jre-headless) or set tokenization: r2gen"
        )
    lines = [_one_line(t) for t in texts]
    todo = [i for i, line in enumerate(lines) if line.strip()]
    out = [""] * len(texts)
    if not todo:
        return tuple(out)
    cmd = ["java", "-cp", str(_ptb_jar()), _PTB_CLASS, "-preserveLines", "-lowerCase", "-encoding", "utf-8"]
    done = subprocess.run(
        cmd, input="\n".join(lines[i] for i in todo).encode("utf-8"), capture_output=True, check=False
    )
    tokenized = done.stdout.decode("utf-8").split("\n")
    if done.returncode != 0 or len(tokenized) < len(todo):
        raise StageFailed(
            f"PTBTokenizer failed (exit {done.returncode}, {len(tokenized)} lines for {len(todo)} texts): "
            f"{done.stderr.decode('utf-8', 'replace').strip()[:200]}"
        )
    for i, line in zip(todo, tokenized):
        out[i] = " ".join(w for w in line.split() if w not in PTB_PUNCTUATION)
    return tuple(out)


def tokenize(texts: Sequence[str], tokenization: str) -> list[str]:
    """Texts as space-separated tokens under one convention (docs/metrics.md, "Tokenization")."""
    if tokenization == "r2gen":
        return [clean_r2gen(t) for t in texts]
    if tokenization == "ptb":
        return list(ptb_tokenize(tuple(texts)))
    if tokenization == "none":
        return [" ".join(t.split()) for t in texts]
    raise UserError(f"unknown tokenization {tokenization!r}; use one of {', '.join(TOKENIZATIONS)}")


def prepare(
    refs: Sequence[str], hyps: Sequence[str], tokenization: str
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The {id: [text]} dictionaries the coco scorers take, after rendering and tokenization."""
    tokens = tokenize([text_for_nlg(t) for t in [*refs, *hyps]], tokenization)
    n = len(refs)
    return {i: [tokens[i]] for i in range(n)}, {i: [tokens[n + i]] for i in range(len(hyps))}


# per pair, as pycocoevalcap cooks it: hypothesis length, closest reference length, n-gram guesses, matches
BLEU_STATS = ("testlen", "reflen", *(f"guess_{k}" for k in range(1, 5)), *(f"correct_{k}" for k in range(1, 5)))


def bleu_statistics(refs: Sequence[str], hyps: Sequence[str], tokenization: str) -> list[tuple[float, ...]]:
    """Per pair the sufficient statistics of corpus BLEU (BLEU_STATS), from pycocoevalcap's own
    cook functions with the "closest" reference length, so any subset of pairs can be rescored."""
    from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test

    gts, res = prepare(refs, hyps, tokenization)
    out = []
    for i in gts:
        c = cook_test(res[i][0], cook_refs(gts[i], n=4), eff="closest", n=4)
        out.append((float(c["testlen"]), float(c["reflen"]), *map(float, c["guess"]), *map(float, c["correct"])))
    return out


def corpus_bleu(totals: Sequence[float]) -> list[float]:
    """BLEU-1..4 from summed BLEU_STATS, with pycocoevalcap's corpus arithmetic (its constants
    1e-15 and 1e-9 keep zero counts finite); equal to the `bleu` metric's summary on the same pairs."""
    tiny, small = 1e-15, 1e-9
    testlen, reflen, guess, correct = totals[0], totals[1], totals[2:6], totals[6:10]
    ratio = (testlen + tiny) / (reflen + small)
    penalty = math.exp(1 - 1 / ratio) if ratio < 1 else 1.0
    product, scores = 1.0, []
    for k in range(4):
        product *= (correct[k] + tiny) / (guess[k] + small)
        scores.append(product ** (1 / (k + 1)) * penalty)
    return scores


class NLGMetric(Metric):
    """A pycocoevalcap scorer behind the tokenization option."""

    cfg: Any


@register
class Bleu(NLGMetric):
    name = "bleu"
    keys = ("bleu_1", "bleu_2", "bleu_3", "bleu_4")

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.bleu.bleu import Bleu as CocoBleu

        if not refs:
            return MetricResult({k: [] for k in self.keys}, {k: 0.0 for k in self.keys})
        gts, res = prepare(refs, hyps, self.cfg.tokenization)
        with contextlib.redirect_stdout(io.StringIO()):  # the scorer prints its length ratios
            corpus, per = CocoBleu(4).compute_score(gts, res, verbose=0)
        return MetricResult(
            {k: [float(v) for v in per[i]] for i, k in enumerate(self.keys)},
            {k: float(corpus[i]) for i, k in enumerate(self.keys)},
        )


@register
class Meteor(NLGMetric):
    name = "meteor"
    keys = ("meteor",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        if not refs:
            return MetricResult({"meteor": []}, {"meteor": 0.0})
        if shutil.which("java") is None:
            raise UserError(
                "METEOR needs Java (METEOR 1.5 is a Java program): install a JRE, e.g. "
                "`apt-get install default-jre-headless`, or leave 'meteor' out of the metrics"
            )
        from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor

        gts, res = prepare(refs, hyps, self.cfg.tokenization)
        scorer = CocoMeteor()
        try:
            corpus, per = scorer.compute_score(gts, res)
        finally:  # one JVM per call; do not leave it running
            scorer.meteor_p.kill()
            scorer.meteor_p.wait()
        return MetricResult({"meteor": [float(v) for v in per]}, {"meteor": float(corpus)})


def capped(text: str, max_tokens: int) -> tuple[str, bool]:
    """The first max_tokens tokens of a tokenized text, and whether anything was cut."""
    tokens = text.split()
    return (" ".join(tokens[:max_tokens]), True) if len(tokens) > max_tokens else (" ".join(tokens), False)


@register
class RougeL(NLGMetric):
    name = "rouge_l"
    keys = ("rouge_l", "rouge_l_status")

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.rouge.rouge import Rouge

        gts, res = prepare(refs, hyps, self.cfg.tokenization)
        scorer = Rouge()
        per: list[float] = []
        status: list[str] = []
        for i in gts:
            ref, cut_ref = capped(gts[i][0], self.cfg.max_tokens)
            hyp, cut_hyp = capped(res[i][0], self.cfg.max_tokens)
            per.append(float(scorer.calc_score([hyp], [ref])) if ref and hyp else 0.0)
            status.append("truncated" if cut_ref or cut_hyp else "ok")
        summary = {
            "rouge_l": sum(per) / len(per) if per else 0.0,
            "rouge_l_truncated": float(status.count("truncated")),
        }
        return MetricResult({"rouge_l": per, "rouge_l_status": status}, summary)


@register
class Cider(NLGMetric):
    name = "cider"
    keys = ("cider",)

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        from pycocoevalcap.cider.cider import Cider as CocoCider

        if not refs:
            return MetricResult({"cider": []}, {"cider": 0.0})
        gts, res = prepare(refs, hyps, self.cfg.tokenization)
        corpus, per = CocoCider().compute_score(gts, res)
        return MetricResult({"cider": [float(v) for v in per]}, {"cider": float(corpus)})
