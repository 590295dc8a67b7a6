"""`snakemake --profile slurm` by name from the repository root, after scripts/install_profiles.sh
(run by scripts/setup.sh), and `--profile profiles/slurm` by path (docs/workflow.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from workflow_helpers import REPO, copy_workflow

pytestmark = pytest.mark.slow


def _dry_run(workdir, profile, xdg):
    env = dict(os.environ, XDG_CONFIG_HOME=str(xdg))
    cmd = [sys.executable, "-m", "snakemake", "--profile", profile, "-n"]
    return subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)


def test_profiles_by_name_after_setup_and_by_path(tmp_path):
    workdir = copy_workflow(tmp_path / "repo")
    (workdir / "scripts").mkdir()
    (workdir / "scripts" / "install_profiles.sh").write_bytes((REPO / "scripts" / "install_profiles.sh").read_bytes())
    xdg = tmp_path / "xdg"
    assert _dry_run(workdir, "slurm", xdg).returncode != 0  # before the install: no profile named slurm
    env = dict(os.environ, XDG_CONFIG_HOME=str(xdg))
    subprocess.run(["bash", "scripts/install_profiles.sh"], cwd=workdir, env=env, check=True, capture_output=True)
    assert (xdg / "snakemake" / "slurm").resolve() == (workdir / "profiles" / "slurm").resolve()
    for profile in ("slurm", "profiles/slurm", "local"):
        proc = _dry_run(workdir, profile, xdg)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "ingest" in proc.stdout + proc.stderr
    # a second install is a no-op
    again = subprocess.run(
        ["bash", "scripts/install_profiles.sh"], cwd=workdir, env=env, check=True, capture_output=True, text=True
    )
    assert again.stdout == "" and again.stderr == ""
