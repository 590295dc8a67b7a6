"""Wall time of the workflow's data half (ingest -> extract -> normalize -> shards -> stats) on
the full IU X-ray corpus (3,955 reports), and of a no-op rerun, in a scratch copy of the repo.

    .venv/bin/python benchmarks/workflow_iu.py [--limit N] [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from workflow_helpers import copy_workflow, write_config  # noqa: E402

TARGETS = ("data",)  # the data half: shards, manifest, statistics


def timed(workdir: Path, cores: int, *args: str) -> float:
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "snakemake", *TARGETS, "--cores", str(cores), *args, "--configfile", "bench.yaml"]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"snakemake failed:\n{proc.stderr[-4000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="studies (default: all 3,955)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", help="run in this folder and keep it (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = copy_workflow(Path(args.keep or tmp) / "repo")
        write_config(workdir, {"ingest": {"source": "iu_xray", "limit": args.limit}}, "bench.yaml")
        first = timed(workdir, args.cores)
        noop = timed(workdir, args.cores)
        manifest = json.loads((workdir / "results" / "dataset" / "manifest.json").read_text())
        logs = {p.stem: p.read_text().strip().splitlines()[-1] for p in (workdir / "logs").glob("*.log")}
    print(
        f"studies: {manifest['rows']}  splits: " + ", ".join(f"{s}={v['rows']}" for s, v in manifest["splits"].items())
    )
    for stage in ("ingest", "extract", "normalize"):
        print(f"  {logs.get(stage, '(no log)')}")
    print(f"data half, first run: {first:.1f} s wall ({args.cores} cores)")
    print(f"no-op rerun:          {noop:.1f} s wall")


if __name__ == "__main__":
    main()
