"""model.encoder.init_from naming a run (docs/model.md, "The LLM arm on the embedded default"): the
workflow passes that run's model file and makes the train job wait for it."""

from __future__ import annotations

import pytest
from model_fixtures import TINY_MODEL
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

RUNS = [
    {"name": "base_json", "label": "Baseline", "arch": "baseline", "target": "json", "threads": 2,
     "overrides": {"model": {"finding_loss": 1.0}}},
    {"name": "llm_json", "label": "LLM", "arch": "llm", "target": "json",
     "overrides": {"model": {"encoder": {"init_from": "base_json", "tuning": "frozen"}}}},
]  # fmt: skip
CONFIG = {
    "ingest": {"source": "iu_xray", "limit": 40},
    "dataset": {"rows_per_shard": 20},
    "train": {"runs": RUNS, "model": TINY_MODEL, "trainer": {"max_steps": 1, "accelerator": "cpu"}},
    "infer": {"num_beams": 1, "max_new_tokens": 48, "max_studies": 3},
}


@pytest.mark.slow
def test_a_run_named_in_init_from_is_trained_first_and_its_file_passed(tmp_path) -> None:
    """Catches the run name reaching `srrg train` as it is (a file that does not exist) and the
    LLM run planned without the baseline's train job (it would start before its encoder exists);
    the run's `threads` are its train job's, the other run's the default 1."""
    workdir = copy_workflow(tmp_path / "repo")
    cfg_file = write_config(workdir, CONFIG)
    proc = snakemake(workdir, "-n", "-p", "results/runs/llm_json/model.pt", "--configfile", str(cfg_file))
    assert planned_jobs(proc)["train"] == 2
    assert '"init_from":"results/runs/base_json/model.pt"' in proc.stdout + proc.stderr
    jobs = (proc.stdout + proc.stderr).split("rule train:")[1:]
    threads = {("base_json" if "run=base_json" in job else "llm_json"): "threads: 2" in job for job in jobs}
    assert threads == {"base_json": True, "llm_json": False}
