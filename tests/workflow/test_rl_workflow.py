"""An RL run in the workflow (docs/model.md, "Reinforcement fine-tuning"): rule rl makes its model
from the run it names, infer/score/tables treat it like any run, and a wrong `rl.from` stops the
workflow before any job starts."""

from __future__ import annotations

import pytest
from model_fixtures import TINY_MODEL
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

from srrg.config import ConfigError
from srrg.config_tree import check_workflow_config
from srrg.settings.model import run_slice

RUNS = [
    {"name": "base_json", "label": "Baseline", "arch": "baseline", "target": "json"},
    {"name": "base_json_rl", "label": "Baseline + RL", "arch": "baseline", "target": "json",
     "rl": {"from": "base_json", "group_size": 2}},
]  # fmt: skip
CONFIG = {
    "ingest": {"source": "iu_xray", "limit": 40},
    "dataset": {"rows_per_shard": 20},
    "train": {"runs": RUNS, "model": TINY_MODEL, "trainer": {"max_steps": 1, "accelerator": "cpu"}},
    "rl": {"batch_size": 2, "trainer": {"max_steps": 1, "accelerator": "cpu"}},
    "infer": {"num_beams": 2, "max_new_tokens": 48, "max_studies": 3},
}


def test_an_rl_run_takes_its_base_runs_slices() -> None:
    """Catches an RL run trained or decoded with the section defaults instead of its base run's
    settings (a model file the RL job could not have produced)."""
    cfg = {"train": {"runs": [{**RUNS[0], "overrides": {"model": {"max_target_tokens": 64}}}, RUNS[1]]},
           "infer": {"max_new_tokens": 64}}  # fmt: skip
    assert run_slice(cfg, "base_json_rl", "train") == run_slice(cfg, "base_json", "train")
    assert run_slice(cfg, "base_json_rl", "train")["model"]["max_target_tokens"] == 64


@pytest.mark.parametrize(
    ("rl", "arch", "message"),
    [
        ({"from": "nope"}, "baseline", "must name another run"),
        ({"from": "base_json"}, "llm", "set arch and target"),
        ({"group_size": 2}, "baseline", "from"),
    ],
)
def test_a_wrong_rl_entry_stops_the_workflow(rl: dict, arch: str, message: str) -> None:
    """Catches an RL run whose starting run is missing or of another architecture being planned."""
    runs = [RUNS[0], {**RUNS[1], "arch": arch, "rl": rl}]
    with pytest.raises(ConfigError, match=message):
        check_workflow_config({"train": {"runs": runs}})


@pytest.mark.slow
def test_the_rl_run_is_planned_from_its_base_run(tmp_path) -> None:
    """Catches rule train claiming the RL run's model file (ambiguous rules) and an RL run missing
    from the tables: one train job, one rl job, two infer jobs."""
    workdir = copy_workflow(tmp_path / "repo")
    cfg_file = write_config(workdir, CONFIG)
    proc = snakemake(workdir, "-n", "results/tables/table1.csv", "--configfile", str(cfg_file), timeout=600)
    jobs = planned_jobs(proc)
    assert jobs["train"] == 1 and jobs["rl"] == 1 and jobs["infer"] == 2 and jobs["tables"] == 1
