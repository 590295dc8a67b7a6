"""The image cache in the workflow (docs/model.md, "Image cache"), in a scratch copy of the
repository: with real images (IU X-ray with an image root: the few Open-i PNGs of the shared data)
a run's train job waits for one image_cache job per dataset shard, whose log reads well in a batch
log and whose index accounts for every image; a phantom run plans none."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from model_fixtures import TINY_MODEL
from paths import REPO
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.slow

OPENI = REPO.parent / "shared" / "data" / "iu_xray_images"
CONFIG = {
    "ingest": {"source": "iu_xray", "limit": 12, "iu_xray": {"image_root": str(OPENI)}},
    "dataset": {"rows_per_shard": 100},
    "train": {
        "runs": [{"name": "tiny_json", "label": "Tiny", "arch": "llm", "target": "json"}],
        "model": TINY_MODEL,
        "data": {"max_train_studies": 4, "batch_size": 2},
        "trainer": {"max_steps": 1, "accelerator": "cpu", "devices": 1},
    },
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    if not OPENI.is_dir():
        pytest.skip(f"{OPENI} is absent (the shared Open-i images)")
    workdir = copy_workflow(tmp_path_factory.mktemp("wf-cache") / "repo")
    cfg_file = write_config(workdir, CONFIG)
    snakemake(workdir, "results/dataset/manifest.json", "--configfile", str(cfg_file))
    return workdir, cfg_file


def test_a_real_image_run_waits_for_one_cache_job_per_shard(data):
    """Catches a train job that starts before the cache exists, or a cache planned per split
    instead of per shard (the embedded encoder: 64 px)."""
    workdir, cfg_file = data
    jobs = planned_jobs(snakemake(workdir, "-n", "results/runs/tiny_json/model.pt", "--configfile", str(cfg_file)))
    shards = json.loads((workdir / "results" / "dataset" / "manifest.json").read_text())["files"]
    assert jobs == {"image_cache": len(shards), "train": 1}


def test_a_phantom_run_plans_no_cache(data):
    """Catches a cache job planned for phantoms (the demo must not change)."""
    workdir, _ = data
    phantom = copy.deepcopy(CONFIG)
    phantom["train"]["data"]["images"] = "phantom"
    cfg_file = write_config(workdir, phantom, "phantom-config.yaml")
    jobs = planned_jobs(snakemake(workdir, "-n", "results/runs/tiny_json/model.pt", "--configfile", str(cfg_file)))
    assert jobs == {"train": 1}


def test_cache_jobs_account_for_every_image_in_a_readable_log(data):
    """Catches an image dropped in silence or a log of carriage-return bars: every recorded image
    of the shard has a status (the shared PNGs ok, the rest missing), and the log holds the plain
    progress lines and the summary."""
    workdir, cfg_file = data
    target = "results/dataset/image_cache/64px/train/part-00000.json"
    snakemake(workdir, target, "--configfile", str(cfg_file))
    index = json.loads((workdir / target).read_text())
    statuses = {Path(e["path"]).name: e["status"] for e in index["images"]}
    assert statuses and set(statuses.values()) <= {"ok", "missing"}
    assert all(status == "ok" for name, status in statuses.items() if (OPENI / name).is_file())
    assert sum(index["counts"].values()) == len(index["images"]) == index["shape"][0]
    log = (workdir / "logs" / "image_cache" / "64px-train-00000.log").read_text()
    assert "\r" not in log and "image-cache train/part-00000:" in log and "images/s" in log
