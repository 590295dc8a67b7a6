"""The `cases` rule in a scratch copy of the workflow on a slice of the IU X-ray default (two tiny
baseline runs, one optimizer step, four test studies): a page per run with the other run as its
comparison, the judged run's page with the judge table's columns, and `snakemake --report` carries
the pages. The judge stage scores BLEU only here: LLM judges take minutes on CPU (test_judge_e2e.py)."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from contextlib import closing
from pathlib import Path

import pytest
from model_fixtures import TINY_MODEL
from workflow_helpers import copy_workflow, planned_jobs, snakemake, write_config

from srrg.cases import thumbs

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
    "judge": {"run": "base_sentences", "metrics": [], "extra_metrics": ["bleu"], "limit": 2},
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
    snakemake(workdir, PAGE, JUDGED_PAGE, "--configfile", str(cfg), timeout=1200)
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
    cache = workdir / ".cache" / "srrg" / "cases" / "thumbnails" / thumbs.CACHE_FILE
    with closing(sqlite3.connect(cache)) as conn:  # drawn once, kept
        assert conn.execute("SELECT COUNT(*) FROM thumbnails").fetchone()[0] >= 4


def test_report_carries_the_page_and_a_complete_run_has_nothing_to_do(run):
    workdir, cfg = run
    snakemake(workdir, "--report", "report.zip", PAGE, JUDGED_PAGE, "--configfile", str(cfg))
    with zipfile.ZipFile(workdir / "report.zip") as z:
        names = z.namelist()
    assert all(any(n.endswith(f"/{Path(p).name}") for n in names) for p in (PAGE, JUDGED_PAGE)), names[:20]
    assert planned_jobs(snakemake(workdir, "-n", PAGE, JUDGED_PAGE, "--configfile", str(cfg))) == {}


def test_the_judged_runs_page_has_the_judge_columns_and_lists_reference_findings(run):
    workdir, cfg = run
    page = embedded(workdir / JUDGED_PAGE)
    assert not page["structured"] and page["target"] == "sentences"
    assert "rouge_l" in page["scores"] and "bleu_4" in page["scores"]  # bleu_*: the judge table's columns
    judged = [s for s in page["studies"] if s["sc"][page["scores"].index("bleu_4")] is not None]
    assert len(judged) == 2  # judge.limit
    assert all(row[2] == -1 for s in page["studies"] for row in s["f"])  # no structured prediction: not compared
    assert [c["run"] for c in page["compare"]] == ["base_json"]
