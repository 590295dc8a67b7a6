"""References and hypotheses are joined on the study id; ids found on one side only are listed in
unmatched.csv and counted, never dropped silently. Outputs: per_report.parquet, summary.csv,
summary.md (docs/metrics.md)."""

from __future__ import annotations

import argparse
import typing

from srrg.settings.score import ScoredSection
from srrg.stages import _args

HELP = "score generated reports against references with any registered metrics"
PRESETS = {"rexrank": ("rexrank",)}  # --preset -> the metrics it scores


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--refs",
        required=True,
        help=(
            "reference reports: Parquet, JSONL, JSON or CSV with a study id and a report column, "
            "or TXT with one report per line (docs/inputs.md)"
        ),
    )
    parser.add_argument(
        "--hyps",
        required=True,
        help=(
            "generated reports: Parquet, JSONL, JSON or CSV with a study id and a report column, "
            "or TXT with one report per line (docs/inputs.md)"
        ),
    )
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument(
        "--metrics", help="comma-separated metric names, e.g. s_score,bleu,rouge_l (see docs/metrics.md)"
    )
    chosen.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="the metrics of a leaderboard, each computed its way: rexrank = every ReXrank column "
        "(docs/metrics.md, 'ReXrank preset')",
    )
    parser.add_argument("--out", required=True, help="output folder")
    _args.config(
        parser,
        "score",
        'options per metric as inline JSON or a .json/.yaml file, e.g. {"s_score": {"d_over": "reference"}} '
        "(keys: docs/config.md)",
    )
    parser.add_argument(
        "--section",
        help="score.section: score only this section of free-text references and hypotheses alike, one of "
        f"{', '.join(typing.get_args(ScoredSection))}; both = the whole text (the default; docs/metrics.md, "
        "'Which section is scored')",
    )
    _args.report_columns(parser)


def run(args: argparse.Namespace) -> None:
    import time
    from pathlib import Path

    from srrg.config import stage_config
    from srrg.metrics import metric_options
    from srrg.metrics.score import COUNTS, run_score, signature_columns, summary_markdown
    from srrg.settings.score import ScoreSection

    _args.check_outputs({"--refs": args.refs, "--hyps": args.hyps}, folders={"--out": args.out})
    metrics = list(PRESETS[args.preset]) if args.preset else [m.strip() for m in args.metrics.split(",") if m.strip()]
    metric_options(metrics, {})  # an empty or unknown name is refused in --metrics' own words
    section = {} if args.section is None else {"section": args.section}
    cfg = stage_config(
        args.config, ScoreSection, "score", adjust=lambda options: {"options": options, "metrics": metrics, **section}
    )
    start = time.perf_counter()
    summary = run_score(
        args.refs, args.hyps, metrics, args.out, cfg.options, args.id_col, args.ref_col, args.hyp_col, cfg.section
    )
    print(
        f"srrg score: {int(summary['n_pairs'])} pairs scored, {int(summary['n_unmatched'])} unmatched ids "
        f"(listed in {Path(args.out) / 'unmatched.csv'}), {time.perf_counter() - start:.1f}s"
    )
    print(summary_markdown({k: v for k, v in summary.items() if k not in COUNTS}), end="")
    for column, signature in signature_columns(args.out).items():
        print(f"{column}: {signature}")
