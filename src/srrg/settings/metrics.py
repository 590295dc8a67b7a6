"""The options of every metric (`score.options.<metric>`, `judge.options.<judge>`; docs/metrics.md,
docs/judges.md), and METRIC_OPTIONS: the one link from a registered metric name to its options
class (None: the metric takes no options). srrg.metrics.base.Metric gets a metric's `config_class`
from it, and srrg.config_tree builds the per-metric schema and the pre-check from it, without
importing any metric module."""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from srrg.settings.extract import ExtractConfig
from srrg.settings.fields import Settings, SettingsError, doc
from srrg.settings.splits import SPLITS

# --- text metrics -------------------------------------------------------------------------------

Tokenization = Literal["r2gen", "ptb", "none"]
TOKENIZATIONS: tuple[str, ...] = typing.get_args(Tokenization)
# s_score_text's choices (CE shares the significance weighting)
SIGNIFICANCE = ("weighted", "uniform")
NEGATIVES = ("ignore", "f1")
LEVELS = ("ordinal", "exact")
VARIANTS = ("v2", "v1")  # readings of s_score_text (docs/metrics.md, "Free-text S-Score")
DOver = Literal["union", "reference"]
RADEVAL_CACHE_DIR = ".cache/srrg/radeval"


@dataclass(frozen=True)
class NLGConfig(Settings):
    """Options of every NLG metric; the default matches the R2Gen-family tables (docs/metrics.md)."""

    tokenization: Tokenization = field(
        default="r2gen",
        metadata=doc(
            "How both texts are tokenized before scoring: r2gen (R2Gen's report cleaning), ptb (the COCO caption "
            "pipeline's PTBTokenizer; needs Java) or none (as given); docs/metrics.md, 'Tokenization'."
        ),
    )


@dataclass(frozen=True)
class RougeConfig(NLGConfig):
    """ROUGE-L also caps the tokens per side (issue 16 case 8: its LCS is quadratic, 16.8 s for two
    6,000-token reports); longer pairs are scored on their first `max_tokens` tokens, status `truncated`."""

    max_tokens: int = field(
        default=1000,
        metadata=doc("Tokens ROUGE-L scores per side; a longer side is cut (status truncated).", minimum=1),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):  # a count slices the tokens
            raise SettingsError("max_tokens", f"must be an integer, got {self.max_tokens!r}")


@dataclass(frozen=True)
class SScoreConfig(Settings):
    """Options of the structured S-Score (docs/metrics.md): the weights of the three attribute
    sub-scores in d (they must sum to 1) and the set D averages over."""

    w_prob: float = field(default=1 / 3, metadata=doc("Weight of s_prob in d.", minimum=0))
    w_level: float = field(default=1 / 3, metadata=doc("Weight of s_level in d.", minimum=0))
    w_loc: float = field(default=1 / 3, metadata=doc("Weight of s_loc in d.", minimum=0))
    d_over: DOver = field(
        default="union",
        metadata=doc(
            "Set D averages over: union (R_pos ∪ H_pos; srrg's reading, the paper does not say) or reference "
            "(R_pos only)."
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        weights = (self.w_prob, self.w_level, self.w_loc)
        if not math.isclose(sum(weights), 1.0, abs_tol=1e-9):
            raise ValueError(f"S-Score weights w_prob, w_level, w_loc must sum to 1, got {weights}")


@dataclass(frozen=True)
class SScoreTextConfig(Settings):
    """Options of the free-text S-Score (docs/metrics.md, "Free-text S-Score"); `s_rrg()` gives the
    settings under which it equals the structured S-Score of the extracted reports."""

    variant: str = field(
        default="v2",
        metadata=doc(
            "v2: significance classes of vocab/significance.yaml (w_urgent, w_actionable, w_incidental), vaguer and "
            "more specific names by vocab/hierarchy.yaml (vague_credit, specific_credit) and findings expected in the "
            "patient's context (expected_weight); v1: the reading before them (fixed urgent/incidental lists, CheXpert "
            "relations only, no context), which reproduces earlier numbers.",
            enum=list(VARIANTS),
        ),
    )
    negatives: str = field(
        default="ignore",
        metadata=doc(
            "ignore: a stated negative neither earns nor costs (P = P_pos); f1: the S-Score's P = (P_pos + P_neg) / 2.",
            enum=list(NEGATIVES),
        ),
    )
    smoothing: float = field(
        default=1.0,
        metadata=doc(
            "alpha of the positive-name F1 (2 tp + a) / (2 tp + fp + fn + a): "
            "more false or missed findings score lower even when none matches; 0: the set F1.",
            minimum=0,
        ),
    )
    related_credit: float = field(
        default=0.5,
        metadata=doc(
            "Share of a match earned by two different findings of one CheXpert observation or of a parent and child "
            "observation (nodule/mass, lung opacity/pneumonia); 0: only equal names match.",
            minimum=0,
            maximum=1,
        ),
    )
    significance: str = field(
        default="weighted",
        metadata=doc(
            "weighted: each finding weighs by its clinical significance in P and D (v2: w_urgent, w_actionable, "
            "w_incidental by vocab/significance.yaml; v1: urgent 2, incidental 0.5, docs/metrics.md); uniform: all "
            "weigh 1.",
            enum=list(SIGNIFICANCE),
        ),
    )
    vague_credit: float = field(
        default=0.5,
        metadata=doc(
            "v2: share of a match earned by a vaguer name of the reference finding (vocab/hierarchy.yaml: opacity "
            "for pneumonia).",
            minimum=0,
            maximum=1,
        ),
    )
    specific_credit: float = field(
        default=1.0,
        metadata=doc(
            "v2: share of a match earned by a more specific name of the reference finding (vocab/hierarchy.yaml: "
            "pneumonia for consolidation).",
            minimum=0,
            maximum=1,
        ),
    )
    w_urgent: float = field(
        default=2.0, metadata=doc("v2, weighted: weight of an urgent finding (vocab/significance.yaml).", minimum=0)
    )
    w_actionable: float = field(
        default=1.0, metadata=doc("v2, weighted: weight of an actionable finding (vocab/significance.yaml).", minimum=0)
    )
    w_incidental: float = field(
        default=0.5, metadata=doc("v2, weighted: weight of an incidental finding (vocab/significance.yaml).", minimum=0)
    )
    expected_weight: float = field(
        default=0.5,
        metadata=doc(
            "v2: factor on the weight of a finding expected in the pair's patient context (vocab/expected.yaml: age, "
            "indication); 1: context changes nothing.",
            minimum=0,
            maximum=1,
        ),
    )
    fold_general: bool = field(
        default=True,
        metadata=doc(
            "A finding whose CheXpert observation is an ancestor of another finding's in the same report "
            "is folded into it ('opacity, likely atelectasis' is atelectasis), before matching."
        ),
    )
    normalize_locations: bool = field(
        default=True,
        metadata=doc(
            "Compare the anatomical words of the rules normalizer's phrases (both = bilateral) instead of the raw "
            "phrases."
        ),
    )
    levels: str = field(
        default="ordinal",
        metadata=doc(
            "ordinal: one step on the severity scale halves s_level, two steps zero it; exact: equal or not.",
            enum=list(LEVELS),
        ),
    )
    omitted_detail: float = field(
        default=0.5,
        metadata=doc(
            "Credit of a level, location or size that only the reference states (S-Score: 0).", minimum=0, maximum=1
        ),
    )
    extra_detail: float = field(
        default=1.0,
        metadata=doc(
            "Credit of a level or location that only the hypothesis states (S-Score: 0).", minimum=0, maximum=1
        ),
    )
    w_size: float = field(
        default=0.25,
        metadata=doc(
            "Weight of the size agreement in d when the reference states a size; 0: sizes are ignored.",
            minimum=0,
            maximum=1,
        ),
    )
    w_prob: float = field(default=1 / 3, metadata=doc("S-Score weight of s_prob in d.", minimum=0))
    w_level: float = field(default=1 / 3, metadata=doc("S-Score weight of s_level in d.", minimum=0))
    w_loc: float = field(default=1 / 3, metadata=doc("S-Score weight of s_loc in d.", minimum=0))
    d_over: str = field(
        default="union",
        metadata=doc("S-Score: D averages over the union or the reference's names.", enum=list(typing.get_args(DOver))),
    )
    extract: ExtractConfig = field(
        default_factory=ExtractConfig, metadata=doc("The extractor's settings for free text.")
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        SScoreConfig(self.w_prob, self.w_level, self.w_loc, self.d_over)  # raises when the weights do not sum to 1

    @classmethod
    def s_rrg(cls, **options: Any) -> SScoreTextConfig:
        """The settings under which s_score_text is the S-Score (S-RRG-Bench) of the extracted reports."""
        parity = {"variant": "v1", "negatives": "f1", "smoothing": 0.0, "related_credit": 0.0,
                  "significance": "uniform", "fold_general": False, "normalize_locations": False, "levels": "exact",
                  "omitted_detail": 0.0, "extra_detail": 0.0, "w_size": 0.0}  # fmt: skip
        return cls(**{**parity, **options})


@dataclass(frozen=True)
class CEConfig(Settings):
    """Options of clinical efficacy (ce): P/R/F1 over the CheXpert observations that srrg's
    extractor labels on both reports (docs/metrics.md)."""

    definite_only: bool = field(
        default=False,
        metadata=doc("Only probability 3 (definite) findings are positive; false = probability 3 or 2 (probable)."),
    )
    smoothing: float = field(
        default=1.0,
        metadata=doc(
            "alpha of the per-report F1 ce_f1; 0: plain F1; > 0: more false or missed labels score lower even when "
            "none agrees.",
            minimum=0,
        ),
    )
    significance: str = field(
        default="weighted",
        metadata=doc(
            "weighted: an observation weighs as its most significant finding; uniform: all weigh 1.",
            enum=list(SIGNIFICANCE),
        ),
    )
    extract: ExtractConfig = field(
        default_factory=ExtractConfig,
        metadata=doc(
            "The extractor's settings for free-text reports (the extract section's keys; docs/extraction.md)."
        ),
    )


@dataclass(frozen=True)
class RadEvalConfig(Settings):
    """Options of the RadEval model-backed metrics (docs/metrics.md). Where values are cached does
    not change them: cache_dir is not in the signature."""

    cache_dir: str | None = field(
        default=RADEVAL_CACHE_DIR,
        metadata=doc("Folder of the per-report cache (radeval.sqlite) of the model-backed metrics; null = no cache."),
    )


@dataclass(frozen=True)
class RexrankConfig(Settings):
    """Options of the ReXrank preset (docs/metrics.md, "ReXrank preset")."""

    cache_dir: str | None = field(
        default=RADEVAL_CACHE_DIR,
        metadata=doc("Folder of the per-report cache of the parts that keep one (RaTEScore, GREEN); null = off."),
    )


# --- LLM judges (srrg.metrics.judges) -----------------------------------------------------------

DEFAULT_MODALITY = "chest X-ray"
# a short name such as "CT" or "brain MRI": something besides spaces, no braces, no line break
MODALITY_PATTERN = r"^[^{}\n]*\S[^{}\n]*$(?!\n)"
VertVariant = Literal["direct", "formula", "rubric", "two_lines"]
VERT_VARIANTS: tuple[str, ...] = typing.get_args(VertVariant)
GemaObjective = Literal["paper", "shared_findings"]
GEMA_DIMENSIONS = ("disease", "location", "severity", "uncertainty")
GEMA_ASPECTS = ("fluency", "grammar", "terminology")


def _max_tokens(default: int) -> Any:
    return field(
        default=default,
        metadata=doc(
            "Answer length limit of every request; an answer that reaches it is truncated, never scored.", minimum=1
        ),
    )


def _number_words() -> Any:
    return field(
        default=True,
        metadata=doc("Also read error counts written as words ('two.'); false = the official parser (they read 0)."),
    )


def _max_words(default: int) -> Any:
    return field(
        default=default, metadata=doc("Each report is cut to this many words before prompting; 0 keeps all.", minimum=0)
    )


@dataclass(frozen=True)
class FewShotConfig(Settings):
    """Expert-scored training pairs shown before each judged pair (srrg.metrics.judges.few_shot;
    docs/judges.md, "Few-shot judging")."""

    k: int = field(default=0, metadata=doc("Shots per prompt; 0 = zero-shot.", minimum=0))
    seed: int = field(default=0, metadata=doc("Seed that picks which k of the training rows are shown.", minimum=0))
    source: str | None = field(
        default=None,
        metadata=doc(
            "examples.parquet of srrg judge-train-prepare (or its folder), or a curated set: a file of chosen "
            "examples (reference, candidate, score in [0, 1]) whose first k rows are shown in order; needed when k > 0."
        ),
    )
    split: str = field(
        default="train",
        metadata=doc("The split of the examples the shots are drawn from.", enum=list(SPLITS)),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.k and not self.source:
            raise ValueError("few_shot.k > 0 needs few_shot.source (examples.parquet of srrg judge-train-prepare)")


@dataclass(frozen=True)
class JudgeConfig(Settings):
    """Options every judge metric takes (docs/judges.md); each judge sets a max_tokens default that
    fits its real answers."""

    llm: Mapping[str, Any] = field(
        default_factory=dict,
        metadata=doc("The `llm` config slice (srrg.llm.LLMConfig) naming backend, model, cache and concurrency."),
    )
    max_words: int = _max_words(300)
    max_tokens: int = _max_tokens(1024)
    max_failure_fraction: float = field(
        default=0.1,
        metadata=doc(
            "A larger share of failed answers (none, cut off, unparseable) makes the run fail (JudgeFailed); so does "
            "a run where no request got any answer.",
            minimum=0,
            maximum=1,
        ),
    )
    modality: str = field(
        default=DEFAULT_MODALITY,
        metadata=doc(
            "The imaging modality the prompts name, a short name such as 'CT' or 'brain MRI' "
            "('chest X-ray' keeps the packaged text).",
            pattern=MODALITY_PATTERN,
        ),
    )


@dataclass(frozen=True)
class GreenConfig(JudgeConfig):
    """Options of GREEN (docs/judges.md). max_tokens 1024: official GREEN answers run to about
    340-440 tokens (the official code allows 2048 tokens, prompt included)."""

    max_tokens: int = _max_tokens(1024)
    number_words: bool = _number_words()


@dataclass(frozen=True)
class VertConfig(JudgeConfig):
    """Options of VERT (docs/judges.md). max_tokens 1024: the answer repeats GREEN's error
    enumeration (about 340-440 tokens for a capable judge) and adds a score."""

    variant: VertVariant = field(
        default="direct",
        metadata=doc(
            "The prompt: direct, formula or rubric (all three share the answer format), or two_lines (VERT's "
            "fine-tuning prompt: the role and score lines, no answer format; for a judge tuned on it)."
        ),
    )
    max_tokens: int = _max_tokens(1024)
    number_words: bool = _number_words()
    few_shot: FewShotConfig = field(
        default_factory=FewShotConfig,
        metadata=doc("k expert-scored training pairs shown before each pair (docs/judges.md, 'Few-shot judging')."),
    )


@dataclass(frozen=True)
class GemaConfig(JudgeConfig):
    """Options of GEMA (docs/judges.md): the score is alpha S_obj + (1 - alpha) S_sub."""

    max_tokens: int = _max_tokens(1024)  # the entity agent lists every finding of a long report as JSON
    dimension_weights: Mapping[str, float] = field(
        default_factory=lambda: {d: 0.25 for d in GEMA_DIMENSIONS},
        metadata=doc(
            "Weight of each dimension in S_obj (non-negative, summing to 1).",
            propertyNames={"enum": list(GEMA_DIMENSIONS)},
        ),
    )
    aspect_weights: Mapping[str, float] = field(
        default_factory=lambda: {a: 1 / 3 for a in GEMA_ASPECTS},
        metadata=doc(
            "Weight of each aspect in S_sub (non-negative, summing to 1).", propertyNames={"enum": list(GEMA_ASPECTS)}
        ),
    )
    aspect_weights_by: Literal["fixed", "agent"] = field(
        default="fixed",
        metadata=doc(
            "fixed: aspect_weights for every pair; agent: the subjective agent also writes a weight per aspect for "
            "the pair (Eq. 5's agent-set weights), non-negative, normalized to sum 1; a pair without valid weights "
            "is unparseable (NaN)."
        ),
    )
    alpha: float = field(default=0.8, metadata=doc("Weight of S_obj in the score.", minimum=0, maximum=1))
    penalty_per_error: float = field(
        default=0.05,
        metadata=doc(
            "S_sub penalty per error: an aspect scores max(0, 1 - penalty_per_error x its errors).", minimum=0
        ),
    )
    objective: GemaObjective = field(
        default="paper",
        metadata=doc(
            "paper: per-dimension precision/recall (the paper's); shared_findings: attributes compared on shared "
            "findings only (srrg's earlier reading)."
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        for label, weights, names in (
            ("dimension", self.dimension_weights, GEMA_DIMENSIONS),
            ("aspect", self.aspect_weights, GEMA_ASPECTS),
        ):
            if (
                set(weights) != set(names)
                or min(weights.values()) < 0
                or not math.isclose(sum(weights.values()), 1.0, abs_tol=1e-9)
            ):
                raise ValueError(
                    f"gema {label}_weights need non-negative weights for {list(names)} summing to 1, "
                    f"got {dict(weights)}"
                )


@dataclass(frozen=True)
class CrimsonConfig(JudgeConfig):
    """Options of CRIMSON (docs/judges.md). max_words 0: the official code sends each report whole.
    max_tokens 4096: an answer lists every abnormal finding of both reports with its level, and each
    attribute error with an explanation."""

    max_words: int = _max_words(0)
    max_tokens: int = _max_tokens(4096)
    modality: str = field(
        default=DEFAULT_MODALITY,
        metadata=doc(
            "crimson's published prompt judges chest X-ray findings: no other modality applies.",
            enum=[DEFAULT_MODALITY],
        ),
    )
    guidelines: bool | None = field(
        default=None,
        metadata=doc(
            "Send the prompt's significance examples, attribute-severity and context guidelines; null = on, except "
            "for the official fine-tuned model (trained without them), as the official code decides."
        ),
    )
    context: bool = field(default=True, metadata=doc("Put the pair's patient context into the prompt when it has one."))


@dataclass(frozen=True)
class ProxyRatingConfig(JudgeConfig):
    """Options of the proxy rating judge (docs/judges.md). max_tokens 512: the answer is a small
    JSON object with a one- or two-sentence explanation."""

    max_tokens: int = _max_tokens(512)
    scale_max: int = field(default=10, metadata=doc("Each dimension is rated 0..scale_max.", minimum=1))


# registered metric name (srrg.metrics.base.METRIC_MODULES) -> its options class; None: no options
METRIC_OPTIONS: dict[str, type | None] = {
    "s_score": SScoreConfig,
    "ce": CEConfig,
    "bleu": NLGConfig,
    "meteor": NLGConfig,
    "rouge_l": RougeConfig,
    "cider": NLGConfig,
    "green": GreenConfig,
    "vert": VertConfig,
    "gema": GemaConfig,
    "proxy_rating": ProxyRatingConfig,
    "crimson": CrimsonConfig,
    "s_score_text": SScoreTextConfig,
    "chexbert": RadEvalConfig,
    "radgraph": RadEvalConfig,
    "bertscore": RadEvalConfig,
    "radcliq": None,
    "ratescore": RadEvalConfig,
    "srrbert": None,
    "green_model": RadEvalConfig,
    "radeval_bleu": None,
    "radeval_rouge": None,
    "rexrank": RexrankConfig,
    "rexrank_bleu": None,
    "rexrank_radcliq": None,
    "temporal_claims": None,
}
