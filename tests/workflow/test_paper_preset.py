"""The S-RRG paper's runs as one config file (workflow/presets/s-rrg-paper.yaml, README "Run the
paper"): `snakemake -n --profile profiles/slurm --configfile <preset> <paths>` plans every train,
infer and score job of Tables 1-2 with the paper's settings, on the synthetic MIMIC-CXR layout
(tests/fixtures/mimic_cxr_layout.py) standing in for the user's copy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from fixtures.mimic_cxr_layout import build_mimic_fixture
from paths import REPO
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.slow

PRESET = "workflow/presets/s-rrg-paper.yaml"
PAPER_LLMS = {
    "meta-llama/Meta-Llama-3-8B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct",
    "microsoft/Phi-3-mini-4k-instruct",
    "Qwen/Qwen2.5-3B-Instruct",
}
REFERENCE_RUNS = 2  # Constant and Ceiling end Table 1 (srrg.reference_runs), scored like runs


def _commands(text: str, stage: str) -> dict[str, str]:
    """Run name -> the `python -m srrg <stage>` shell command the dry run printed for it."""
    out = {}
    for line in text.splitlines():
        if f"python -m srrg {stage} " in line:
            name = re.search(r"results/runs/([^/]+)/", line)
            assert name, line
            out[name.group(1)] = line
    return out


def _config(command: str) -> dict:
    return json.loads(re.search(r"--config '(\{.*?\})'", command).group(1))


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paper-preset")
    workdir = copy_workflow(tmp / "repo")
    mimic = build_mimic_fixture(tmp / "mimic")
    paths = write_config(workdir, {"ingest": {"mimic_cxr": mimic.config()}}, "mimic-paths.yaml")
    proc = snakemake(workdir, "-n", "--profile", "profiles/slurm", "--configfile", PRESET, str(paths), timeout=600)
    runs = yaml.safe_load((REPO / PRESET).read_text(encoding="utf-8"))["train"]["runs"]
    return workdir, proc.stdout + proc.stderr, planned_jobs(proc), runs


def test_every_table_job_is_planned_once_per_run(dry_run) -> None:
    """Six runs (4 LLMs Structured-First, Qwen2.5-3B Sentence-Direct, the Transformer): one train,
    infer, merge and score job each, the two reference runs scored too, one tables job. Fails if the
    preset lost a run, the profile and preset did not combine, or a Table 1-2 job went unplanned."""
    _, _, jobs, runs = dry_run
    n = len(runs)
    assert n == 6
    assert {k: jobs.get(k) for k in ("train", "infer", "infer_merge", "score", "reference_runs", "tables")} == {
        "train": n,
        "infer": n,
        "infer_merge": n,
        "score": n + REFERENCE_RUNS,
        "reference_runs": 1,
        "tables": 1,
    }
    # Table 2's structured columns: Qwen2.5-3B's two runs, each against its Structured-First run's references
    assert jobs.get("score_structure") == 2
    assert "cases" not in jobs  # the cases pages show studies; per-image runs have none (docs/model.md)


def test_runs_are_the_papers_llms_and_table_2(dry_run) -> None:
    """Each of the four LLMs (real hub names) trains a Structured-First run; Qwen2.5-3B also a
    Sentence-Direct one (Table 2); the baseline is a Transformer. Fails if a hub name or target changed."""
    _, text, _, runs = dry_run
    train = _commands(text, "train")
    assert set(train) == {r["name"] for r in runs}
    llms = {_config(c)["model"]["llm"]["name"] for name, c in train.items() if _config(c)["model"]["arch"] == "llm"}
    assert llms == PAPER_LLMS
    targets = {(_config(c)["model"].get("llm", {}).get("name"), _config(c)["model"]["target"]) for c in train.values()}
    assert {("Qwen/Qwen2.5-3B-Instruct", "json"), ("Qwen/Qwen2.5-3B-Instruct", "sentences")} <= targets
    assert [_config(c)["model"]["arch"] for c in train.values()].count("baseline") == 1


def test_each_job_gets_the_papers_settings(dry_run) -> None:
    """Every train job: pretrained Swin-base-224, batch 8, 3 epochs, lr 1e-4, per-image samples, DDP
    through srun on a GPU node; every infer job: beam 3 over every test image; every score job keys
    its pairs by image (sample_id). Fails if a setting of the preset did not reach the job."""
    _, text, _, _ = dry_run
    for command in _commands(text, "train").values():
        cfg = _config(command)
        swin = {"name": "swin_base_patch4_window7_224", "pretrained": True, "image_size": 224}
        assert cfg["model"]["encoder"] == swin
        assert cfg["data"]["batch_size"] == 8 and cfg["data"]["samples"] == "image"
        assert cfg["trainer"]["max_epochs"] == 3 and cfg["trainer"]["strategy"] == "ddp"
        assert cfg["optim"]["lr"] == pytest.approx(1e-4)
        assert command.removeprefix("Shell command: ").startswith("srun env python -m srrg train")
    infer = _commands(text, "infer")
    assert len(infer) == 6
    for command in infer.values():
        cfg = _config(command)
        assert cfg["samples"] == "image" and cfg["num_beams"] == 3 and cfg["max_studies"] is None
    score = _commands(text, "score")
    assert len(score) == 6 + REFERENCE_RUNS
    assert all("--id-col sample_id" in c for c in score.values())


def test_placeholder_paths_are_named_without_the_users_paths(tmp_path: Path) -> None:
    """The preset alone (its MIMIC-CXR paths are placeholders) stops the dry run naming the
    missing reports file. Fails if a placeholder path silently planned an ingest."""
    workdir = copy_workflow(tmp_path / "repo")
    proc = snakemake(workdir, "-n", "--profile", "profiles/slurm", "--configfile", PRESET, check=False, timeout=600)
    assert proc.returncode != 0
    assert "/path/to/mimic-cxr-2.0.0-split.csv.gz" in proc.stdout + proc.stderr
