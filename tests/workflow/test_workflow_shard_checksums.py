"""The workflow never re-blesses changed bytes (docs/workflow.md): a shard replaced on disk after
its shard job stops `snakemake data` with one line naming it and no manifest records it; a deleted
shard (with its checksum) is rebuilt to the same bytes. Issue 39: before, the newer shard reran only
dataset_manifest, which recorded the new bytes as correct (exit 0)."""

from __future__ import annotations

import json
import os

import polars as pl
import pytest
from fixtures.mimic_cxr_layout import build_mimic_fixture
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.slow


def test_a_replaced_shard_stops_the_data_run_and_is_never_recorded(tmp_path):
    workdir = copy_workflow(tmp_path / "repo")
    fixture = build_mimic_fixture(tmp_path / "mimic")
    cfg = write_config(workdir, {"ingest": {"source": "mimic_cxr", "mimic_cxr": fixture.config()}})
    snakemake(workdir, "data", "--configfile", str(cfg))
    dataset = workdir / "results" / "dataset"
    manifest = (dataset / "manifest.json").read_bytes()
    shard = dataset / json.loads(manifest)["files"][0]["path"]
    original = shard.read_bytes()

    doubled = pl.concat([pl.read_parquet(shard)] * 2)  # the same ids twice: what a careless copy gives
    doubled.write_parquet(shard)
    later = os.stat(dataset / "manifest.json").st_mtime + 10
    os.utime(shard, (later, later))
    proc = snakemake(workdir, "data", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0
    log = (workdir / "logs" / "dataset" / "manifest.log").read_text().strip()
    rel = shard.relative_to(workdir).as_posix()
    assert log.startswith(f"srrg dataset-manifest: error: shard {rel} changed since its shard job wrote it"), log
    assert log.count("\n") == 0 and "snakemake data" in log
    # Snakemake removes a failed job's output: no manifest vouches for the folder, which the readers refuse
    assert not (dataset / "manifest.json").exists()

    shard.unlink()
    jobs = planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg)))
    assert {"dataset_shard", "dataset_manifest"} <= set(jobs) and jobs["dataset_shard"] == 1
    snakemake(workdir, "data", "--configfile", str(cfg))
    assert shard.read_bytes() == original and (dataset / "manifest.json").read_bytes() == manifest

    plan = dataset / "plan.json"
    plan.write_text(plan.read_text()[:40])  # truncated (a full disk, a hand edit)
    proc = snakemake(workdir, "data", "-n", "--configfile", str(cfg), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{plan.relative_to(workdir)}: not a readable plan (JSONDecodeError" in out
    assert "JSONDecodeError: Expecting" not in out.replace(": not a readable plan (JSONDecodeError: Expecting", "")
