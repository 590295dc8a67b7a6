"""S-Score of free-text report pairs: the project's extractor turns both sides into structured
reports, which are then scored on the S-Score's scale (docs/metrics.md, "Free-text S-Score").

Free text carries what a structured reference of S-RRG-Bench does not: a reference that never
names a location, a paraphrase of the same size, a measurement. The free-text variant therefore
has documented options for how a rule metric reads such pairs the way radiologists do (stated
negatives earn and cost nothing by themselves, more false findings score lower, a related finding
earns part credit, a detail the reference does not state is not an error, sizes are compared);
with `SScoreTextConfig.s_rrg()` it is exactly the structured S-Score of the extracted reports.

A side that already is a structured report (looks_structured, docs/report.md: e.g. a Structured-First
prediction, fenced or not) is parsed instead of extracted. Texts are extracted once however often they repeat.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from srrg.extract import extract_detailed
from srrg.metrics.base import Metric, MetricResult, hypothesis_rates, nanmean, register
from srrg.metrics.chexpert import OBSERVATION_PARENT, chexpert_map
from srrg.metrics.sscore import KEYS as SSCORE_KEYS
from srrg.metrics.sscore import LOCATION_CACHE_MAX_CHARS, location_score, prob_score, set_f1
from srrg.normalize import rules_normalize
from srrg.normalize.rules import tokens
from srrg.normalize.vocabulary import FILLER
from srrg.report import Finding, StructuredReport, looks_structured, parse_report
from srrg.settings.extract import ExtractConfig
from srrg.settings.metrics import SScoreTextConfig
from srrg.vocab.clinical import expected_findings, is_vaguer, significance_classes

NAME = "s_score_text"
FREE_TEXT = "free_text"
SUFFIX = "_text"
KEYS = (*(k + SUFFIX for k in SSCORE_KEYS), "s_size_text", "s_score_text_status")

# Ordinal severity scale of the vocabulary's levels (docs/metrics.md, "Free-text S-Score"): size
# words and intensity words share one scale; a range sits between its ends.
LEVEL_RANK: dict[str, float] = {
    "minimal": 1, "trace": 1, "tiny": 1, "subtle": 1, "borderline": 1,
    "slight": 2, "mild": 2, "minor": 2, "small": 2,
    "moderate": 3,
    "large": 4, "severe": 4, "marked": 4, "extensive": 4,
    "massive": 5,
    "minimal to mild": 1.5, "trace to small": 1.5,
    "mild to moderate": 2.5, "small to moderate": 2.5,
    "moderate to large": 3.5, "moderate to severe": 3.5,
}  # fmt: skip
# Clinical significance of findings in `variant: v1` and in ce (docs/metrics.md, "Free-text S-Score"):
# urgent findings that a radiologist communicates at once, and incidental or chronic ones that rarely
# change management. `variant: v2` reads the cited table vocab/significance.yaml instead.
URGENT = frozenset({
    "pneumothorax", "hydropneumothorax", "hemothorax", "pneumomediastinum", "pneumoperitoneum", "aortic aneurysm",
})  # fmt: skip
INCIDENTAL = frozenset({
    "granuloma", "calcification", "scoliosis", "kyphosis", "tortuous aorta", "degenerative changes", "atherosclerosis",
    "osteopenia", "pectus excavatum", "pectus carinatum", "scarring", "pleural plaque", "eventration",
})  # fmt: skip
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def smoothed_f1(tp: float, fp: float, fn: float, alpha: float) -> float:
    """(2 tp + alpha) / (2 tp + fp + fn + alpha); nothing on either side -> 1 (docs/metrics.md)."""
    denominator = 2 * tp + fp + fn + alpha
    return (2 * tp + alpha) / denominator if denominator else 1.0


def detail_score(ref: Any, hyp: Any, compare: Callable[[Any, Any], float], cfg: SScoreTextConfig) -> float:
    """Agreement of one level, location or size: both unstated -> 1, only the hypothesis states it ->
    extra_detail, only the reference -> omitted_detail, else `compare`."""
    if ref is None and hyp is None:
        return 1.0
    if ref is None:
        return cfg.extra_detail
    if hyp is None:
        return cfg.omitted_detail
    return compare(ref, hyp)


def level_agreement(ref: str, hyp: str, levels: str) -> float:
    """1 for equal levels; on the ordinal scale max(0, 1 - |rank difference| / 2) when both are on it."""
    if ref == hyp:
        return 1.0
    if levels == "ordinal" and ref in LEVEL_RANK and hyp in LEVEL_RANK:
        return max(0.0, 1.0 - abs(LEVEL_RANK[ref] - LEVEL_RANK[hyp]) / 2)
    return 0.0


def location_words(phrase: str) -> str:
    """The anatomical words of the rules normalizer's phrase, its connecting words dropped ("both" and
    "bilateral" -> "both"; "on the left side" -> "left"), so that shared filler is no agreement.
    Long phrases are not cached, as in the S-Score's location BLEU (docs/inputs.md)."""
    return _location_words(phrase) if len(phrase) <= LOCATION_CACHE_MAX_CHARS else _location_words.__wrapped__(phrase)


@lru_cache(maxsize=65536)
def _location_words(phrase: str) -> str:
    words = [w for w in tokens(rules_normalize(phrase) or phrase) if w not in FILLER]
    return " ".join(words) or phrase


def location_agreement(ref: str, hyp: str, normalize: bool = True) -> float:
    """The S-Score's location BLEU, on the normalized anatomical words when `normalize`."""
    return location_score(location_words(ref), location_words(hyp)) if normalize else location_score(ref, hyp)


def size_mm(size: str) -> float | None:
    """The largest dimension of a measurement in mm ("3 x 4 cm" -> 40.0); None without a number or unit."""
    numbers = [float(n) for n in _NUMBER.findall(size)]
    words = size.lower()
    scale = 10.0 if ("cm" in words or "centi" in words) else 1.0 if ("mm" in words or "milli" in words) else None
    return max(numbers) * scale if numbers and scale else None


def size_agreement(ref: str, hyp: str) -> float:
    """1 - |a - b| / max(a, b) on the largest dimensions in mm; 0 when a side cannot be read."""
    a, b = size_mm(ref), size_mm(hyp)
    if a is None or b is None:
        return 1.0 if ref == hyp else 0.0
    return 1.0 - abs(a - b) / max(a, b) if max(a, b) else 1.0


def finding_agreement(rf: Finding, hf: Finding, cfg: SScoreTextConfig) -> tuple[float, float, float, float, float]:
    """(d, s_prob, s_level, s_loc, s_size) of two findings taken as one (s_size NaN when not scored)."""
    sp = prob_score(rf.probability, hf.probability)
    sl = detail_score(rf.level, hf.level, lambda a, b: level_agreement(a, b, cfg.levels), cfg)
    sc = detail_score(rf.location, hf.location, lambda a, b: location_agreement(a, b, cfg.normalize_locations), cfg)
    d = cfg.w_prob * sp + cfg.w_level * sl + cfg.w_loc * sc
    ss = math.nan
    if cfg.w_size > 0 and rf.size is not None:
        ss = detail_score(rf.size, hf.size, size_agreement, cfg)
        d = (1 - cfg.w_size) * d + cfg.w_size * ss
    return d, sp, sl, sc, ss


@lru_cache(maxsize=1)
def _observation_tree() -> tuple[Mapping[str, tuple[str, ...]], Mapping[str, str]]:
    """finding -> CheXpert observations, and observation -> parent observation (docs/metrics.md)."""
    return chexpert_map().findings, OBSERVATION_PARENT


def _lineage(observation: str, parents: Mapping[str, str]) -> set[str]:
    out = {observation}
    while observation in parents:
        observation = parents[observation]
        out.add(observation)
    return out


def related(a: str, b: str) -> bool:
    """Two different findings are related when they count as one CheXpert observation or one's
    observation is an ancestor of the other's (lung opacity and pneumonia; nodule and mass)."""
    findings, _ = _observation_tree()
    return a != b and a in findings and b in findings and _observations_related(findings[a], findings[b])


@lru_cache(maxsize=1024)
def _observations_related(obs_a: tuple[str, ...], obs_b: tuple[str, ...]) -> bool:
    _, parents = _observation_tree()
    return any(x in _lineage(y, parents) or y in _lineage(x, parents) for x in obs_a for y in obs_b)


def pair_credit(ref: str, hyp: str, cfg: SScoreTextConfig) -> float:
    """Share of a match that a hypothesis finding earns for a different reference finding: v1:
    related_credit when related; v2: specific_credit for a more specific name of it, vague_credit
    for a vaguer one (vocab/hierarchy.yaml or the observation hierarchy), else related_credit when
    related (one CheXpert observation: nodule and mass)."""
    if cfg.variant != "v1":
        if vaguer(ref, hyp, cfg.variant):
            return cfg.specific_credit
        if vaguer(hyp, ref, cfg.variant):
            return cfg.vague_credit
    return cfg.related_credit if related(ref, hyp) else 0.0


def related_pairs(
    ref_only: Sequence[str], hyp_only: Sequence[str], cfg: SScoreTextConfig
) -> list[tuple[str, str, float]]:
    """Greedy one-to-one pairs (reference, hypothesis, credit) among the unmatched findings: each
    reference finding in report order takes the remaining hypothesis finding of the highest
    positive credit (the first of equals)."""
    pairs, used = [], set()
    for r in ref_only:
        credits = [(pair_credit(r, h, cfg), -k, h) for k, h in enumerate(hyp_only) if h not in used]
        best = max(credits, default=None)
        if best is not None and best[0] > 0:
            used.add(best[2])
            pairs.append((r, best[2], best[0]))
    return pairs


def observation_vaguer(general: str, specific: str) -> bool:
    """Whether all of `general`'s CheXpert observations are strict ancestors of one of `specific`'s."""
    tree, parents = _observation_tree()
    own = tree.get(general, ())
    return (
        bool(own)
        and specific in tree
        and any(all(o in _lineage(x, parents) and o not in tree[specific] for o in own) for x in tree[specific])
    )


def vaguer(general: str, specific: str, variant: str) -> bool:
    """v1: observation_vaguer; v2: that or an ancestor in vocab/hierarchy.yaml (opacity for pneumonia)."""
    return observation_vaguer(general, specific) or (variant != "v1" and is_vaguer(general, specific))


def fold_general(findings: Mapping[str, Finding]) -> dict[str, Finding]:
    """The findings without those a more specific finding of the same report explains: one whose
    observations are all ancestors of another finding's at the same place (locations sharing an
    anatomical word, or one unstated): "left lower lobe opacity, likely pneumonia" is a pneumonia in
    the left lower lobe (a specific finding without a location takes the general one's), but a right
    lower lobe opacity next to a left upper lobe nodule stays a finding of its own. Only the
    observation hierarchy folds (observation_vaguer), in v1 and v2 alike: vocab/hierarchy.yaml names
    answers, and a report may state a sign and its cause as two findings (cardiomegaly and a
    pericardial effusion; a granuloma and another nodule)."""

    def same_place(a: Finding, b: Finding) -> bool:
        return a.location is None or b.location is None or location_agreement(a.location, b.location) > 0

    def explainer(f: Finding) -> Finding | None:
        return next(
            (
                g
                for g in findings.values()
                if g.name != f.name and same_place(f, g) and observation_vaguer(f.name, g.name)
            ),
            None,
        )

    folded = {f.name: explainer(f) for f in findings.values()}
    kept = {n: f for n, f in findings.items() if folded[n] is None}
    for general, specific in folded.items():
        while specific is not None and folded[specific.name] is not None:  # opacity -> consolidation -> pneumonia
            specific = folded[specific.name]
        if specific is not None and kept[specific.name].location is None:
            kept[specific.name] = dataclasses.replace(kept[specific.name], location=findings[general].location)
    return kept


def weight(name: str, significance: str) -> float:
    """A finding's v1 weight (and ce's): URGENT 2, INCIDENTAL 0.5, any other 1; 1 for all when "uniform"."""
    if significance == "uniform":
        return 1.0
    return 2.0 if name in URGENT else 0.5 if name in INCIDENTAL else 1.0


def finding_weight(name: str, cfg: SScoreTextConfig, expected: frozenset[str] = frozenset()) -> float:
    """A finding's weight in P and D: v1 `weight`; v2 its class weight (vocab/significance.yaml;
    actionable for a name outside it), times expected_weight when the patient's context expects it."""
    if cfg.variant == "v1":
        return weight(name, cfg.significance)
    base = 1.0
    if cfg.significance != "uniform":
        cls = significance_classes().get(name, "actionable")
        base = {"urgent": cfg.w_urgent, "actionable": cfg.w_actionable, "incidental": cfg.w_incidental}[cls]
    return base * cfg.expected_weight if name in expected else base


def score_pair_text(
    ref: StructuredReport,
    hyp: StructuredReport,
    cfg: SScoreTextConfig = SScoreTextConfig(),
    expected: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """All free-text S-Score values of one pair of structured reports (keys without the suffix):
    the S-Score's P and D over finding weights (a related pair weighs as its reference finding);
    `expected`: the findings the pair's patient context expects (v2, expected_findings)."""
    r_pos = {f.name: f for f in ref.positive}
    h_pos = {f.name: f for f in hyp.positive}
    if cfg.fold_general:
        r_pos, h_pos = fold_general(r_pos), fold_general(h_pos)
    matched = [n for n in r_pos if n in h_pos]
    ref_only = [n for n in r_pos if n not in h_pos]
    hyp_only = [n for n in h_pos if n not in r_pos]
    pairs = related_pairs(ref_only, hyp_only, cfg)
    paired = {n for a, b, _ in pairs for n in (a, b)}

    def w(name: str) -> float:
        return finding_weight(name, cfg, expected)

    credit = sum(w(n) for n in matched) + sum(c * w(a) for a, _, c in pairs)
    unmatched = sum(w(n) for n in (*ref_only, *hyp_only) if n not in paired)
    # a related pair is its credit of a match and the rest a false and a missed finding
    p_pos = smoothed_f1(credit, unmatched + 2 * sum((1 - c) * w(a) for a, _, c in pairs), 0, cfg.smoothing)
    p_neg = set_f1(set(ref.negative), set(hyp.negative))
    p = p_pos if cfg.negatives == "ignore" else (p_pos + p_neg) / 2

    exact = [finding_agreement(r_pos[n], h_pos[n], cfg) for n in matched]
    near = [finding_agreement(r_pos[a], h_pos[b], cfg) for a, b, _ in pairs]
    total = sum(w(n) * x[0] for n, x in zip(matched, exact)) + sum(c * w(a) * x[0] for (a, _, c), x in zip(pairs, near))
    if cfg.d_over == "union":
        denominator = sum(w(n) for n in matched) + sum(w(a) for a, _, _ in pairs) + unmatched
    else:
        denominator = sum(w(n) for n in r_pos)
    d = total / denominator if denominator else 1.0
    subs = [nanmean([x[i] for x in exact]) for i in range(1, 5)]  # means over the equal names, as in the S-Score
    return {"s_score": (p + d) / 2, "p_score": p, "d_score": d, "p_pos": p_pos, "p_neg": p_neg,
            "s_prob": subs[0], "s_level": subs[1], "s_loc": subs[2], "s_size": subs[3]}  # fmt: skip


def structure(texts: Sequence[str | None], extract_cfg: ExtractConfig) -> dict[str, tuple[StructuredReport, str]]:
    """Distinct text -> (structured report, status): parse_report's status for JSON, the
    extractor's (ok | empty_text | truncated | long_sentence | error) for free text."""
    distinct = list(dict.fromkeys(t if isinstance(t, str) else "" for t in texts))
    out = {t: parse_report(t) for t in distinct if looks_structured(t)}
    free = [t for t in distinct if t not in out]
    if free:
        results = extract_detailed(free, extract_cfg)
        out.update({t: (r.report, r.status) for t, r in zip(free, results)})
    return out


def hypothesis_kinds(hyps: Sequence[str | None], hyp_statuses: Sequence[str]) -> list[str]:
    """parse_report's status for a structured hypothesis, FREE_TEXT for one that was extracted: the
    parse rates of a metric that also reads free text (docs/judges.md)."""
    return [s if looks_structured(h) else FREE_TEXT for h, s in zip(hyps, hyp_statuses)]


def score_texts(
    refs: Sequence[str | None],
    hyps: Sequence[str | None],
    cfg: SScoreTextConfig = SScoreTextConfig(),
    contexts: Sequence[Mapping[str, str]] | None = None,
) -> MetricResult:
    """Per-pair free-text S-Score values (keys suffixed `_text`) and a status naming the side that
    had no usable text; such a side counts as the empty report, as in the S-Score of structured outputs.
    `contexts`: each pair's patient context (srrg.metrics.context), read by v2 only."""
    table = structure([*refs, *hyps], cfg.extract)
    ref_reports = [table[r if isinstance(r, str) else ""] for r in refs]
    hyp_reports = [table[h if isinstance(h, str) else ""] for h in hyps]
    use_context = contexts is not None and cfg.variant != "v1" and cfg.expected_weight != 1
    expected = [expected_findings(c) for c in contexts] if use_context else [frozenset()] * len(refs)
    rows = [score_pair_text(r, h, cfg, e) for (r, _), (h, _), e in zip(ref_reports, hyp_reports, expected, strict=True)]
    names = (*SSCORE_KEYS, "s_size")
    per: dict[str, list[Any]] = {k + SUFFIX: [row[k] for row in rows] for k in names}
    per["s_score_text_status"] = [
        ",".join(
            f"{side}:{status}"
            for side, (_, status) in (("ref", r), ("hyp", h))
            if status not in {"ok", "valid", "repaired"}
        )
        or "ok"
        for r, h in zip(ref_reports, hyp_reports)
    ]
    summary = {k + SUFFIX: nanmean(per[k + SUFFIX]) for k in names}
    summary["s_score_text_failures"] = float(sum(s != "ok" for s in per["s_score_text_status"]))
    summary.update(hypothesis_rates(NAME, hypothesis_kinds(hyps, [s for _, s in hyp_reports]), extra=(FREE_TEXT,)))
    return MetricResult(per, summary)


@register
class SScoreText(Metric):
    """Options: SScoreTextConfig (the free-text options, the S-Score options, `extract`)."""

    name = NAME
    keys = KEYS

    def compute(self, refs: Sequence[str], hyps: Sequence[str]) -> MetricResult:
        return score_texts(refs, hyps, self.cfg)

    def compute_with_context(
        self, refs: Sequence[str], hyps: Sequence[str], contexts: Sequence[Mapping[str, str]]
    ) -> MetricResult:
        """v2 weighs the findings a pair's patient context expects by expected_weight (vocab/expected.yaml)."""
        return score_texts(refs, hyps, self.cfg, contexts)
