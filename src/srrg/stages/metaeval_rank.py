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
    import json
    from pathlib import Path

    from srrg.config import stage_config
    from srrg.io import write_text
    from srrg.metaeval import radjudge
    from srrg.metrics import metric_options

    _args.check_outputs({"--cases": args.cases}, folders={"--out": args.out})
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    options = metric_options(metrics, stage_config(args.config, dict, "score.options"))
    cases = radjudge.read_cases(args.cases)
    keys = radjudge.metric_keys(metrics, parse_keys(args.keys))
    checked = radjudge.check_cases(cases, radjudge.candidate_scores(cases, metrics, keys, options), keys)
    table = radjudge.category_table(checked)
    out = Path(args.out)
    caption = (
        f"RadJudge ranking cases passed per category ({len(cases)} cases; '>' strictly greater, '=' within "
        f"{radjudge.EQUAL_TOLERANCE}, every relation of a case must hold; text metrics ignore patient context)."
    )
    markdown = radjudge.category_markdown(table, keys, caption)
    write_text(out / "rank_cases.csv", checked.write_csv())
    write_text(out / "rank_categories.csv", table.write_csv())
    write_text(out / "rank_categories.md", markdown)
    info = {
        "cases": args.cases,
        "n_cases": len(cases),
        "n_categories": table.height - 1,
        "metrics": metrics,
        "keys": keys,
        "n_cases_with_context": sum(c.has_context for c in cases),
        "equal_tolerance": radjudge.EQUAL_TOLERANCE,
    }
    write_text(out / "info.json", json.dumps(info, indent=2) + "\n")
    print(markdown, end="")
    print(f"srrg metaeval-rank: {len(cases)} cases x {len(metrics)} metrics -> {out}")
