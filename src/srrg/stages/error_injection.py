"""Error injection as a meta-evaluation (docs/metaeval.md, "Error injection"): k false findings
inserted into, or k findings dropped from, each reference with a seed, every metric scored as
`srrg score` scores it, and per metric, category and k the score drop and the detection F1."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "error injection: insert or drop k findings of each reference and measure which metrics notice"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--refs", required=True, help="reference reports with a study id and a report column (docs/inputs.md)"
    )
    parser.add_argument("--metrics", required=True, help="comma-separated metric names (see docs/metrics.md)")
    parser.add_argument(
        "--out", required=True, help="folder for error_injection.{csv,md}, injection.parquet, scores/ and info.json"
    )
    _args.config(parser, "metaeval.injection")
    parser.add_argument(
        "--options",
        metavar="JSON|FILE",
        help='options per metric, as `srrg score --config` takes them, e.g. {"green": {"llm": {...}}}',
    )


def run(args: argparse.Namespace) -> None:
    from srrg.config import stage_config
    from srrg.metaeval.injection import run_error_injection
    from srrg.metrics import metric_options
    from srrg.settings.metaeval import ErrorInjection
    from srrg.settings.score import ScoreSection

    _args.check_outputs({"--refs": args.refs}, folders={"--out": args.out})
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    metric_options(metrics, {})  # an empty or unknown name is refused in --metrics' own words
    cfg = stage_config(args.config, ErrorInjection, "metaeval.injection")
    score = stage_config(args.options, ScoreSection, "score", adjust=lambda o: {"options": o, "metrics": metrics})
    table = run_error_injection(args.refs, metrics, score.options, cfg, args.out)
    print(f"{table['metric'].n_unique()} metric columns x {table.height // max(table['metric'].n_unique(), 1)} "
          f"(category, k) cells -> {args.out}")  # fmt: skip
