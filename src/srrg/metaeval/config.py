"""The `metaeval.correlate` settings, in a module of their own: the workflow builds them when it is
parsed (srrg.config_tree.check_sections), before any job, without importing the statistics
(srrg.metaeval.run); every caller imports the class from here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from srrg.errors import UserError


@dataclass(frozen=True)
class MetaevalConfig:
    """metrics: score columns to correlate (empty: the HEADLINE columns present, else every
      numeric column);
    human_target: rating | errors_total | errors_significant | errors_insignificant | auto
      (auto: rating when the dataset has ratings, else errors_significant);
    human_column: take the human score from this score column instead (LLM proxy, S-RRG Table 3);
    lower_is_better: score columns where lower is better (negated before correlating);
    n_boot, seed, ci_level: bootstrap settings; resample: cluster (whole cases, the cluster ids
      of the pairs table; pairs when there is none) or pair; min_cases: fewest cases a clustered
      bootstrap gives CIs and paired tests from (fewer: NaN with ci_status too_few_cases, and the
      caption says why; docs/metaeval.md); paired_reference: metric every other
      metric is tested against (None: the metric with the highest Kendall tau);
    count_judges: judges whose `<judge>_sig_<a..f>` columns are compared with human counts;
    ensembles: name -> feature columns; test_fraction/ensemble_seed: held-out split;
    caveat: a sentence printed above every table (e.g. that the judge is a 135M model);
    drop_unmeasured: leave out (and name in the caption) metric columns without a finite value on a
      rated pair instead of stopping (the demo's 135M judge fails every answer); off: such a column
      is an error."""

    metrics: Sequence[str] = ()
    human_target: str = "auto"
    human_column: str | None = None
    lower_is_better: Sequence[str] = ()
    n_boot: int = 1000
    seed: int = 0
    ci_level: float = 0.95
    resample: Literal["cluster", "pair"] = "cluster"
    min_cases: int = 10
    paired_reference: str | None = None
    count_judges: Sequence[str] = ("green", "vert")
    ensembles: Mapping[str, Sequence[str]] = field(default_factory=dict)
    test_fraction: float = 0.5
    ensemble_seed: int = 0
    caveat: str = ""
    drop_unmeasured: bool = False
    n_permutations: int = field(
        default=1000,
        metadata={
            "doc": "Rounds of the paired permutation test between metrics (all 2^u case swaps when that is fewer; "
            "docs/metaeval.md, 'Tests between metrics').",
            "schema": {"minimum": 0},
        },
    )
    correction: Literal["holm", "bh", "none"] = field(
        default="holm",
        metadata={
            "doc": "Multiple-comparison adjustment of the tests between metrics, over all metric pairs of one "
            "statistic (holm: family-wise error rate; bh: false discovery rate), as in `srrg compare`."
        },
    )

    def __post_init__(self) -> None:
        if self.min_cases < 2:
            raise UserError(
                f"metaeval.correlate.min_cases must be >= 2 (a bootstrap over one case), got {self.min_cases}"
            )
