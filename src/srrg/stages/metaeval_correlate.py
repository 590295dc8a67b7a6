"""Kendall tau-b and Spearman with case-clustered bootstrap CIs, paired tests, count-level P/R/F1,
ensembles, within-case preference agreement and system-ranking agreement, in the GEMA-Score
Table 1 and S-RRG Table 3 layouts (docs/metaeval.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Iterable

from srrg.stages import _args, _metaeval

if TYPE_CHECKING:
    import polars as pl

HELP = "correlate per-report metric scores with human ratings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", required=True, help="per_report.parquet of `srrg score`")
    parser.add_argument("--ratings", help="ratings.parquet of `srrg metaeval-prepare` (omit when the scores hold the rating column)")
    parser.add_argument(
        "--pairs", help="pairs.parquet of `srrg metaeval-prepare`: case ids for the clustered bootstrap, systems (optional)"
    )
    parser.add_argument("--out", required=True, help="folder for the tables")
    _metaeval.correlate_config(parser)


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.config import stage_config
    from srrg.errors import UserError
    from srrg.metaeval.adapters import RATINGS_SCHEMA
    from srrg.metaeval.run import ID, MetaevalConfig, run_metaeval, write_result

    _args.check_outputs({"--scores": args.scores, "--ratings": args.ratings, "--pairs": args.pairs}, folders={"--out": args.out})
    cfg = stage_config(args.config, MetaevalConfig, "metaeval.correlate")
    ratings = _table(args.ratings, RATINGS_SCHEMA, "ratings.parquet of `srrg metaeval-prepare`")
    if ratings is not None and ratings.is_empty():
        raise UserError(f"{args.ratings}: no rating rows; nothing to correlate")
    pairs = _table(args.pairs, ["pair_id"], "pairs.parquet of `srrg metaeval-prepare`")
    scores = _table(args.scores, [ID], "per_report.parquet of `srrg score`")
    if scores.is_empty():
        raise UserError(f"{args.scores}: no scored pair; nothing to correlate")
    result = run_metaeval(scores, ratings, cfg, pairs)
    write_result(result, args.out)
    if cfg.caveat:
        print(f"note: {cfg.caveat}", file=sys.stderr)
    info = result.info
    print(
        f"{len(info['metrics'])} metrics x {info['n_with_human']} rated pairs ({info['n_without_human']} without rating), "
        f"resampling {info['resampling']} -> {args.out}"
    )


def _table(path: str | None, columns: Iterable[str], expected: str) -> pl.DataFrame | None:
    """The table at path (None when not given); a table without the columns the correlation
    reads is one line naming the file (docs/cli.md), not a traceback from the join."""
    from srrg.errors import UserError
    from srrg.io import read_table

    if not path:
        return None
    table = read_table(path)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise UserError(f"{path}: lacks column(s) {missing}; expected the {expected}")
    return table
