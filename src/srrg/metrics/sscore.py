"""S-Score (S-RRG-Bench) as defined in docs/metrics.md.

S = (P + D) / 2 where P averages the F1 of positive and of negative finding names, and D averages
per-finding attribute agreement (probability, severity level, location) over the union of positive
names. Pure Python with caches on the hot spots (location BLEU repeats the same phrase pairs), so a
corpus of thousands of pairs scores in well under a second.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from operator import lshift, or_
from typing import Any

from srrg.errors import UserError
from srrg.gc_policy import relaxed_gc
from srrg.metrics.base import Metric, MetricResult, hypothesis_rates, nanmean, register
from srrg.report import UNPARSEABLE, Finding, ReportIndex, StructuredReport, index_report, parse_indexed
from srrg.settings.metrics import SScoreConfig
from srrg.srrg_text import structured_texts

KEYS = ("s_score", "p_score", "d_score", "p_pos", "p_neg", "s_prob", "s_level", "s_loc")
_TOKEN = re.compile(r"\w+")
_EPSILON = 0.1  # Chen & Cherry smoothing method 1, as in NLTK's SmoothingFunction().method1
LOCATION_CACHE_MAX_CHARS = 512  # longer location pairs are scored uncached: they cannot grow memory (docs/inputs.md)
PHRASE_MAX_CHARS = 256  # location phrases whose tokens and windows are kept (at most PHRASE_CACHE_SIZE)
PHRASE_CACHE_SIZE = 1 << 14


def set_f1(ref: set[str] | frozenset[str], hyp: set[str] | frozenset[str]) -> float:
    """F1 of two name sets; both empty -> 1.0, exactly one empty -> 0.0."""
    return matched_f1(match_names(ref, hyp))


def match_names(ref: Iterable[str], hyp: Iterable[str]) -> list[tuple[str, bool, bool]]:
    """S-Score's matching of two name sets: each name of R ∪ H once (reference order, then the
    hypothesis-only names) with whether the reference and the hypothesis have it; a name is matched
    when both do. P_pos / P_neg are the F1 of these matches and D averages over the positive ones;
    `srrg cases` shows the same matches per study (docs/cases.md)."""
    r, h = dict.fromkeys(ref), dict.fromkeys(hyp)
    return [(name, name in r, name in h) for name in {**r, **h}]


def matched_f1(matches: Sequence[tuple[str, bool, bool]]) -> float:
    """F1 of the two sides of match_names' result; both empty -> 1.0, exactly one empty -> 0.0."""
    n_ref = sum(in_ref for _, in_ref, _ in matches)
    n_hyp = sum(in_hyp for _, _, in_hyp in matches)
    return count_f1(n_ref, n_hyp, sum(in_ref and in_hyp for _, in_ref, in_hyp in matches))


def count_f1(n_ref: int, n_hyp: int, n_both: int) -> float:
    """F1 from the sizes of the reference and hypothesis name sets and of their intersection."""
    if not n_ref and not n_hyp:
        return 1.0
    if not n_ref or not n_hyp:
        return 0.0
    return 2 * n_both / (n_ref + n_hyp)


def prob_score(ref: int | None, hyp: int | None) -> float:
    """1 - (q' - q)^2 with q = (p - 1) / 2; a missing probability on either side scores 0."""
    if ref is None or hyp is None:
        return 0.0
    return 1.0 - ((hyp - ref) / 2) ** 2


def _windows(tokens: list[str], order: int) -> tuple[dict[tuple[str, ...], int], ...]:
    """The count of each n-token window of tokens, for n = 1..order."""
    counts: list[dict[tuple[str, ...], int]] = []
    for n in range(1, order + 1):
        grams: dict[tuple[str, ...], int] = {}
        for gram in zip(*[tokens[i:] for i in range(n)]):
            grams[gram] = grams.get(gram, 0) + 1
        counts.append(grams)
    return tuple(counts)


def _phrase_windows(phrase: str) -> tuple[list[str], tuple[dict[tuple[str, ...], int], ...]]:
    """The lower-cased word tokens of a location phrase and their window counts for n = 1..4;
    phrases of at most PHRASE_MAX_CHARS are kept (_cached_phrase_windows): a corpus names few places."""
    if len(phrase) <= PHRASE_MAX_CHARS:
        return _cached_phrase_windows(phrase)
    tokens = _TOKEN.findall(phrase.lower())
    return tokens, _windows(tokens, 4)


@lru_cache(maxsize=PHRASE_CACHE_SIZE)
def _cached_phrase_windows(phrase: str) -> tuple[list[str], tuple[dict[tuple[str, ...], int], ...]]:
    tokens = _TOKEN.findall(phrase.lower())
    return tokens, _windows(tokens, 4)


@lru_cache(maxsize=65536)
def location_bleu(ref: str, hyp: str) -> float:
    """Sentence BLEU of lower-cased word tokens, uniform weights over n = 1..min(4, |ref|, |hyp|),
    smoothing method 1; same value as NLTK's sentence_bleu with those settings."""
    r, r_counts = _phrase_windows(ref)
    h, h_counts = _phrase_windows(hyp)
    if r == h:
        return 1.0
    order = min(4, len(r), len(h))
    if order == 0:
        return 0.0
    log_sum = 0.0
    for n in range(1, order + 1):
        counts, available = h_counts[n - 1], r_counts[n - 1]  # clipped: each window of h up to its count in r
        matched = sum(map(min, counts.values(), map(available.get, counts, repeat(0))))
        if n == 1 and matched == 0:
            return 0.0  # NLTK returns 0 when not a single unigram matches
        total = max(1, len(h) - n + 1)
        log_sum += math.log((matched if matched else _EPSILON) / total) / order
    brevity = 1.0 if len(h) > len(r) else math.exp(1 - len(r) / len(h))
    return brevity * math.exp(log_sum)


def clear_caches() -> None:
    """Empty the scoring caches (benchmarks time cold runs)."""
    location_bleu.cache_clear()
    _cached_phrase_windows.cache_clear()


def location_score(ref: str | None, hyp: str | None) -> float:
    """Both null -> 1, one null -> 0, else location BLEU."""
    if ref is None and hyp is None:
        return 1.0
    if ref is None or hyp is None:
        return 0.0
    if len(ref) + len(hyp) > LOCATION_CACHE_MAX_CHARS:
        return location_bleu.__wrapped__(ref, hyp)
    return location_bleu(ref, hyp)


def attribute_scores(ref: Finding, hyp: Finding) -> tuple[float, float, float]:
    """(s_prob, s_level, s_loc) of one positive name matched in both reports."""
    level = float(ref.level == hyp.level)
    return prob_score(ref.probability, hyp.probability), level, location_score(ref.location, hyp.location)


def score_pair(ref: StructuredReport, hyp: StructuredReport, cfg: SScoreConfig = SScoreConfig()) -> dict[str, float]:
    """All S-Score values of one reference/hypothesis pair of canonical reports."""
    return dict(zip(KEYS, _score_rows([index_report(ref)], [index_report(hyp)], cfg)[0]))


AttributeCache = dict[tuple[Any, ...], tuple[float, float, float, float]]  # see _score_rows


def _score_rows(refs: Iterable[ReportIndex], hyps: Iterable[ReportIndex], cfg: SScoreConfig) -> list[tuple[float, ...]]:
    """The KEYS values of each pair of indexed reports: match_names' matching, computed from set sizes
    (the matched positives in reference order, as D sums them). One loop for all pairs with its
    lookups bound to locals (S-Score's hot loop). A matched name's attribute scores are kept per call
    by what they depend on (both probabilities, whether the levels agree, both locations): different
    names carry the same values (on the benchmark's pairs 2,824 distinct of 6,199 finding pairs)."""
    union = cfg.d_over == "union"
    nan = math.nan
    cache: AttributeCache = {}
    cached = cache.get
    rows: list[tuple[float, ...]] = []
    for (r_pos, r_neg), (h_pos, h_neg) in zip(refs, hyps):
        n_ref, n_hyp = len(r_pos), len(h_pos)
        common = r_pos.keys() & h_pos.keys() if n_ref and n_hyp else ()
        n = len(common)
        p_pos = count_f1(n_ref, n_hyp, n)
        p_neg = count_f1(len(r_neg), len(h_neg), len(r_neg & h_neg))
        p = (p_pos + p_neg) / 2
        denominator = n_ref + n_hyp - n if union else n_ref
        if not n:  # D sums nothing; the sub-scores average nothing (NaN)
            d = 0.0 if denominator else 1.0
            rows.append(((p + d) / 2, p, d, p_pos, p_neg, nan, nan, nan))
            continue
        scored = []
        for name in r_pos if n > 1 else common:  # one name: no order to keep
            if name in common:
                ref, hyp = r_pos[name], h_pos[name]
                key = (ref.probability, hyp.probability, ref.level == hyp.level, ref.location, hyp.location)
                values = cached(key)
                if values is None:
                    values = cache[key] = _attributes(ref, hyp, cfg)
                scored.append(values)
        if n == 1:  # the sums of one value: 0 + x is x, as no value here is -0.0
            sp, sl, sc, weighted = scored[0]
            d = weighted / denominator
            rows.append(((p + d) / 2, p, d, p_pos, p_neg, sp, sl, sc))
            continue
        probs, levels, locs, ds = zip(*scored)
        d = sum(ds) / denominator  # not 0: the matched names are in both sets
        rows.append(((p + d) / 2, p, d, p_pos, p_neg, sum(probs) / n, sum(levels) / n, sum(locs) / n))
    return rows


def _attributes(ref: Finding, hyp: Finding, cfg: SScoreConfig) -> tuple[float, float, float, float]:
    """attribute_scores of a matched name and their weighted sum (its d)."""
    sp, sl, sc = attribute_scores(ref, hyp)
    return sp, sl, sc, cfg.w_prob * sp + cfg.w_level * sl + cfg.w_loc * sc


def score_reports(
    refs: Sequence[StructuredReport], hyps: Sequence[StructuredReport], cfg: SScoreConfig = SScoreConfig()
) -> MetricResult:
    """Per-report S-Score values and corpus means (sub-scores average the non-NaN reports). A
    report object that recurs is indexed once per call (see score_indexed)."""
    indexes: dict[int, ReportIndex] = {}
    for report in (*refs, *hyps):
        if id(report) not in indexes:
            indexes[id(report)] = index_report(report)
    return score_indexed([indexes[id(r)] for r in refs], [indexes[id(h)] for h in hyps], cfg)


def score_indexed(
    refs: Sequence[ReportIndex], hyps: Sequence[ReportIndex], cfg: SScoreConfig = SScoreConfig()
) -> MetricResult:
    """score_reports of indexed reports. An index object that recurs (parse_indexed shares one per
    distinct text) makes a recurring pair scored once per call (and a matched name's attribute
    values once per call, see _score_rows)."""
    if len(refs) != len(hyps):
        raise ValueError(f"refs and hyps differ in length: {len(refs)} vs {len(hyps)}")
    # one int per pair of index objects, both ids side by side (unique while they live; an int,
    # unlike a tuple, is no work for the garbage collector), computed in C
    keys = list(map(or_, map(lshift, map(id, refs), repeat(64)), map(id, hyps)))
    first = dict(zip(keys, range(len(keys))))  # each distinct pair of index objects once
    indices = first.values()
    scored = dict(zip(first, _score_rows(map(refs.__getitem__, indices), map(hyps.__getitem__, indices), cfg)))
    rows = list(map(scored.__getitem__, keys))
    columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in KEYS]
    per_report: dict[str, list[Any]] = dict(zip(KEYS, columns))
    return MetricResult(per_report, {k: nanmean(v) for k, v in per_report.items()})


def structured_references(refs: Sequence[str | None]) -> list[ReportIndex]:
    """The references, indexed; free text or broken JSON is a user error (see _refuse_unstructured)."""
    indexes, statuses = parse_indexed(refs)
    _refuse_unstructured(refs, statuses)
    return indexes


def _refuse_unstructured(refs: Sequence[str | None], statuses: Sequence[str]) -> None:
    """Raise when a reference is not a structured report (docs/metrics.md: two empty reports would
    agree and score 1), naming s_score_text, which extracts free text first."""
    if UNPARSEABLE in statuses:
        bad = [i for i, status in enumerate(statuses) if status == UNPARSEABLE]
        first = refs[bad[0]]
        shown = repr(first[:60]) if isinstance(first, str) else repr(first)
        raise UserError(
            f"s_score: {len(bad)} of {len(refs)} references are not structured reports (JSON with positive/negative), "
            f"first at row {bad[0]}: {shown}; score free-text references with s_score_text"
        )


@register
class SScore(Metric):
    """S-Score of structured-report JSON strings. References must be structured reports; an
    unparseable hypothesis counts as an empty report, and the summary carries the hypothesis parse
    rates (`s_score_hyp_valid`, `_repaired`, `_unparseable`) next to the score."""

    name = "s_score"
    keys = (*KEYS, "s_score_hyp_status")

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        # SRRG organ-header text (the srrg target) is read into structured reports first (docs/inputs.md)
        texts, srrg_statuses = structured_texts([*refs, *hyps])
        with relaxed_gc():  # parsing and scoring allocate many small acyclic objects
            indexes, statuses = parse_indexed(texts)  # a text in both lists is parsed once
            n = len(refs)
            _refuse_unstructured(refs, statuses[:n])
            with relaxed_gc():  # the indexes, alive to the end, frozen too: scoring never rescans them
                result = score_indexed(indexes[:n], indexes[n:], self.cfg)
        statuses = [read or parsed for read, parsed in zip(srrg_statuses[n:], statuses[n:], strict=True)]
        result.per_report["s_score_hyp_status"] = statuses
        result.summary.update(hypothesis_rates(self.name, statuses))
        return result
