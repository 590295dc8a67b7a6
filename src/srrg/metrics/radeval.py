"""The field's standard clinical metrics through RadEval (optional extra `radeval`; docs/metrics.md,
"RadEval metrics"): CheXbert F1, RadGraph F1, BERTScore, RadCliQ-v1, RaTEScore, SRR-BERT and GREEN
with its official model, plus RadEval's own BLEU and ROUGE (no weights: they test the adapter for real).

RadEval is loaded at one boundary, `radeval_metric(name)`, which imports RadEval's metric class by
its registry name and builds it; everything after that (keys, per-report values, corpus values,
statuses, directions, signatures) is srrg's mapping of RadEval's outputs. One RadEval pass per
metric gives both views: `_compute_raw` of RadEval's MetricBase returns the aggregate and the
per-sample values together (RadEval 2.2.1, pinned in constraints.txt).

CheXbert is the exception: srrg asks RadEval's labeler for each report's 14 labels (RadEval's
"rrg" mapping: positive or uncertain -> 1, negative or blank -> 0) and computes micro and macro F1
over 5 and 14 labels itself from per-report counts, so the corpus values follow from per-report
columns and `srrg compare` can resample them.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from srrg.errors import UserError
from srrg.metrics.base import Metric, MetricResult, register
from srrg.metrics.ce import prf
from srrg.metrics.radeval_cache import ScoreCache, cache_key
from srrg.metrics.signature import compose
from srrg.report import text_for_nlg

RADEVAL_VERSION = "2.2.1"  # the version the mapping below was written and tested against
# on Python 3.11 RadEval's medspacy pin (spacy<3.8) clashes with srrg's spaCy 3.8: RadEval goes in
# without its dependencies after the extra has brought the ones the wrapped scorers import
INSTALL = (
    "pip install 'srrg[radeval]'"
    if sys.version_info >= (3, 12)
    else "pip install 'srrg[radeval]' && pip install --no-deps RadEval==2.2.1"
)
HIGHER, LOWER = "higher", "lower"
OK, NO_SCORE, EMPTY_HYP = "ok", "no_score", "empty_hyp"
# CheXbert's 14 targets in RadEval's order (13 conditions, then No Finding) and the 5 of most tables
CHEXBERT_14 = (
    "Enlarged Cardiomediastinum",
    "Cardiomegaly",
    "Lung Opacity",
    "Lung Lesion",
    "Edema",
    "Consolidation",
    "Pneumonia",
    "Atelectasis",
    "Pneumothorax",
    "Pleural Effusion",
    "Pleural Other",
    "Fracture",
    "Support Devices",
    "No Finding",
)
CHEXBERT_5 = ("Cardiomegaly", "Edema", "Consolidation", "Atelectasis", "Pleural Effusion")


def installed() -> str | None:
    """The installed RadEval's version, None without it."""
    from importlib import metadata

    try:
        return metadata.version("RadEval")
    except metadata.PackageNotFoundError:
        return None


def radeval_version() -> str:
    """The installed RadEval's version; a UserError naming the install command when it is absent."""
    version = installed()
    if version is None:
        raise UserError(f"the RadEval metrics need the optional extra: {INSTALL}")
    return version


def version_part() -> tuple[str, str]:
    """The signature's `radeval:` part: the version the numbers come from (the installed one, else
    the one this mapping was written for)."""
    return ("radeval", installed() or RADEVAL_VERSION)


class _OldPackageName(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """RadEval 2.2.1's vendored RadGraph (behind `radgraph` and `radcliq`) still imports the package
    under its former name `RadEval`, which no installed package provides (docs/metrics.md, "RadEval
    metrics"): `RadEval.<x>` resolves to the module object `radeval.<x>`, so nothing is loaded twice."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == "RadEval" or fullname.startswith("RadEval."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module("radeval" + spec.name.removeprefix("RadEval"))

    def exec_module(self, module: Any) -> None:
        """The module is `radeval`'s, already executed."""


def _alias_old_package_name() -> None:
    if not any(isinstance(f, _OldPackageName) for f in sys.meta_path):
        sys.meta_path.insert(0, _OldPackageName())


def weights_missing(exc: BaseException) -> OSError | None:
    """The OSError (the hub unreachable and the file in no cache) behind a failed scorer build, also
    when RadEval re-raised it as another type (its vendored RadGraph raises a bare Exception 'Cannot
    download the file ...' from the hub's error); None for any other failure."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def radeval_metric(name: str, metric: str) -> Any:
    """RadEval's metric `name`, built with its defaults, for srrg's `metric` (the loading boundary; tests
    replace it). A missing RadEval, a missing dependency of that one metric, or (offline) a weight
    never fetched is one line naming what to do. RadEval's import tries to download NLTK's punkt_tab
    and prints the failure when offline: that attempt's output is kept out of srrg's log."""
    import contextlib
    import io

    radeval_version()
    from srrg.models_fetch import prepare_offline

    unreachable = prepare_offline(metric)
    _alias_old_package_name()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            from radeval.metrics import _registry

        return _registry.get_metric_class(name)()
    except ImportError as exc:
        raise UserError(
            f"RadEval metric {name!r} needs the module {exc.name!r}, which is not installed "
            f"({INSTALL}; docs/metrics.md, 'RadEval metrics', says what each metric needs)"
        ) from None
    except Exception as exc:  # noqa: BLE001 - only a weight that could not be read is turned into one line
        cause = weights_missing(exc)
        if cause is None:
            raise
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        why = f"{unreachable} and they are in no cache: " if unreachable else ""
        raise UserError(
            f"{metric}: RadEval could not load its weights ({why}{first}); run `srrg models fetch "
            "--config <config.yaml>` where the hub is reachable (docs/metrics.md)"
        ) from None


@dataclass(frozen=True)
class Column:
    """One RadEval output: its RadEval key, srrg's key, direction, and whether the corpus value is
    the mean of the per-report values (else RadEval's own corpus aggregate)."""

    radeval_key: str
    key: str
    direction: str = HIGHER
    corpus_is_mean: bool = True


def weights(metric: str) -> list[tuple[str, str]]:
    """`weights:<repo>@<rev8>` parts: the hub repositories the metric loads and the revision it
    gets (srrg.models_fetch.revision_used; `main` when they were not fetched)."""
    from srrg.models_fetch import catalog, revision_used

    return [("weights", f"{repo}@{revision_used(repo)}") for repo in catalog()["metrics"].get(metric, [])]


def texts(reports: Sequence[str]) -> list[str]:
    """What RadEval reads: structured reports as their sentence rendering, free text as written."""
    return [text_for_nlg(r) for r in reports]


def statuses(values: Sequence[Any]) -> list[str]:
    """ok, or no_score where RadEval gave no finite number (e.g. a GREEN answer it could not parse)."""
    return [OK if isinstance(v, (int, float)) and math.isfinite(v) else NO_SCORE for v in values]


def as_float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.nan


def mean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def inverse(value: float) -> float:
    """1 / value (RadCliQ-v1's higher-is-better form); NaN for 0 or NaN."""
    return 1 / value if value and not math.isnan(value) else math.nan


class RadEvalMetric(Metric):
    """A RadEval metric whose `_compute_raw` returns {radeval key: {aggregate, per_sample}}: per
    report, srrg's keys and `<name>_status`; summary, the corpus values and `<name>_failures`.
    A metric whose options are RadEvalConfig caches per report: each pair's value depends on that
    pair alone, and every corpus value is the mean of the per-report values."""

    radeval_name: ClassVar[str]
    columns: ClassVar[tuple[Column, ...]]
    parts: ClassVar[tuple[tuple[str, str], ...]] = ()  # what fixes the number beyond RadEval's version

    @classmethod
    def directions(cls) -> dict[str, str]:
        return {c.key: c.direction for c in cls.columns}

    def signature(self, key: str) -> str:
        return compose(self.name, [version_part(), *self.parts, *weights(self.name)])

    def raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        return radeval_metric(self.radeval_name, self.name)._compute_raw(refs, hyps)

    def scored(self, refs: list[str], hyps: list[str]) -> tuple[dict[str, list[float]], dict[str, float]]:
        """One RadEval pass: per column its per-report values (NaN where RadEval gave no number) and
        RadEval's corpus aggregate."""
        raw = self.raw(refs, hyps)
        per, aggregate = {}, {}
        for col in self.columns:
            values = list(raw[col.radeval_key]["per_sample"])
            if len(values) != len(refs):
                raise ValueError(f"RadEval {self.radeval_name}: {len(values)} values for {len(refs)} pairs")
            per[col.key] = [as_float(v) for v in values]
            aggregate[col.key] = as_float(raw[col.radeval_key]["aggregate"])
        return per, aggregate

    def cached(self, refs: list[str], hyps: list[str], folder: str) -> dict[str, list[float]]:
        """Per-report values, RadEval asked only for the pairs the cache does not hold."""
        signature = self.signature(self.columns[0].key)
        keys = [cache_key(signature, r, h) for r, h in zip(refs, hyps)]
        cache = ScoreCache(folder)
        try:
            found = cache.get_many(keys)
            first: dict[str, int] = {}  # a pair given twice is scored once
            for i, k in enumerate(keys):
                if k not in found:
                    first.setdefault(k, i)
            todo = list(first.values())
            if todo:
                per, _ = self.scored([refs[i] for i in todo], [hyps[i] for i in todo])
                rows = [(keys[i], [per[c.key][j] for c in self.columns]) for j, i in enumerate(todo)]
                cache.put_many(rows)
                found.update(rows)
        finally:
            cache.close()
        return {c.key: [found[k][j] for k in keys] for j, c in enumerate(self.columns)}

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        ref_texts, hyp_texts = texts(refs), texts(hyps)
        folder = getattr(getattr(self, "cfg", None), "cache_dir", None)
        if folder:
            per, aggregate = self.cached(ref_texts, hyp_texts, folder), {}
        else:
            per, aggregate = self.scored(ref_texts, hyp_texts)
        summary = {c.key: mean(per[c.key]) if c.corpus_is_mean else aggregate[c.key] for c in self.columns}
        by_column = zip(*(statuses(per[c.key]) for c in self.columns))
        status = [OK if all(s == OK for s in row) else NO_SCORE for row in by_column]
        out: dict[str, list[Any]] = {**per, f"{self.name}_status": status}
        summary[f"{self.name}_failures"] = float(sum(s != OK for s in status))
        return MetricResult(out, summary)


@register
class RadEvalBleu(RadEvalMetric):
    """RadEval's BLEU-4 (its own tokenizer): per report sentence BLEU, corpus BLEU in the summary."""

    name = "radeval_bleu"
    radeval_name = "bleu"
    columns = (Column("bleu", "radeval_bleu", corpus_is_mean=False),)
    keys = ("radeval_bleu", "radeval_bleu_status")
    parts = (("n", "4"),)


@register
class RadEvalRouge(RadEvalMetric):
    """RadEval's ROUGE-1/2/L F-measures (rouge_score with stemming); corpus = mean over reports."""

    name = "radeval_rouge"
    radeval_name = "rouge"
    columns = tuple(Column(k, f"radeval_{k}") for k in ("rouge1", "rouge2", "rougeL"))
    keys = ("radeval_rouge1", "radeval_rouge2", "radeval_rougeL", "radeval_rouge_status")
    parts = (("stemmer", "true"),)


@register
class BertScore(RadEvalMetric):
    """BERTScore F1 of RadEval's default: distilbert-base-uncased, layer 5, baseline-rescaled, no idf."""

    name = "bertscore"
    radeval_name = "bertscore"
    columns = (Column("bertscore", "bertscore"),)
    keys = ("bertscore", "bertscore_status")
    parts = (("model", "distilbert-base-uncased"), ("layers", "5"), ("rescale", "true"), ("idf", "false"))


@register
class RadCliQ(RadEvalMetric):
    """RadCliQ-v1: a linear model of BERTScore, RadGraph, CheXbert-embedding similarity and BLEU-2
    that predicts a radiologist's error count, so LOWER is better. Per report and `radcliq_v1`: that
    prediction (corpus: its mean, as the RadCliQ paper reports); `radcliq_v1_inverse`: RadEval's
    printed aggregate 1 / mean (higher is better). BERTScore's idf comes from the references of the
    same call, so a report's value depends on the corpus it is scored with."""

    name = "radcliq"
    radeval_name = "radcliq"
    columns = (Column("radcliq_v1", "radcliq_v1", direction=LOWER),)
    keys = ("radcliq_v1", "radcliq_status")
    parts = (("version", "1"), ("direction", "lower"))

    @classmethod
    def directions(cls) -> dict[str, str]:
        return {"radcliq_v1": LOWER, "radcliq_v1_inverse": HIGHER}

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        result = super().compute(refs, hyps)
        result.summary["radcliq_v1_inverse"] = inverse(result.summary["radcliq_v1"])
        return result

    def signature(self, key: str) -> str:
        direction = "higher" if key == "radcliq_v1_inverse" else "lower"
        value = "1/mean" if key == "radcliq_v1_inverse" else "mean"
        return compose(
            self.name,
            [version_part(), ("version", "1"), ("value", value), ("direction", direction), *weights(self.name)],
        )


@register
class RaTEScore(RadEvalMetric):
    """RaTEScore (entity-level, RaTE-NER + BioLORD synonym embeddings); corpus = mean over reports."""

    name = "ratescore"
    radeval_name = "ratescore"
    columns = (Column("ratescore", "ratescore"),)
    keys = ("ratescore", "ratescore_status")
    parts = (("ner", "Angelakeke/RaTE-NER-Deberta"), ("embed", "FremyCompany/BioLORD-2023-C"))


@register
class SRRBert(RadEvalMetric):
    """SRR-BERT (leaves with statuses): per report the sample-weighted P/R/F1, summary the corpus
    weighted average of scikit-learn's classification report (RadEval's aggregate, not a mean)."""

    name = "srrbert"
    radeval_name = "srrbert"
    columns = tuple(
        Column(f"srrbert_weighted_{m}", f"srrbert_weighted_{m}", corpus_is_mean=False)
        for m in ("f1", "precision", "recall")
    )
    keys = ("srrbert_weighted_f1", "srrbert_weighted_precision", "srrbert_weighted_recall", "srrbert_status")
    parts = (("model", "StanfordAIMI/SRR-BERT-Leaves-with-Statuses"), ("avg", "weighted"))


@register
class GreenModel(RadEvalMetric):
    """GREEN with its official model StanfordAIMI/GREEN-radllama2-7b through RadEval (a GPU model;
    srrg's own `green` judge with llm.model set to that name is the other path, docs/judges.md).
    A report RadEval could not score is NaN with status no_score; the summary is the mean of the rest."""

    name = "green_model"
    radeval_name = "green"
    columns = (Column("green", "green_model"),)
    keys = ("green_model", "green_model_status")
    parts = (("model", "StanfordAIMI/GREEN-radllama2-7b"), ("max_length", "2048"))


@register
class RadGraph(RadEvalMetric):
    """RadGraph F1 (RadGraph-XL) at RadEval's three reward levels: simple (entities), partial
    (entities and relation existence) and complete (entities and relations with their labels); per
    report RadEval's per-sample rewards, corpus = their mean (RadEval's aggregate)."""

    name = "radgraph"
    radeval_name = "radgraph"
    columns = tuple(Column(f"radgraph_{level}", f"radgraph_{level}") for level in ("simple", "partial", "complete"))
    keys = ("radgraph_simple", "radgraph_partial", "radgraph_complete", "radgraph_status")

    def raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        per = radeval_metric(self.radeval_name, self.name).compute(refs, hyps, per_sample=True)
        return {k: {"per_sample": v, "aggregate": math.nan} for k, v in per.items()}

    def signature(self, key: str) -> str:
        level = key.removeprefix("radgraph_") if key != "radgraph_status" else "all"
        return compose(self.name, [version_part(), ("model", "radgraph-xl"), ("reward", level), *weights(self.name)])


def label_counts(ref: Sequence[int], hyp: Sequence[int], idx: Sequence[int]) -> tuple[int, int, int]:
    """tp, fp, fn of one pair over the labels at idx."""
    tp = sum(ref[i] == 1 and hyp[i] == 1 for i in idx)
    fp = sum(ref[i] != 1 and hyp[i] == 1 for i in idx)
    fn = sum(ref[i] == 1 and hyp[i] != 1 for i in idx)
    return tp, fp, fn


def chexbert_summary(
    ref_labels: Sequence[Sequence[int]], hyp_labels: Sequence[Sequence[int]], idx: Sequence[int], n: int
) -> dict[str, float]:
    """Micro (counts pooled over reports and labels) and macro (mean of per-label F1, a zero
    denominator giving 0 as scikit-learn's classification_report does) F1 over the labels at idx."""
    per_label = [[label_counts([r[i]], [h[i]], [0]) for r, h in zip(ref_labels, hyp_labels)] for i in idx]
    sums = [tuple(sum(c[j] for c in counts) for j in range(3)) for counts in per_label]
    micro = prf(*(sum(s[j] for s in sums) for j in range(3)))[2]
    macro = sum(prf(*s)[2] for s in sums) / len(sums) if sums else math.nan
    return {f"chexbert_{n}_micro_f1": micro, f"chexbert_{n}_macro_f1": macro}


def report_f1(tp: int, fp: int, fn: int) -> float:
    """Per-report F1 over the labels; no positive label on either side -> 1 (the labels agree)."""
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0


@register
class CheXbert(Metric):
    """CheXbert F1 (RadEval's labeler): summary `chexbert_{5,14}_{micro,macro}_f1`; per report the
    tp/fp/fn counts over 5 and 14 labels, their F1 (`chexbert_f1_5`, `chexbert_f1_14`), both label
    sets and a status."""

    name = "chexbert"
    keys = (
        "chexbert_tp_14",
        "chexbert_fp_14",
        "chexbert_fn_14",
        "chexbert_tp_5",
        "chexbert_fp_5",
        "chexbert_fn_5",
        "chexbert_f1_14",
        "chexbert_f1_5",
        "chexbert_ref_labels",
        "chexbert_hyp_labels",
        "chexbert_status",
    )

    def signature(self, key: str) -> str:
        n = "5" if "_5" in key else "14"
        avg = "micro" if "micro" in key else "macro" if "macro" in key else "report"
        return compose(
            self.name, [version_part(), ("labels", n), ("avg", avg), ("uncertain", "positive"), *weights(self.name)]
        )

    def labels(self, reports: list[str]) -> list[list[int]]:
        """14 labels per report (1 = positive or uncertain, RadEval's 'rrg' mode), from the
        per-report cache where it holds them."""
        if not self.cfg.cache_dir:
            return self.labeled(reports)
        signature = compose("chexbert-labels", [version_part(), ("uncertain", "positive"), *weights(self.name)])
        keys = [cache_key(signature, r) for r in reports]
        cache = ScoreCache(self.cfg.cache_dir)
        try:
            found = cache.get_many(keys)
            todo = [i for i, k in enumerate(keys) if k not in found]
            new = self.labeled([reports[i] for i in todo])
            rows = [(keys[i], [float(v) for v in row]) for i, row in zip(todo, new)]
            cache.put_many(rows)
            found.update(rows)
        finally:
            cache.close()
        return [[int(v) for v in found[k]] for k in keys]

    def labeled(self, reports: list[str]) -> list[list[int]]:
        """RadEval's labeler on the given reports."""
        if not reports:
            return []
        rows = radeval_metric("f1chexbert", self.name)._scorer.get_labels(reports)
        if len(rows) != len(reports) or any(len(r) != len(CHEXBERT_14) for r in rows):
            raise ValueError(
                f"RadEval f1chexbert: expected {len(CHEXBERT_14)} labels for each of {len(reports)} reports"
            )
        return [list(r) for r in rows]

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        ref_texts, hyp_texts = texts(refs), texts(hyps)
        unique = list(dict.fromkeys([*ref_texts, *hyp_texts]))  # one labeling per distinct text
        table = dict(zip(unique, self.labels(unique)))
        ref_labels = [table[t] for t in ref_texts]
        hyp_labels = [table[t] for t in hyp_texts]
        per: dict[str, list[Any]] = {}
        summary: dict[str, float] = {}
        for n, names in ((14, CHEXBERT_14), (5, CHEXBERT_5)):
            idx = [CHEXBERT_14.index(name) for name in names]
            counts = [label_counts(r, h, idx) for r, h in zip(ref_labels, hyp_labels)]
            for j, part in enumerate(("tp", "fp", "fn")):
                per[f"chexbert_{part}_{n}"] = [float(c[j]) for c in counts]
            per[f"chexbert_f1_{n}"] = [report_f1(*c) for c in counts]
            summary.update(chexbert_summary(ref_labels, hyp_labels, idx, n))

        def named(row: Sequence[int]) -> str:
            return "; ".join(name for name, v in zip(CHEXBERT_14, row) if v == 1)

        per["chexbert_ref_labels"] = [named(r) for r in ref_labels]
        per["chexbert_hyp_labels"] = [named(h) for h in hyp_labels]
        per["chexbert_status"] = [OK if t.strip() else EMPTY_HYP for t in hyp_texts]
        summary["chexbert_empty_hyp"] = float(per["chexbert_status"].count(EMPTY_HYP))
        return MetricResult(per, summary)


RADEVAL_METRICS: dict[str, type[Metric]] = {
    c.name: c
    for c in (CheXbert, RadGraph, BertScore, RadCliQ, RaTEScore, SRRBert, GreenModel, RadEvalBleu, RadEvalRouge)
}
