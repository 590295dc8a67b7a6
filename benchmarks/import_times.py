"""Import time of every stage: what a workflow job pays before it reads its first row.

For each srrg/stages/<name>.py, a fresh interpreter imports every srrg module of the stage's
import closure (srrg.codedeps: the modules its run() would import, with their third-party
libraries) and reports the wall time, median of --repeat runs. Data stages (ingest, dataset_*,
stats) must stay under 1 s (docs/cli.md).

    .venv/bin/python benchmarks/import_times.py [--repeat 3] [stage ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from srrg import cli, codedeps  # noqa: E402

DATA_STAGES = ("ingest", "dataset_plan", "dataset_shard", "dataset_manifest", "stats")
LIMIT_S = 1.0
_PROBE = (
    "import importlib, sys, time\n"
    "t = time.perf_counter()\n"
    "for m in sys.argv[1:]:\n"
    "    importlib.import_module(m)\n"
    "print(time.perf_counter() - t)\n"
)


def stage_modules(stage: str) -> list[str]:
    """The srrg modules a stage runs, without srrg.__main__ (importing it would run the CLI)."""
    closure = codedeps.closure([f"srrg.stages.{stage}"], codedeps.import_graph())
    return sorted(closure)


def import_seconds(modules: list[str], repeat: int) -> float:
    env_src = str(Path(__file__).resolve().parents[1] / "src")
    times = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_src!r})\n" + _PROBE, *modules],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", help="stage names (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per stage; the median is printed")
    args = parser.parse_args()
    names = args.stages or cli.stage_names()
    slow_data = []
    print(f"{'stage':<22} {'modules':>7} {'import s':>9}")
    for name in names:
        modules = stage_modules(name)
        seconds = import_seconds(modules, args.repeat)
        mark = ""
        if name in DATA_STAGES:
            mark = "  data stage: OK" if seconds < LIMIT_S else f"  data stage: OVER {LIMIT_S:.0f} s"
            if seconds >= LIMIT_S:
                slow_data.append(name)
        print(f"{name:<22} {len(modules):>7} {seconds:>9.2f}{mark}")
    return 1 if slow_data else 0


if __name__ == "__main__":
    raise SystemExit(main())
