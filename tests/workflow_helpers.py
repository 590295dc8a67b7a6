"""Run the Snakemake workflow in a scratch copy of the repository (never writes into the repo)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from paths import REPO

# what a workflow run needs: the Snakefile, rules/schemas/report captions, the config, the code
WORKFLOW_PARTS = ("Snakefile", "config.yaml", "workflow", "src", "profiles", "envs")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def copy_workflow(dest: Path) -> Path:
    """A copy of the workflow and its source tree; rules run this copy's src/ (PYTHONPATH)."""
    dest.mkdir(parents=True, exist_ok=True)
    for part in WORKFLOW_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=_IGNORE)
        else:
            shutil.copy2(src, dest / part)
    return dest


def write_config(workdir: Path, data: dict[str, Any], name: str = "test-config.yaml") -> Path:
    path = workdir / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def snakemake(workdir: Path, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`python -m snakemake --cores 2 ARGS` in workdir, with the interpreter running the tests."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def planned_jobs(proc: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a (dry) run; {} when nothing is to be done."""
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return {}
    table = text.split("Job stats:", 1)[1]
    jobs = {}
    for line in table.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not m:
            break
        if m.group(1) != "total":
            jobs[m.group(1)] = int(m.group(2))
    return jobs


def mtimes(paths: list[Path]) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in paths}
