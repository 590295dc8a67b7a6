"""The dev check behind the free-text S-Score's defaults: RadJudge passes with each option set back.

Scores the RadJudge ranking cases (CRIMSON, ../shared/data/radjudge) with `srrg metaeval-rank`'s
functions (srrg.metaeval.radjudge; RadJudge's rule) and prints the s_score_text pass count with its
defaults, with each free-text option at its S-Score value, and with all of them (the S-Score of
the extracted reports; docs/metrics.md, "Free-text S-Score"), then the same for the options of
ce's per-report `ce_f1`, then the per-category passes of s_score_text's `variant: v1` (the reading
before v2) beside its defaults. The per-category table of all metrics is `srrg metaeval-rank` itself:

    .venv/bin/srrg metaeval-rank --cases ../shared/data/radjudge --metrics bleu,rouge_l,s_score_text,ce \\
        --keys ce=ce_f1 --out radjudge/
    .venv/bin/python benchmarks/radjudge_metrics.py [--cases PATH]
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from srrg.metaeval import radjudge
from srrg.settings.metrics import SScoreTextConfig

DEFAULT_CASES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "radjudge" / "ranking_tests.json"
KEYS = {"s_score_text": "s_score_text", "ce": "ce_f1"}  # ce: the per-report F1 (docs/metrics.md)
# the s_score_text options whose S-Score value differs from the default
PARITY = {
    name: value for name, value in vars(SScoreTextConfig.s_rrg()).items() if getattr(SScoreTextConfig(), name) != value
}


def checked(cases: Sequence[radjudge.RankingCase], metric: str, options: Mapping[str, Any] | None = None) -> Any:
    """RadJudge's per-case check of `metric` with these options (srrg.metaeval.radjudge.check_cases)."""
    keys = {metric: KEYS[metric]}
    scores = radjudge.candidate_scores(cases, [metric], keys, {metric: dict(options or {})})
    return radjudge.check_cases(cases, scores, keys)


def pass_count(cases: Sequence[radjudge.RankingCase], metric: str, options: Mapping[str, Any] | None = None) -> int:
    """Cases of which every relation holds for `metric` with these options."""
    return int(checked(cases, metric, options)["passed"].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    args = parser.parse_args()
    cases = radjudge.read_cases(args.cases)
    variants = {"defaults": {}, **{f"{k}={v}": {k: v} for k, v in PARITY.items()}}
    variants["all S-Score values (s_rrg)"] = PARITY
    for label, options in variants.items():
        print(f"s_score_text {label:<32} {pass_count(cases, 's_score_text', options):>2} / {len(cases)}")
    ce_variants = {
        "defaults": {}, "smoothing=0.0": {"smoothing": 0.0}, "significance=uniform": {"significance": "uniform"},
        "both (plain per-report F1)": {"smoothing": 0.0, "significance": "uniform"},
    }  # fmt: skip
    for label, options in ce_variants.items():
        print(f"ce (ce_f1)   {label:<32} {pass_count(cases, 'ce', options):>2} / {len(cases)}")
    before = radjudge.category_table(checked(cases, "s_score_text", {"variant": "v1"}))
    after = radjudge.category_table(checked(cases, "s_score_text"))
    print(f"\n{'category (s_score_text)':<34} {'v1':>5} {'default':>8}")
    for row_v1, row in zip(before.iter_rows(named=True), after.iter_rows(named=True)):
        n = row["n_cases"]
        print(f"{row['category']:<34} {row_v1['s_score_text']:>3}/{n:<2} {row['s_score_text']:>5}/{n}")


if __name__ == "__main__":
    main()
