"""One self-contained HTML page of a run's scored studies (docs/cases.md): image, reference and
generated report, the findings of both aligned as S-Score matches them, per-report scores and
statuses, judge explanations, and other runs as comparison columns."""

from __future__ import annotations

import argparse

HELP = "a static HTML page to browse one run's studies: reports, aligned findings, scores, judges"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--predictions", required=True, help="the run's predictions.parquet (srrg infer)")
    parser.add_argument("--scores", required=True, help="the run's per_report.parquet (srrg score)")
    parser.add_argument(
        "--dataset", required=True, help="dataset folder (srrg dataset): structured references and image paths"
    )
    parser.add_argument("--split", default="test", help="dataset split the run predicted (default: test)")
    parser.add_argument("--name", help="run name shown on the page (default: the predictions file's folder name)")
    parser.add_argument(
        "--judge", help="per_report.parquet of srrg judge on a subset of this run (explanations, judge scores)"
    )
    parser.add_argument(
        "--compare",
        nargs=3,
        action="append",
        default=[],
        metavar=("NAME", "PREDICTIONS", "SCORES"),
        help="another run to compare with, per study (repeatable)",
    )
    parser.add_argument("--image-root", help="folder that relative image paths are under (runs on real images)")
    parser.add_argument("--thumbnail-size", type=int, default=64, help="thumbnail edge in pixels (default: 64)")
    parser.add_argument("--processes", type=int, default=1, help="worker processes drawing thumbnails (default: 1)")
    parser.add_argument(
        "--cache-dir", help="folder keeping drawn thumbnails, so each is drawn once for all runs and reruns"
    )
    parser.add_argument("--title", help="page title (default: 'Cases of <run>')")
    parser.add_argument("--out", required=True, help="output HTML file")


def run(args: argparse.Namespace) -> None:
    import time
    from pathlib import Path

    from srrg.errors import UserError
    from srrg.stages import _args

    files = {"--predictions": args.predictions, "--scores": args.scores}
    if args.judge:
        files["--judge"] = args.judge
    for i, (_, preds, scores) in enumerate(args.compare):
        files[f"--compare #{i + 1} PREDICTIONS"], files[f"--compare #{i + 1} SCORES"] = preds, scores
    _args.require_inputs(files, {"--dataset": args.dataset})
    _args.check_outputs(
        {**files, "--dataset": args.dataset, "--image-root": args.image_root}, files={"--out": args.out}
    )
    if not 16 <= args.thumbnail_size <= 512:
        raise UserError(f"--thumbnail-size {args.thumbnail_size}: expected 16..512 pixels")
    if args.processes < 1:
        raise UserError(f"--processes {args.processes}: expected at least 1")

    from srrg.cases.build import RunTables
    from srrg.cases.page import CasesOptions, run_cases

    start = time.perf_counter()
    name = args.name or Path(args.predictions).resolve().parent.name
    options = CasesOptions(
        run=RunTables(name, Path(args.predictions), Path(args.scores)),
        dataset=Path(args.dataset),
        out=Path(args.out),
        title=args.title or f"Cases of {name}",
        split=args.split,
        judge=Path(args.judge) if args.judge else None,
        image_root=args.image_root,
        thumbnail_size=args.thumbnail_size,
        processes=args.processes,
        cache_dir=Path(args.cache_dir) if args.cache_dir else None,
        compare=tuple(RunTables(n, Path(p), Path(s)) for n, p, s in args.compare),
    )
    data, size = run_cases(options)
    print(
        f"srrg cases: {len(data['studies'])} studies of {name} ({data['images']} images, "
        f"{len(data['compare'])} comparison runs) -> {args.out}, {size / 1e6:.2f} MB, "
        f"{time.perf_counter() - start:.1f}s"
    )
