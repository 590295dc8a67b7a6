"""Write time and size of the `srrg cases` page (docs/cases.md) for synthetic runs of N studies.

Synthetic run files in the workflow's layout: seeded structured references (1-4 positive findings
with probability, level and location, 0-3 negatives), predictions that drop, add or change some of
them (5 % unparseable), S-Score and ROUGE-L per report from the real `srrg score` code, a second run
for the comparison column, phantom images. Timed: building the page's data (alignment, phantom
thumbnails) and writing the page, in-process, with a cold and a warm thumbnail cache, each with the
1-minute load average (the machine is shared). With a `chromium` binary on PATH also the page's own
time from navigation to its first view (parse the data, sort by S-Score, build the first 50 cases;
the page records it), and the wall time of headless Chromium printing the DOM next to the same for
an empty page (the browser's start-up).

    .venv/bin/python benchmarks/cases_page.py [--studies 200 5000] [--processes 1 2] [--thumbnail-size 64]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl

from srrg.cases.build import RunTables, case_list, comparison
from srrg.cases.page import write_page
from srrg.metrics.score import run_score
from srrg.report import parse_report, render_sentences

FINDINGS = [
    "pleural effusion",
    "cardiomegaly",
    "atelectasis",
    "consolidation",
    "edema",
    "pneumothorax",
    "nodule",
    "opacity",
    "emphysema",
    "granuloma",
    "fracture",
    "scoliosis",
]
LEVELS = [None, None, "mild", "small", "moderate", "large"]
LOCATIONS = [None, "left lower lobe", "right lower lobe", "bilateral", "right upper lobe", "left base", "right apex"]


def reference(rng: random.Random) -> dict:
    names = rng.sample(FINDINGS, rng.randint(1, 7))
    k = rng.randint(1, min(4, len(names)))
    positive = [
        {
            "name": n,
            "probability": rng.choice([3, 3, 2, 1]),
            "level": rng.choice(LEVELS),
            "location": rng.choice(LOCATIONS),
        }
        for n in names[:k]
    ]
    return {"positive": positive, "negative": names[k : k + 3]}


def prediction(ref: dict, rng: random.Random) -> str:
    if rng.random() < 0.05:
        return '{"positive": [{"name": "effusion"'  # cut off: unparseable
    positive = [dict(f) for f in ref["positive"] if rng.random() > 0.25]
    for f in positive:
        if rng.random() < 0.3:
            f["probability"] = rng.choice([1, 2, 3])
        if rng.random() < 0.3:
            f["location"] = rng.choice(LOCATIONS)
    if rng.random() < 0.3:
        positive.append({"name": rng.choice(FINDINGS), "probability": 3, "level": None, "location": None})
    seen, unique = set(), []
    for f in positive:
        if f["name"] not in seen:
            seen.add(f["name"])
            unique.append(f)
    negative = [n for n in ref["negative"] if rng.random() > 0.2 and n not in seen]
    return json.dumps({"positive": unique, "negative": negative})


def write_inputs(root: Path, n: int, seed: int = 3) -> dict[str, Path]:
    rng = random.Random(seed)
    ids = [f"st{i:06d}" for i in range(n)]
    refs = {s: json.dumps(reference(rng)) for s in ids}
    (root / "dataset" / "test").mkdir(parents=True)
    pl.DataFrame(
        {
            "study_id": ids,
            "structured": [refs[s] for s in ids],
            "sentences": [render_sentences(parse_report(refs[s])[0]) for s in ids],
            "image_paths": [[f"{s}.png"] for s in ids],
        }
    ).write_parquet(root / "dataset" / "test" / "part-00000.parquet")
    out = {"dataset": root / "dataset"}
    for name in ("base", "other"):
        folder = root / name
        folder.mkdir()
        raws = [prediction(json.loads(refs[s]), rng) for s in ids]
        parsed = [parse_report(r) for r in raws]
        pl.DataFrame(
            {
                "study_id": ids,
                "target": "json",
                "infer_status": "ok",
                "images": "phantom",
                "reference": [refs[s] for s in ids],
                "raw": raws,
                "parse_status": [st for _, st in parsed],
                "report": [r.to_json() for r, _ in parsed],
            }
        ).write_parquet(folder / "predictions.parquet")
        run_score(
            folder / "predictions.parquet",
            folder / "predictions.parquet",
            ["s_score", "rouge_l"],
            folder / "score",
            ref_col="reference",
            hyp_col="raw",
        )
        out[name] = folder
    return out


def open_seconds(page: Path, profile: Path) -> tuple[float, float | None]:
    """Wall time of `chromium --headless --dump-dom` on the page sorted by S-Score, and the page's
    own time from navigation to its first view (`data-ready-ms`); medians of 3."""
    times, ready = [], []
    for _ in range(3):
        start = time.perf_counter()
        dom = subprocess.run(
            [
                shutil.which("chromium"),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--dump-dom",
                f"{page.as_uri()}#sort=s_score",
            ],
            capture_output=True,
            check=True,
            timeout=300,
            text=True,
        ).stdout
        times.append(time.perf_counter() - start)
        found = re.search(r'data-ready-ms="(\d+)"', dom[:2000])
        if found:
            ready.append(int(found.group(1)) / 1000)
    return sorted(times)[1], (sorted(ready)[len(ready) // 2] if ready else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, nargs="+", default=[200, 5000])
    parser.add_argument("--processes", type=int, nargs="+", default=[1])
    parser.add_argument("--thumbnail-size", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.studies:
            root = Path(tmp) / f"n{n}"
            root.mkdir()
            files = write_inputs(root, n)
            base = RunTables(
                "base", files["base"] / "predictions.parquet", files["base"] / "score" / "per_report.parquet"
            )
            other = RunTables(
                "other", files["other"] / "predictions.parquet", files["other"] / "score" / "per_report.parquet"
            )
            cache = root / "thumbnail-cache"
            for processes in args.processes:
                for pass_ in ("cold", "warm"):  # warm: thumbnails cached (a rerun, or the page of another run)
                    if pass_ == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    start = time.perf_counter()
                    data = case_list(
                        base,
                        files["dataset"],
                        "test",
                        thumbnail_size=args.thumbnail_size,
                        processes=processes,
                        cache_dir=cache,
                    )
                    built = time.perf_counter()
                    data["compare"] = [comparison(other)]
                    size = write_page(data, root / "cases.html", "benchmark")
                    total = time.perf_counter() - start
                    print(
                        f"{n:>6} studies, {processes} process(es), {args.thumbnail_size} px thumbnails, {pass_} "
                        f"thumbnail cache: page {size / 1e6:.2f} MB, written in {total:.2f} s "
                        f"(page data {built - start:.2f} s), load average {os.getloadavg()[0]:.2f}"
                    )
            if shutil.which("chromium"):
                empty = root / "empty.html"
                empty.write_text("<!DOCTYPE html><title>empty</title>")
                wall, ready = open_seconds(root / "cases.html", root / "profile")
                print(
                    f"{n:>6} studies: the page shows its first view (sorted by S-Score) {ready:.2f} s after "
                    f"navigation; headless Chromium start to DOM printed {wall:.2f} s "
                    f"(an empty page: {open_seconds(empty, root / 'profile')[0]:.2f} s)"
                )


if __name__ == "__main__":
    main()
