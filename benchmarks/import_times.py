"""Import time of every stage: what a workflow job pays before it reads its first row.

For each srrg/stages/<name>.py, a fresh interpreter imports every srrg module of the stage's
import closure (srrg.codedeps: the modules its run() would import, with their third-party
libraries) and reports the wall time and the CPU time of that process, medians of --repeat runs,
and whether the imports loaded torch (only the model stages need it).
Data stages (ingest, dataset_*, stats) must stay under 1 s of CPU time (docs/cli.md); on a shared
machine the wall time also counts the waits for a core, the CPU time does not.

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
    "t, c = time.perf_counter(), time.process_time()\n"
    "for m in sys.argv[1:]:\n"
    "    importlib.import_module(m)\n"
    "print(time.perf_counter() - t, time.process_time() - c, int('torch' in sys.modules))\n"
)


def stage_modules(stage: str) -> list[str]:
    """The srrg modules a stage runs, without srrg.__main__ (importing it would run the CLI)."""
    closure = codedeps.closure([f"srrg.stages.{stage}"], codedeps.import_graph())
    return sorted(closure)


def import_seconds(modules: list[str], repeat: int) -> tuple[float, float, bool]:
    """(wall, CPU) seconds, medians over `repeat` fresh interpreters, and whether torch got loaded."""
    env_src = str(Path(__file__).resolve().parents[1] / "src")
    walls, cpus, torch = [], [], False
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_src!r})\n" + _PROBE, *modules],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        wall, cpu, loaded = out.strip().splitlines()[-1].split()
        walls.append(float(wall))
        cpus.append(float(cpu))
        torch = loaded == "1"
    return statistics.median(walls), statistics.median(cpus), torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", help="stage names (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per stage; the median is printed")
    args = parser.parse_args()
    names = args.stages or cli.stage_names()
    slow_data = []
    print(f"{'stage':<22} {'modules':>7} {'wall s':>7} {'cpu s':>6} {'torch':>5}")
    for name in names:
        modules = stage_modules(name)
        wall, cpu, torch = import_seconds(modules, args.repeat)
        mark = ""
        if name in DATA_STAGES:
            mark = "  data stage: OK" if cpu < LIMIT_S else f"  data stage: OVER {LIMIT_S:.0f} s"
            if cpu >= LIMIT_S:
                slow_data.append(name)
        print(f"{name:<22} {len(modules):>7} {wall:>7.2f} {cpu:>6.2f} {'yes' if torch else 'no':>5}{mark}")
    return 1 if slow_data else 0


if __name__ == "__main__":
    raise SystemExit(main())
