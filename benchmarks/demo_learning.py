"""Does the demo's baseline read the phantoms? Its S-Score against the Constant row (issue 12).

Recomputes, independently of the tables stage, from a finished demo's results folder: the
baseline's parse rate (valid or repaired) and S-Score on its scored predictions (infer_status ok),
the Constant row (the most frequent training report predicted for every one of those studies,
docs/model.md) and the margin. The bar: >= 200 studies, parse rate >= 0.90, margin >= +0.10.
Also counts the predictions and references without a positive finding (a model that ignores the
image writes the no-findings report, like the Constant row, for nearly every study).

    .venv/bin/python benchmarks/demo_learning.py [--results results] [--run transformer_json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from srrg.metrics import evaluate
from srrg.reference_runs import most_frequent_report
from srrg.report import parse_report
from srrg.run_tables import parse_rates, scored


def learning_summary(results: Path, run: str, dataset: Path | None = None) -> dict[str, float]:
    """studies, parse rate, S-Score, constant, margin, and the no-findings counts (training
    shards from `dataset`, by default the results folder's own)."""
    preds = scored(pl.read_parquet(results / "runs" / run / "predictions.parquet"))
    refs, hyps = preds["reference"].to_list(), preds["report"].to_list()
    shards = sorted(((dataset or results / "dataset") / "train").glob("*.parquet"))
    train = pl.concat([pl.read_parquet(f, columns=["structured"]) for f in shards])
    constant = most_frequent_report(train["structured"].drop_nulls().to_list()).to_json()
    model = evaluate(refs, hyps, ["s_score"])["s_score"]
    const = evaluate(refs, [constant] * len(refs), ["s_score"])["s_score"]
    return {
        "studies": len(refs),
        "parse_rate": parse_rates(preds["parse_status"].to_list())["parsed"],
        "s_score": model,
        "constant": const,
        "margin": model - const,
        "no_findings_predicted": sum(not parse_report(h)[0].positive for h in hyps),
        "no_findings_reference": sum(not parse_report(r)[0].positive for r in refs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="results", type=Path, help="a finished demo's results folder")
    parser.add_argument("--run", default="transformer_json", help="the baseline run's name")
    args = parser.parse_args()
    s = learning_summary(args.results, args.run)
    print(
        f"studies {s['studies']} parse_rate {s['parse_rate']:.3f} s_score {s['s_score']:.4f} "
        f"constant {s['constant']:.4f} margin {s['margin']:+.4f} "
        f"no_findings predicted {s['no_findings_predicted']} reference {s['no_findings_reference']}"
    )


if __name__ == "__main__":
    main()
