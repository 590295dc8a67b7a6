"""The `metaeval` section (docs/metaeval.md, docs/judges.md): the ratings datasets it reads, the
metrics scored on them, the correlation settings (`metaeval.correlate`, also every correlation
command's `--config`), VERT's grid, and the options of each ratings reader
(srrg.metaeval.readers; `srrg metaeval-prepare --options`) in ADAPTER_OPTIONS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from srrg.settings.compare import Correction
from srrg.settings.fields import Settings, SettingsError, build, doc, hook
from srrg.settings.metrics import JudgeConfig

# the human judgements a ratings table gives (srrg.metaeval.readers.common.TARGETS; a test checks)
HUMAN_TARGETS = ("rating", "errors_total", "errors_significant", "errors_insignificant")
# the judges whose `<judge>_sig_<a..f>` columns count errors per category (srrg.metrics.judges.green, .vert)
CountJudge = Literal["green", "vert"]
HumanTarget = Literal["auto", "rating", "errors_total", "errors_significant", "errors_insignificant"]
Adapter = Literal["rexval", "radpref", "rate_eval", "radevalx", "radeval_expert", "radjudge"]


@dataclass(frozen=True)
class MetaevalConfig(Settings):
    """How metric scores are correlated with human (or LLM-proxy) judgements: the bootstrap, the
    tests between metrics and the ensembles (`metaeval.correlate`, also every correlation command's
    `--config`; docs/judges.md, "Meta-evaluation")."""

    metrics: Sequence[str] = field(
        default=(),
        metadata=doc("Score columns to correlate; empty = the headline columns present, else every numeric column."),
    )
    human_target: HumanTarget = field(
        default="auto",
        metadata=doc(
            "Human judgement correlated with; auto = rating when the dataset has ratings, else errors_significant."
        ),
    )
    human_column: str | None = field(
        default=None,
        metadata=doc(
            "Take the human score from this score column instead (an LLM proxy, S-RRG Table 3); null = the ratings."
        ),
    )
    lower_is_better: Sequence[str] = field(
        default=(),
        metadata=doc(
            "Score columns where lower is better (negated before correlating); each must be a correlated column "
            "(one of `metrics` when set, else a column of the scores table).",
            uniqueItems=True,
        ),
    )
    n_boot: int = field(
        default=1000,
        metadata=doc(
            "Bootstrap resamples behind each confidence interval; 0 = no CIs (ci_status not_resampled).", minimum=0
        ),
    )
    seed: int = field(default=0, metadata=doc("Seed of the bootstrap: the same seed gives the same CIs.", minimum=0))
    ci_level: float = field(
        default=0.95,
        metadata=doc("Confidence level of the bootstrap intervals.", exclusiveMinimum=0, exclusiveMaximum=1),
    )
    resample: Literal["cluster", "pair"] = field(
        default="cluster",
        metadata=doc(
            "cluster: resample whole cases (the cluster ids of the pairs table; pairs when there is none); "
            "pair: resample pairs."
        ),
    )
    min_cases: int = field(
        default=10,
        metadata=doc(
            "Fewest cases a clustered bootstrap gives CIs and paired tests from; fewer give NaN with ci_status "
            "too_few_cases, and the caption says why (docs/metaeval.md).",
            minimum=2,
        ),
    )
    paired_reference: str | None = field(
        default=None,
        metadata=doc(
            "Metric every other metric is tested against (one of `metrics` when set, else a column of the scores "
            "table); null = the metric with the highest Kendall tau."
        ),
    )
    count_judges: tuple[CountJudge, ...] = field(
        default=("green", "vert"),
        metadata=doc("Judges whose `<judge>_sig_<a..f>` columns are compared with the human error counts."),
    )
    ensembles: Mapping[str, Sequence[str]] = field(
        default_factory=dict, metadata=doc("Ensemble name -> its member score columns (docs/judges.md, 'Ensembles').")
    )
    test_fraction: float = field(
        default=0.5,
        metadata=doc(
            "Share of pairs held out to evaluate the ensembles (between 0 and 1, exclusive).",
            exclusiveMinimum=0,
            exclusiveMaximum=1,
        ),
    )
    ensemble_seed: int = field(default=0, metadata=doc("Seed of the ensembles' held-out split.", minimum=0))
    caveat: str = field(
        default="",
        metadata=doc("A sentence printed above every table (e.g. that the judge is a 135M model); empty = none."),
    )
    drop_unmeasured: bool = field(
        default=False,
        metadata=doc(
            "Leave out (and name in the caption) metric columns without a finite value on a rated pair instead of "
            "stopping; false = such a column is an error."
        ),
    )
    n_permutations: int = field(
        default=1000,
        metadata=doc(
            "Rounds of the paired permutation test between metrics (all 2^u case swaps when that is fewer; "
            "docs/metaeval.md, 'Tests between metrics').",
            minimum=0,
        ),
    )
    correction: Correction = field(
        default="holm",
        metadata=doc(
            "Multiple-comparison adjustment of the tests between metrics, over all metric pairs of one "
            "statistic (holm: family-wise error rate; bh: false discovery rate), as in `srrg compare`."
        ),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.metrics:  # the correlated columns are known: every name that refers to one must be among them
            check_metric_names(self, self.metrics, "metaeval.correlate.metrics")

    def metric_names(self) -> dict[str, list[str]]:
        """Setting -> the score column names it refers to (lower_is_better, paired_reference and
        each ensemble's members): what check_metric_names checks against the correlated columns."""
        names = {"lower_is_better": list(self.lower_is_better)}
        names["paired_reference"] = [self.paired_reference] if self.paired_reference else []
        for name, members in self.ensembles.items():
            names[f"ensembles.{name}"] = list(members)
        return names


def check_metric_names(cfg: MetaevalConfig, columns: Sequence[str], where: str) -> None:
    """Every metric name in the correlation settings is one of `columns` (a typo in
    lower_is_better would keep a metric's wrong sign without a word). SettingsError naming the key."""
    for key, names in cfg.metric_names().items():
        unknown = [n for n in names if n not in columns]
        if unknown:
            raise SettingsError(
                key, f"{', '.join(map(repr, unknown))} not among the correlated columns ({where}: {', '.join(columns)})"
            )


# ---- the options of each ratings reader (srrg.metaeval.readers) ---------------------------------


@dataclass(frozen=True)
class RexvalOptions(Settings):
    """The options of the ReXVal reader (srrg.metaeval.readers.rexval)."""

    candidates: tuple[str, ...] | None = field(
        default=None, metadata=doc("Candidate columns (default: every column but study_id and gt_report).")
    )


@dataclass(frozen=True)
class RadprefOptions(Settings):
    """The options of the RadPref reader (srrg.metaeval.readers.radpref)."""

    raters: tuple[str, ...] | None = field(
        default=None,
        metadata=doc(
            "Annotation file stems to read (default: every .json in radiologist_annotations/); each once.",
            uniqueItems=True,
        ),
    )


@dataclass(frozen=True)
class RateEvalOptions(Settings):
    """The options of the RaTE-Eval reader (srrg.metaeval.readers.rate_eval)."""

    reference_col: str = field(default="gt_report", metadata=doc("Column of the reference report."))
    candidate_col: str = field(default="similar_report", metadata=doc("Column of the rated candidate."))
    score_col: str = field(default="Score", metadata=doc("Column of the radiologists' score (0-4.5)."))


@dataclass(frozen=True)
class RadevalxOptions(Settings):
    """The options of the RadEvalX reader (srrg.metaeval.readers.radevalx)."""

    reports: str | None = field(
        default=None,
        metadata=doc("The reports CSV (study_id, ground_truth, candidate_report); the path is the annotation CSV."),
    )


@dataclass(frozen=True)
class RadevalExpertOptions(Settings):
    """The RadEval expert reader (srrg.metaeval.readers.radeval_expert) takes no options."""


@dataclass(frozen=True)
class RankingOptions(Settings):
    """The options of a RadJudge ranking dataset (adapter radjudge, docs/metaeval.md)."""

    keys: dict[str, str] = field(
        default_factory=dict, metadata=doc("Metric -> the statistic of it that the ranking cases check.")
    )


# adapter -> the options its reader (or RadJudge's ranking check) takes
ADAPTER_OPTIONS: dict[str, type[Settings]] = {
    "rexval": RexvalOptions,
    "radpref": RadprefOptions,
    "rate_eval": RateEvalOptions,
    "radevalx": RadevalxOptions,
    "radeval_expert": RadevalExpertOptions,
    "radjudge": RankingOptions,
}


@dataclass(frozen=True)
class RatingsSource(Settings):
    """A ratings dataset in its published layout, or RadJudge ranking cases (docs/metaeval.md)."""

    adapter: Adapter = field(
        metadata=doc("Reader of the dataset's published layout (srrg.metaeval.readers); radjudge: ranking cases.")
    )
    path: str = field(metadata=doc("The dataset's file or folder, in the layout its adapter reads."))
    options: dict[str, Any] = field(
        default_factory=dict,
        metadata=doc("Options of the adapter's reader (radjudge: keys, metric -> the statistic checked)."),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        build(ADAPTER_OPTIONS[self.adapter], self.options, "options")  # what its adapter takes (ADAPTER_OPTIONS)


@dataclass(frozen=True)
class VertGrid(Settings):
    """VERT's grid (docs/judges.md, "VERT's grid"): every judge model x prompt (GREEN and each VERT
    variant) on every rating dataset, one table per dataset. Off while models is empty."""

    models: dict[str, dict[str, Any]] = field(
        default_factory=dict,
        metadata=doc(
            "Judge model name (letters, digits, '_', '-', '.') -> llm settings merged over judge.llm.",
            propertyNames={"pattern": "^[A-Za-z0-9_.-]+$"},
        ),
    )
    variants: tuple[Literal["direct", "formula", "rubric"], ...] = field(
        default=("direct", "formula", "rubric"),
        metadata=doc("VERT prompt variants (columns next to GREEN's); at least one.", minItems=1, uniqueItems=True),
    )
    thinking: tuple[Literal["none", "low", "medium", "high"], ...] = field(
        default=(),
        metadata=doc(
            "Thinking levels (reasoning_effort) as a grid axis: each model that takes reasoning_effort (a reasoning "
            "model, llm.reasoning) is one row per level, named <model>.<level>; empty = one row per model.",
            uniqueItems=True,
        ),
    )
    ensembles: bool = field(
        default=False,
        metadata=doc(
            "Cross-model ensemble rows in the grid: per column the models' scores averaged (z-scores) and fitted by "
            "least squares, evaluated on the rating set's published test split (RaTE-Eval), else on the "
            "metaeval.correlate test_fraction of held-out pairs."
        ),
    )
    ensemble_train: int = field(
        default=500,
        metadata=doc(
            "Training instances the least-squares ensembles are fitted on (VERT: 500), the first in a seeded hash "
            "order (ensemble_seed) of the complete training pairs; a set with fewer uses all, and the table caption "
            "says so.",
            minimum=1,
        ),
    )
    gema: bool = field(
        default=False,
        metadata=doc(
            "Also score GEMA with every grid model on the rating sets that count errors: gema_grid.md, GEMA-Score "
            "Tables 1-2 with a row per judge backbone (docs/metaeval.md, 'GEMA's backbone grid')."
        ),
    )


# the false findings error injection inserts (finding named -> the sentence inserted), in our own words
FALSE_FINDINGS = {
    "pneumothorax": "There is a moderate right-sided pneumothorax.",
    "effusion": "A large left pleural effusion is present.",
    "consolidation": "Dense consolidation is seen in the right lower lobe.",
    "cardiomegaly": "The heart is markedly enlarged.",
    "edema": "There is moderate interstitial pulmonary edema.",
    "nodule": "A 2 cm nodule is seen in the left upper lobe.",
    "fracture": "There is an acute fracture of the left seventh rib.",
    "atelectasis": "Atelectasis is present at the left lung base.",
}


@dataclass(frozen=True)
class ErrorInjection(Settings):
    """Error injection (docs/metaeval.md, "Error injection"): from each reference of a rating set,
    candidates with k false findings inserted or k findings dropped, scored with every metric of
    `metaeval.metrics`; per metric, category and k the score drop and the detection F1. Off by default."""

    enabled: bool = field(
        default=False,
        metadata=doc("Run error injection on every rating set of metaeval.datasets (it adds judge requests)."),
    )
    k: tuple[int, ...] = field(
        default=(1, 2, 3),
        metadata=doc("Numbers of findings inserted or dropped, one table row each.", minItems=1, uniqueItems=True,
                     items={"minimum": 1}),
    )  # fmt: skip
    categories: tuple[Literal["inserted", "dropped"], ...] = field(
        default=("inserted", "dropped"),
        metadata=doc("Error categories: inserted (false findings), dropped (findings left out).", minItems=1,
                     uniqueItems=True),
    )  # fmt: skip
    seed: int = field(default=0, metadata=doc("Seed of the findings chosen and where they go.", minimum=0))
    tolerance: float = field(
        default=0.0,
        metadata=doc("A candidate is flagged when it scores more than this below the clean reference.", minimum=0),
    )
    false_findings: dict[str, str] = field(
        default_factory=lambda: dict(FALSE_FINDINGS),
        metadata=doc("Finding named -> the sentence inserted; used only in a report that does not name the finding."),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if "inserted" in self.categories and not self.false_findings:
            raise SettingsError("false_findings", "must name at least one finding when categories include inserted")


@dataclass(frozen=True)
class DirectPreference(JudgeConfig):
    """GREEN Table 7's direct preference (docs/metaeval.md, "Direct preference"): a judge is shown
    the reference and two candidates of one case and says which is better; its accuracy against the
    experts' preference stands beside each metric's on the same comparisons. Off by default."""

    enabled: bool = field(
        default=False,
        metadata=doc(
            "Ask the judge on every rating set of metaeval.datasets: one request per within-case pair of rated "
            "candidates the experts prefer one of."
        ),
    )
    human_target: HumanTarget = field(
        default="auto",
        metadata=doc(
            "Human judgement that decides the experts' preference; auto = rating when the set has ratings, else "
            "errors_significant (fewer is better)."
        ),
    )


@dataclass(frozen=True)
class MetaevalSection(Settings):
    """Correlation of metrics with human or LLM-proxy ratings (docs/judges.md)."""

    datasets: dict[str, RatingsSource] = field(
        default_factory=dict, metadata=hook("ratings_datasets", "name -> ratings dataset")
    )
    metrics: tuple[str, ...] = field(
        default=("bleu", "rouge_l", "s_score_text", "green", "vert", "gema"),
        metadata=hook("metric_names", "Metrics scored on rating datasets."),
    )
    correlate: MetaevalConfig = field(
        default_factory=MetaevalConfig, metadata=doc("How scores are correlated with the ratings (docs/judges.md).")
    )
    proxy: bool = field(default=True, metadata=doc("Correlate the judge subset's metrics with its proxy_rating."))
    proxy_metrics: tuple[str, ...] = field(
        default=("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "green", "s_score"),
        metadata=doc(
            "Columns of S-RRG Table 3 (metaeval_proxy), in order; those the judge stage does not score are left out."
        ),
    )
    grid: VertGrid = field(default_factory=VertGrid, metadata=doc("VERT's grid (docs/judges.md)."))
    injection: ErrorInjection = field(
        default_factory=ErrorInjection, metadata=doc("Error injection (docs/metaeval.md, 'Error injection').")
    )
    preference: DirectPreference = field(
        default_factory=DirectPreference,
        metadata=doc("GREEN Table 7's direct preference judge (docs/metaeval.md, 'Direct preference')."),
    )
    caveat: str = field(
        default=(
            "Ratings here come from the local SmolLM2-135M judge: a 135M-parameter model is not a meaningful "
            "judge of radiology reports; these numbers only show that the pipeline runs."
        ),
        metadata=doc("Sentence printed with the LLM-proxy tables (metaeval_proxy, S-RRG Table 3); empty = none."),
    )
