"""The data stages through a real SLURM cluster (scripts/setup_slurm.sh) with
`--profile profiles/slurm`; outputs must equal those of a local run."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from workflow_helpers import copy_workflow, snakemake, write_config

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

CONFIG = {"ingest": {"source": "iu_xray", "limit": 40}, "dataset": {"rows_per_shard": 15}}
TARGETS = ("data",)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        pytest.skip("no SLURM here (run scripts/setup_slurm.sh as root)")
    tmp = tmp_path_factory.mktemp("slurm")
    local = copy_workflow(tmp / "local")
    cluster = copy_workflow(tmp / "cluster")
    for workdir in (local, cluster):
        write_config(workdir, CONFIG)
    snakemake(local, *TARGETS, "--configfile", "test-config.yaml")
    proc = snakemake(
        cluster,
        "--profile",
        "profiles/slurm",
        "--configfile",
        "test-config.yaml",
        "--slurm-status-command",
        "squeue",
        "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks",
        "1",
        "--seconds-between-status-checks",
        "2",
        "--jobs",
        "4",
        "--retries",
        "0",
        *TARGETS,
    )
    return local, cluster, proc


def test_jobs_went_through_sbatch(runs):
    _, cluster, proc = runs
    text = proc.stdout + proc.stderr
    assert "slurm" in text.lower() and "Job" in text
    assert (cluster / "results" / "dataset" / "manifest.json").exists()


def test_cluster_outputs_equal_local(runs):
    local, cluster, _ = runs
    manifest = json.loads((local / "results" / "dataset" / "manifest.json").read_text())
    assert json.loads((cluster / "results" / "dataset" / "manifest.json").read_text()) == manifest
    for f in manifest["files"]:
        a = pl.read_parquet(local / "results" / "dataset" / f["path"])
        b = pl.read_parquet(cluster / "results" / "dataset" / f["path"])
        assert a.equals(b), f["path"]
    for name in ("findings", "probability", "severity"):
        assert (local / "results" / "stats" / f"{name}.csv").read_text() == (
            cluster / "results" / "stats" / f"{name}.csv"
        ).read_text()
