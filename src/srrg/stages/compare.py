"""Two or more report generators scored on the same studies: per metric, each system's value with a
paired-bootstrap CI, the difference to the first system with its CI, and paired bootstrap and
approximate-randomization p-values. Outputs compare.md, compare.csv and unmatched.csv
(docs/metrics.md, "Comparing systems")."""

from __future__ import annotations

import argparse

from srrg.settings.compare import CORRECTIONS
from srrg.stages import _args

HELP = "compare two or more systems on the same studies: CIs and paired significance tests per metric"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refs", help="reference reports: Parquet, JSONL or CSV with a study id and a report column")
    parser.add_argument(
        "--hyps",
        action="append",
        metavar="NAME=FILE",
        help="one system's generated reports as NAME=FILE; give it once per system, the first is the baseline",
    )
    parser.add_argument(
        "--metrics", help="comma-separated metric names, e.g. s_score,bleu,rouge_l (see docs/metrics.md)"
    )
    parser.add_argument(
        "--per-report",
        action="append",
        metavar="NAME=FILE",
        help="instead of --refs/--hyps/--metrics: a per_report.parquet that srrg score wrote, as NAME=FILE, "
        "once per system (nothing is rescored; BLEU is then the mean of sentence BLEU)",
    )
    parser.add_argument("--out", required=True, help="output folder")
    _args.config(
        parser,
        "score",
        'options per metric as inline JSON or a .json/.yaml file, e.g. {"bleu": {"tokenization": "ptb"}}',
    )
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples of the studies (default: 1000)")
    parser.add_argument("--n-rounds", type=int, default=10000, help="approximate-randomization rounds (default: 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of both tests (default: 0)")
    parser.add_argument(
        "--ci-level", type=float, default=0.95, help="coverage of the confidence intervals (default: 0.95)"
    )
    parser.add_argument(
        "--correction", choices=CORRECTIONS, default="holm",
        help="multiple-comparison adjustment over all metrics x system pairs, shown beside the raw p-values: "
        "holm (family-wise error, default), bh (Benjamini-Hochberg false discovery rate) or none",
    )  # fmt: skip
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="compare columns whose numbers were made differently (their signatures differ; both are printed); "
        "default: refuse (docs/metrics.md, 'Signatures')",
    )
    _args.report_columns(parser)


def systems(values: list[str]) -> dict[str, str]:
    """NAME=FILE arguments (--hyps or --per-report) as an ordered mapping; names must be distinct."""
    from srrg.errors import UserError

    out: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UserError(f"{value!r}: write NAME=FILE, e.g. --hyps baseline=preds.parquet")
        if name in out:
            raise UserError(f"system name {name!r} is given twice")
        out[name] = path
    if len(out) < 2:
        raise UserError(f"give two or more systems to compare, got {len(out)}")
    return out


def run(args: argparse.Namespace) -> None:
    from srrg.compare import run_compare, run_compare_tables
    from srrg.config import ConfigError, stage_config
    from srrg.errors import UserError, one_line
    from srrg.metrics import metric_options
    from srrg.settings.compare import CompareConfig

    named = {
        f"{option} (system {v.partition('=')[0]})": v.partition("=")[2]
        for option, values in (("--hyps", args.hyps), ("--per-report", args.per_report))
        for v in values or []
    }
    _args.check_outputs({"--refs": args.refs, **named}, folders={"--out": args.out})
    try:  # the flags are no config section: a value CompareConfig refuses (n_boot 0, ci_level 1) in one line
        cfg = CompareConfig(
            n_boot=args.n_boot,
            n_rounds=args.n_rounds,
            seed=args.seed,
            ci_level=args.ci_level,
            correction=args.correction,
        )
    except ValueError as err:
        raise ConfigError(f"compare: {one_line(err)}") from None
    scoring = (args.refs, args.hyps, args.metrics)
    if args.per_report:
        if any(scoring):
            raise UserError("give either --per-report tables or --refs, --hyps and --metrics, not both")
        rows = run_compare_tables(systems(args.per_report), args.out, cfg, args.allow_mixed)
    elif all(scoring):
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        options = metric_options(metrics, stage_config(args.config, dict, "score.options"))
        rows = run_compare(
            args.refs, systems(args.hyps), metrics, args.out, options, cfg, args.id_col, args.ref_col, args.hyp_col
        )
    else:
        raise UserError("give --refs, --hyps (two or more) and --metrics, or two or more --per-report tables")
    studies = max((r.n for r in rows), default=0)  # with a value on both sides (compare.csv: n per metric)
    print(f"srrg compare: {studies} studies, {len(rows)} comparisons; tables in {args.out}")
    for key, signature in dict.fromkeys((r.key, r.signature) for r in rows if " vs " in r.signature):
        print(f"srrg compare: mixed signatures in {key}: {signature}")
