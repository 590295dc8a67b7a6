"""The parts of one sharded infer run (`srrg infer --shard K`, K = 0..infer.shards-1) become the
predictions file one worker writes, byte for byte (docs/model.md, "Sharded inference")."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "merge the shard parts of `srrg infer --shard` into one predictions file (and its pairs)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--parts", nargs="+", required=True, help="the part files of every shard of one run")
    parser.add_argument("--out", required=True, help="predictions Parquet file to write")
    parser.add_argument("--pairs", help="also write the pairs to score to this Parquet file")


def run(args: argparse.Namespace) -> None:
    _args.require_inputs(files={f"--parts[{i}]": p for i, p in enumerate(args.parts)})
    _args.check_outputs(
        {f"--parts[{i}]": p for i, p in enumerate(args.parts)}, files={"--out": args.out, "--pairs": args.pairs}
    )
    from srrg.model.infer_parts import run_infer_merge

    print(run_infer_merge(args.parts, args.out, args.pairs))
