"""A ReXrank test file (`ReXRank_<set>_test.json`) as a references table for `srrg score`: its
studies, images, references and patient context (age, sex, indication, comparison as columns, so a
context-aware metric such as CRIMSON reads them; docs/inputs.md, "ReXrank")."""

from __future__ import annotations

import argparse

from srrg.stages import _args

HELP = "a ReXrank test JSON as a references table (study_id, report, sections, images, patient context)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--test", required=True, help="ReXrank test file (ReXRank_<set>_test.json)")
    parser.add_argument(
        "--image-root", default=None, help="the set's image folder: image paths are written under it (default: as is)"
    )
    parser.add_argument("--out", required=True, help="output references table (Parquet)")


def run(args: argparse.Namespace) -> None:
    from srrg.sources.rexrank import run_rexrank_prepare

    _args.require_inputs(files={"--test": args.test})
    _args.check_outputs({"--test": args.test}, files={"--out": args.out})
    print(f"srrg rexrank-prepare: {run_rexrank_prepare(args.test, args.out, args.image_root)}")
