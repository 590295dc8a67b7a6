"""The `cases` rule in a scratch copy of the workflow on a slice of the IU X-ray default (two tiny
baseline runs, one optimizer step, four test studies): the structured run's page with the other
run as its comparison, `snakemake --report` carries it, and the judged run's page job reads the
judge table (dry run: the judge itself is an LLM stage, tested in test_judge_e2e.py)."""

from __future__ import annotations

import json
import zipfile

import pytest
from test_workflow_model import TINY_MODEL
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.slow

RUNS = [
    {"name": "base_json", "label": "Baseline", "arch": "baseline", "target": "json"},
    {"name": "base_sentences", "label": "Baseline", "arch": "baseline", "target": "sentences"},
]
CONFIG = {
    "ingest": {"source": "iu_xray", "limit": 40},
    "dataset": {"rows_per_shard": 20},
    "train": {
        "runs": RUNS,
        "model": TINY_MODEL,
        "data": {"max_train_studies": 8, "batch_size": 2},
        "trainer": {"max_steps": 1, "accelerator": "cpu", "devices": 1},
    },
    "infer": {"num_beams": 1, "max_new_tokens": 48, "max_studies": 4, "batch_size": 4, "device": "cpu"},
    "score": {"metrics": ["rouge_l", "s_score"]},
    "judge": {"run": "base_sentences", "metrics": [], "extra_metrics": ["rouge_l"], "limit": 2},
}
PAGE = "results/cases/base_json.html"
JUDGED_PAGE = "results/cases/base_sentences.html"


def embedded(path):
    text = path.read_text(encoding="utf-8")
    return json.loads(text.split('<script type="application/json" id="cases-data">', 1)[1].split("</script>", 1)[0])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("wf-cases") / "repo")
    cfg = write_config(workdir, CONFIG)
    snakemake(workdir, PAGE, "--configfile", str(cfg), timeout=1200)
    return workdir, cfg


def test_the_page_holds_the_scored_studies_with_the_other_run_as_comparison(run):
    workdir, _ = run
    page = embedded(workdir / PAGE)
    assert len(page["studies"]) == 4 and page["structured"] and page["images"] == "phantom"
    assert [c["run"] for c in page["compare"]] == ["base_sentences"]
    assert set(page["compare"][0]["studies"]) == {s["id"] for s in page["studies"]}
    assert "s_score" in page["scores"] and "s_score" not in page["compare"][0]["scores"]
    assert page["statuses"][0] == "parse_status"
    assert all(s["img"].startswith("data:image/jpeg;base64,") for s in page["studies"])
    assert all(row[2] in (0, 1, 2, 3) for s in page["studies"] for row in s["f"])
    assert (workdir / "logs" / "cases" / "base_json.log").read_text().startswith("srrg cases: 4 studies of base_json")
    assert list((workdir / ".cache" / "srrg" / "cases" / "thumbnails").rglob("*.txt"))  # drawn once, kept


def test_report_carries_the_page_and_a_complete_run_has_nothing_to_do(run):
    workdir, cfg = run
    snakemake(workdir, "--report", "report.zip", PAGE, "--configfile", str(cfg))
    with zipfile.ZipFile(workdir / "report.zip") as z:
        names = z.namelist()
    assert any(n.endswith("/base_json.html") for n in names), names[:20]
    assert planned_jobs(snakemake(workdir, "-n", PAGE, "--configfile", str(cfg))) == {}


def test_the_judged_runs_page_reads_the_judge_table(run):
    workdir, cfg = run
    proc = snakemake(workdir, "-n", "-p", JUDGED_PAGE, "--configfile", str(cfg))
    command = next(line for line in (proc.stdout + proc.stderr).splitlines() if "-m srrg cases " in line)
    assert "--judge results/judge/base_sentences/per_report.parquet" in command
    assert "--compare base_json results/runs/base_json/predictions.parquet" in command
