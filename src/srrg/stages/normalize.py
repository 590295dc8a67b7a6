"""Rules normalization is deterministic and offline; the LLM path sends each unique phrase once
through srrg.llm, validates the answer and falls back to the rules phrase (docs/workflow.md)."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "replace raw location phrases of structured reports by normalized phrases (rules or an LLM)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--in",
        dest="inp",
        metavar="TABLE",
        required=True,
        help="extracted.parquet of `srrg extract` (needs a `structured` column)",
    )
    parser.add_argument("--out", required=True, help="output Parquet file (normalized.parquet)")
    parser.add_argument(
        "--phrases",
        required=True,
        help="output Parquet file with one row per unique raw phrase and how it was normalized",
    )
    _args.config(
        parser,
        "normalize",
        "settings of the `normalize` section of config.yaml as inline JSON or a .json/.yaml file; "
        "with method llm, its `llm` key holds the settings of the `llm` section",
    )
    parser.add_argument("--stats", default=None, help="also write the summary and the LLM usage to this JSON file")


def run(args: argparse.Namespace) -> None:
    import sys

    from srrg.config import stage_config
    from srrg.normalize import run_normalize
    from srrg.settings.normalize import NormalizeConfig

    _args.check_outputs({"--in": args.inp}, files={"--out": args.out, "--phrases": args.phrases, "--stats": args.stats})
    cfg = stage_config(args.config, NormalizeConfig, "normalize", with_sections=("llm",))
    print(run_normalize(args.inp, args.out, args.phrases, args.stats, cfg).line(), file=sys.stderr)
