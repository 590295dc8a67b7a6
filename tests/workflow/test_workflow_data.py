"""The data half of the workflow end to end, in a scratch copy of the repository: a MIMIC-CXR
fixture (invented texts, published layout) and a slice of the IU X-ray default. Checks that a
complete run leaves nothing to do, that only what depends on a change reruns, and that a config
typo stops the run."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from fixtures.mimic_cxr_layout import build_mimic_fixture
from workflow_helpers import copy_workflow, mtimes, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.slow

UPSTREAM = ("ingest", "extract")
DOWNSTREAM_OF_NORMALIZE = {"normalize", "dataset_plan", "dataset_shard", "dataset_manifest", "stats", "data"}


def _config(source: str, tmp: Path) -> dict:
    if source == "mimic_cxr":
        fixture = build_mimic_fixture(tmp / "mimic")
        ingest = {"source": "mimic_cxr", "mimic_cxr": fixture.config()}
    else:
        ingest = {"source": "iu_xray", "limit": 60}
    return {"ingest": ingest, "dataset": {"rows_per_shard": 4 if source == "mimic_cxr" else 20}}


@pytest.fixture(scope="module", params=["mimic_cxr", "iu_xray"])
def run(request, tmp_path_factory):
    """A completed run of the data half (shared by the tests of one source, which run in order)."""
    tmp = tmp_path_factory.mktemp(f"wf-{request.param}")
    workdir = copy_workflow(tmp / "repo")
    cfg = _config(request.param, tmp)
    cfg_file = write_config(workdir, cfg)
    snakemake(workdir, "data", "--configfile", str(cfg_file))
    return request.param, workdir, cfg, cfg_file


def _outputs(workdir: Path) -> dict[str, Path]:
    res = workdir / "results"
    return {
        "ingest": res / "ingest" / "studies.parquet",
        "extract": res / "extract" / "extracted.parquet",
        "normalize": res / "normalize" / "normalized.parquet",
        "manifest": res / "dataset" / "manifest.json",
    }


def test_outputs_account_for_every_study(run):
    source, workdir, _, _ = run
    out = _outputs(workdir)
    studies = pl.read_parquet(out["ingest"])
    manifest = json.loads(out["manifest"].read_text())
    assert manifest["rows"] == studies.height
    shards = pl.concat([pl.read_parquet(workdir / "results" / "dataset" / f["path"]) for f in manifest["files"]])
    assert sorted(shards["study_id"]) == sorted(studies["study_id"])
    assert {"structured", "sentences", "provenance", "ingest_status", "extract_status"} <= set(shards.columns)
    if source == "mimic_cxr":
        assert studies.height == 7 and manifest["splits"]["train"]["shards"] == 1
        assert manifest["statuses"]["ingest_status"]["no_report"] == 1
    else:
        assert studies.height == 60 and manifest["splits"]["train"]["shards"] >= 2
    for name in ("findings", "probability", "severity"):
        assert (workdir / "results" / "stats" / f"{name}.png").stat().st_size > 0
        assert (workdir / "results" / "stats" / f"{name}.csv").exists()
    assert (workdir / "logs" / "ingest.log").read_text().strip().splitlines()[-1].startswith("ingest: studies=")


def test_every_job_wrote_its_benchmark(run):
    """Each job of the data half leaves Snakemake's benchmark TSV under results/benchmarks/<rule>/
    (one per shard job): the numbers docs/workflow.md sizes resources from. Fails when a rule loses
    its `benchmark:` or two jobs share one file."""
    _, workdir, _, _ = run
    bench = workdir / "results" / "benchmarks"
    manifest = json.loads((workdir / "results" / "dataset" / "manifest.json").read_text())
    counts = {rule: 1 for rule in ("ingest", "extract", "normalize", "dataset_plan", "dataset_manifest", "stats")}
    counts["dataset_shard"] = len(manifest["files"])
    assert {d.name: len(list(d.glob("*.tsv"))) for d in bench.iterdir()} == counts
    for tsv in bench.rglob("*.tsv"):
        header, row = tsv.read_text().splitlines()
        columns = dict(zip(header.split("\t"), row.split("\t"), strict=True))
        assert float(columns["s"]) > 0 and "max_rss" in columns, tsv


def test_complete_run_has_nothing_to_do(run):
    _, workdir, _, cfg_file = run
    assert planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg_file))) == {}


def test_normalization_setting_reruns_only_normalize_and_downstream(run):
    _, workdir, cfg, cfg_file = run
    out = _outputs(workdir)
    before = mtimes([out["ingest"], out["extract"]])
    changed = write_config(workdir, {**cfg, "normalize": {"method": "rules", "max_words": 9}}, "changed.yaml")
    jobs = planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(changed)))
    assert "normalize" in jobs and set(jobs) <= DOWNSTREAM_OF_NORMALIZE
    snakemake(workdir, "data", "--configfile", str(changed))
    assert mtimes([out["ingest"], out["extract"]]) == before
    assert planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(changed))) == {}
    # an LLM setting does not matter to the rules normalizer
    llm = write_config(workdir, {**cfg, "normalize": {"max_words": 9}, "llm": {"concurrency": 2}}, "llm.yaml")
    assert planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(llm))) == {}
    snakemake(workdir, "data", "--configfile", str(cfg_file))  # back to the original settings


def test_editing_extraction_code_reruns_extraction_and_downstream(run):
    _, workdir, _, cfg_file = run
    module = workdir / "src" / "srrg" / "extract" / "context.py"
    module.write_text(module.read_text() + "\n# edited by a test\n")
    jobs = planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg_file)))
    assert "extract" in jobs and "ingest" not in jobs
    before = mtimes([_outputs(workdir)["ingest"]])
    snakemake(workdir, "data", "--configfile", str(cfg_file))
    assert mtimes([_outputs(workdir)["ingest"]]) == before


def test_editing_one_stage_module_reruns_only_that_stage_and_its_dependents(run):
    """Code inputs are the import closure of each stage module (srrg.codedeps): a comment in
    stages/stats.py reruns stats alone; one in stages/dataset_manifest.py the manifest and stats."""
    _, workdir, _, cfg_file = run
    stages = workdir / "src" / "srrg" / "stages"
    for module, expected in (("stats.py", {"stats"}), ("dataset_manifest.py", {"dataset_manifest", "stats"})):
        path = stages / module
        path.write_text(path.read_text() + "\n# edited by a test\n")
        jobs = planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg_file)))
        assert set(jobs) - {"data"} == expected, jobs
        snakemake(workdir, "data", "--configfile", str(cfg_file))
    assert planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg_file))) == {}


def test_deleting_one_shard_regenerates_only_its_dependents(run):
    _, workdir, _, cfg_file = run
    out = _outputs(workdir)
    manifest = json.loads(out["manifest"].read_text())
    shard = workdir / "results" / "dataset" / manifest["files"][-1]["path"]
    others = [workdir / "results" / "dataset" / f["path"] for f in manifest["files"][:-1]]
    content = shard.read_bytes()
    before = mtimes([out["ingest"], out["extract"], out["normalize"], *others])
    shard.unlink()
    jobs = planned_jobs(snakemake(workdir, "data", "-n", "--configfile", str(cfg_file)))
    assert jobs == {"dataset_shard": 1, "dataset_manifest": 1, "stats": 1, "data": 1}
    snakemake(workdir, "data", "--configfile", str(cfg_file))
    assert shard.read_bytes() == content
    assert mtimes([out["ingest"], out["extract"], out["normalize"], *others]) == before
    assert json.loads(out["manifest"].read_text()) == manifest


def test_config_typo_fails_validation(run):
    _, workdir, cfg, _ = run
    bad = write_config(workdir, {**cfg, "ingest": {**cfg["ingest"], "limt": 3}}, "typo.yaml")
    proc = snakemake(workdir, "data", "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0
    assert "unknown key ingest.limt" in proc.stderr + proc.stdout
    wrong_type = write_config(workdir, {**cfg, "dataset": {"rows_per_shard": "many"}}, "type.yaml")
    proc = snakemake(workdir, "data", "-n", "--configfile", str(wrong_type), check=False)
    assert (
        proc.returncode != 0 and "dataset.rows_per_shard: 'many' is not of type 'integer'" in proc.stderr + proc.stdout
    )


def test_report_html(run):
    _, workdir, _, cfg_file = run
    snakemake(workdir, "data", "--configfile", str(cfg_file), "--report", "report.html")
    html = (workdir / "report.html").read_text(errors="replace")
    assert "Dataset statistics" in html and "findings.png" in html
