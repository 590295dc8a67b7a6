"""`srrg judge-train`: fine-tune an LLM judge on expert ratings (VERT-style LoRA / QLoRA).

  srrg judge-train prepare --adapter rate_eval --data ratings.csv --out-dir D --config JSON
  srrg judge-train fit --prepared D --out-dir M --work-dir W --config JSON     # M/adapter, M/merged
  srrg score --refs D/heldout/refs.parquet --hyps D/heldout/hyps.parquet --metrics vert \\
      --config '{"vert": {"llm": {"backend": "local", "model": "M/merged"}}}' --out S
  srrg judge-train compare --finetuned S/per_report.parquet --zero-shot Z/per_report.parquet \\
      --ratings D/heldout/ratings.parquet --out T
  srrg judge-train merge --adapter M/adapter --out M/merged --config JSON      # e.g. after QLoRA
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import polars as pl

from srrg.io import load_config_arg, read_table, write_parquet
from srrg.judge_train.config import JudgeTrainConfig
from srrg.metaeval.adapters import ADAPTERS, load_dataset


def _prepare(args: argparse.Namespace) -> str:
    from srrg.judge_train.dataset import build_examples, write_prepared

    cfg = JudgeTrainConfig.from_dict(load_config_arg(args.config))
    ds = load_dataset(args.adapter, args.data, **load_config_arg(args.options))
    analyses = read_table(args.analyses).with_columns(pl.col("pair_id").cast(pl.String)) if args.analyses else None
    examples, summary = build_examples(ds, cfg, analyses)
    write_prepared(examples, ds.ratings, summary, args.out_dir)
    return f"{ds.name}: {examples.height} pairs, cases {summary['cases']}, target {summary['target']}, statuses {summary['pairs']}"


def _fit(args: argparse.Namespace) -> str:
    from srrg.judge_train.train import fit

    cfg = JudgeTrainConfig.from_dict(load_config_arg(args.config))
    examples = pl.read_parquet(Path(args.prepared) / "examples.parquet")
    s = fit(examples, cfg, args.out_dir, args.work_dir)
    return f"{s['method']} on {s['device']}: {s['train_examples']} examples, {s['steps']} steps, loss {s['train_loss']:.4f}, {s['trainable_params']} trainable params -> {args.out_dir}"


def _merge(args: argparse.Namespace) -> str:
    from srrg.judge_train.train import merge

    return f"merged -> {merge(args.adapter, JudgeTrainConfig.from_dict(load_config_arg(args.config)), args.out)}"


def _compare(args: argparse.Namespace) -> str:
    from srrg.judge_train.compare import compare
    from srrg.metaeval.run import write_result

    zero_shot = read_table(args.zero_shot) if args.zero_shot else None
    joined, result = compare(read_table(args.finetuned), zero_shot, pl.read_parquet(args.ratings), load_config_arg(args.config), args.suffix)
    write_parquet(joined, Path(args.out) / "per_report.parquet")
    write_result(result, args.out)
    return f"{len(result.info['metrics'])} metrics x {result.info['n_with_human']} held-out pairs -> {args.out}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srrg judge-train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    prep = sub.add_parser("prepare", help="ratings dataset -> examples.parquet (split by case) + heldout/ for scoring")
    prep.add_argument("--adapter", required=True, choices=sorted(ADAPTERS))
    prep.add_argument("--data", required=True, help="dataset folder (rexval, radpref) or CSV (rate_eval, radevalx)")
    prep.add_argument("--options", help="JSON of adapter column options")
    prep.add_argument("--analyses", help="table with pair_id, analysis (GREEN-style targets)")
    prep.add_argument("--out-dir", required=True)
    prep.add_argument("--config", help="judge_train slice (JSON inline or .json/.yaml path)")
    fit_p = sub.add_parser("fit", help="LoRA/QLoRA training; writes adapter/ and merged/")
    fit_p.add_argument("--prepared", required=True, help="out-dir of `prepare`")
    fit_p.add_argument("--out-dir", required=True)
    fit_p.add_argument("--work-dir", required=True, help="checkpoints for resuming (outside declared outputs)")
    fit_p.add_argument("--config")
    merge_p = sub.add_parser("merge", help="fold an adapter into its (unquantized) base model")
    merge_p.add_argument("--adapter", required=True)
    merge_p.add_argument("--out", required=True)
    merge_p.add_argument("--config", help="the judge_train slice used for training (names the base model)")
    cmp_p = sub.add_parser("compare", help="tuned vs zero-shot judges on the held-out split")
    cmp_p.add_argument("--finetuned", required=True, help="per_report.parquet of the tuned judge")
    cmp_p.add_argument("--zero-shot", help="per_report.parquet of the zero-shot metrics (any superset of the pairs)")
    cmp_p.add_argument("--ratings", required=True, help="heldout/ratings.parquet of `prepare`")
    cmp_p.add_argument("--suffix", default="_ft", help="suffix of the tuned judge's columns")
    cmp_p.add_argument("--out", required=True)
    cmp_p.add_argument("--config", help="metaeval correlate options (MetaevalConfig fields)")
    args = parser.parse_args(argv)
    actions = {"prepare": _prepare, "fit": _fit, "merge": _merge, "compare": _compare}
    start = time.perf_counter()
    try:
        line = actions[args.action](args)
    except (ValueError, KeyError, FileNotFoundError, RuntimeError) as err:
        print(f"srrg judge-train {args.action}: error: {err}", file=sys.stderr)
        return 1
    print(f"srrg judge-train {args.action}: {line} ({time.perf_counter() - start:.1f}s)")
    return 0
