"""Coverage of the case-clustered percentile bootstrap CI of Kendall tau-b by the number of cases:
the basis of metaeval.correlate.min_cases (docs/metaeval.md, "Statistics").

Synthetic rating sets like RadPref's: each case has `per` candidates sharing a case effect (they share
a reference); the human score is the case effect plus noise, the metric a mix of the case effect,
the human score and its own noise. The population tau-b is taken from one large draw of the same
model. For each case count, `reps` sets are drawn, each gets the 95% interval of
srrg.metaeval.correlation.correlate over clustered resamples (no minimum), and the share of
intervals holding the population tau (nominal 0.95) and their mean width are printed.

    .venv/bin/python benchmarks/cluster_bootstrap_coverage.py [--reps 200] [--n-boot 200] [--cases 4,6,10,20]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from srrg.metaeval.correlation import correlate


def draw(rng: np.random.Generator, cases: int, per: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(metric, human, case id) of `cases` x `per` candidates."""
    case = np.repeat(np.arange(cases), per)
    effect = rng.normal(size=cases)[case]
    human = effect + rng.normal(scale=0.7, size=cases * per)
    metric = 0.5 * effect + 0.5 * human + rng.normal(scale=0.7, size=cases * per)
    return metric, human, [f"c{c}" for c in case]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="rating sets drawn per case count (default: 200)")
    parser.add_argument("--n-boot", type=int, default=200, help="bootstrap resamples per interval (default: 200)")
    parser.add_argument("--cases", default="4,6,10,20", help="case counts, comma-separated (default: 4,6,10,20)")
    parser.add_argument("--per", type=int, default=2, help="candidates per case (RadPref: 2; default: 2)")
    parser.add_argument("--seed", type=int, default=123)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    metric, human, _ = draw(rng, 20000 // args.per, args.per)
    truth = stats.kendalltau(metric, human, variant="b").statistic
    print(
        f"population tau-b ~ {truth:.3f} (one draw of {len(metric)} candidates); "
        f"{args.reps} sets per row, {args.n_boot} resamples, {args.per} candidates per case"
    )
    for cases in (int(c) for c in args.cases.split(",")):
        hits, widths = 0, []
        for rep in range(args.reps):
            x, y, clusters = draw(rng, cases, args.per)
            c = correlate(x, y, "kendall", n_boot=args.n_boot, seed=rep, clusters=clusters)
            hits += c.ci_low <= truth <= c.ci_high
            widths.append(c.ci_high - c.ci_low)
        print(f"cases={cases:3d} coverage={hits / args.reps:.3f} mean_width={np.nanmean(widths):.3f}", flush=True)


if __name__ == "__main__":
    main()
