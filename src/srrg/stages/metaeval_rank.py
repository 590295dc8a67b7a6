"""RadJudge ranking check: every candidate of every case scored with the configured metrics, pass or
fail per case with RadJudge's rule ('>' strictly greater, '=' within 0.01, a list must all hold),
and pass counts per category (docs/metaeval.md). Outputs rank_cases.csv, rank_categories.csv,
rank_categories.md and info.json."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "RadJudge ranking cases: do the metrics rank candidate reports as radiologists expect?"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", required=True, help="RadJudge ranking_tests.json, or the folder holding it")
    parser.add_argument(
        "--metrics", required=True, help="comma-separated metric names, e.g. bleu,rouge_l,s_score_text,ce"
    )
    parser.add_argument(
        "--keys", default="", metavar="METRIC=KEY,...",
        help="statistic checked per metric (defaults: bleu=bleu_4, ce=ce_f1, else the metric name)",
    )  # fmt: skip
    parser.add_argument("--out", required=True, help="output folder")
    _args.config(
        parser,
        "score",
        'options per metric as inline JSON or a .json/.yaml file, e.g. {"bleu": {"tokenization": "ptb"}}',
    )


def parse_keys(value: str) -> dict[str, str]:
    from srrg.errors import UserError

    out = {}
    for item in filter(None, (v.strip() for v in value.split(","))):
        metric, sep, key = item.partition("=")
        if not sep or not metric or not key:
            raise UserError(f"--keys {item!r}: write METRIC=KEY, e.g. bleu=bleu_1")
        out[metric] = key
    return out


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.radjudge import run_metaeval_rank
    from srrg.metrics import metric_options

    _args.check_outputs({"--cases": args.cases}, folders={"--out": args.out})
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    options = metric_options(metrics, stage_config(args.config, dict, "score.options"))
    markdown, n_cases = run_metaeval_rank(args.cases, metrics, parse_keys(args.keys), options, args.out)
    print(markdown, end="")
    print(f"srrg metaeval-rank: {n_cases} cases x {len(metrics)} metrics -> {args.out}")
