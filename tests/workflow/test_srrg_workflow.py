"""SRRG end to end in a scratch copy of the repository: `snakemake data` with ingest.source srrg on a
synthetic copy of both datasets in the published layout (all four splits), then a tiny model trained
with target srrg (SRRG organ-header text), its predictions read back and scored with S-Score; and
SRR-BERT on the same pairs, which without the RadEval extra or its weights is an explicit refusal
(docs/inputs.md, "SRRG")."""

from __future__ import annotations

import json

import polars as pl
import pytest
from fixtures.srrg_layout import STUDY_IDS, build_srrg_fixture
from model_fixtures import TINY_MODEL
from workflow_helpers import copy_workflow, snakemake, write_config

from srrg.cli import main
from srrg.srrg_text import looks_srrg

pytestmark = pytest.mark.slow

RUN = "tiny_srrg"
SCORE = f"results/runs/{RUN}/score/summary.csv"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wf-srrg")
    fixture = build_srrg_fixture(tmp / "srrg", missing_image=False)
    workdir = copy_workflow(tmp / "repo")
    cfg = {
        "ingest": {"source": "srrg", "srrg": fixture.config()},
        "dataset": {"rows_per_shard": 4},
        "train": {
            "runs": [{"name": RUN, "label": "Tiny", "arch": "llm", "target": "srrg"}],
            "model": TINY_MODEL,
            "data": {"max_train_studies": 4, "batch_size": 2},
            "trainer": {"max_steps": 1, "accelerator": "cpu", "devices": 1},
        },
        "infer": {"num_beams": 2, "max_new_tokens": 48, "max_studies": 2, "batch_size": 2, "device": "cpu"},
        "score": {"metrics": ["bleu", "s_score"]},
    }
    cfg_file = write_config(workdir, cfg)
    snakemake(workdir, "data", "--configfile", str(cfg_file), timeout=1200)
    snakemake(workdir, SCORE, "--configfile", str(cfg_file), timeout=1200)
    return workdir


def test_the_data_half_accounts_for_every_study(run) -> None:
    """Catches an SRRG study lost between ingest and the dataset, or the organ sections not reaching
    extraction as text it reads."""
    studies = pl.read_parquet(run / "results" / "ingest" / "studies.parquet")
    assert studies["study_id"].to_list() == list(STUDY_IDS)
    manifest = json.loads((run / "results" / "dataset" / "manifest.json").read_text())
    assert manifest["rows"] == len(STUDY_IDS)
    shards = pl.concat([pl.read_parquet(run / "results" / "dataset" / f["path"]) for f in manifest["files"]])
    assert sorted(shards["study_id"]) == list(STUDY_IDS)
    first = shards.filter(pl.col("study_id") == "s0000001").row(0, named=True)
    names = {f["name"] for f in json.loads(first["structured"])["positive"]}
    assert {"atelectasis", "pleural effusion"} <= names


def test_a_tiny_srrg_model_is_trained_and_scored_with_s_score(run, tmp_path, capsys) -> None:
    """Catches the srrg target not rendered as SRRG text for training, its predictions not read back
    (parse_status), or S-Score skipped or refusing the SRRG references."""
    folder = run / "results" / "runs" / RUN
    preds = pl.read_parquet(folder / "predictions.parquet")
    assert preds.height == 2 and set(preds["target"]) == {"srrg"}
    assert set(preds["parse_status"]) <= {"valid", "repaired", "unparseable"}
    assert all(looks_srrg(r) for r in preds["reference"])
    summary = pl.read_csv(folder / "score" / "summary.csv")
    assert {"s_score", "s_score_hyp_valid", "bleu_4"} <= set(summary.columns)
    assert 0.0 <= summary["s_score"][0] <= 1.0
    # SRR-BERT: without the RadEval extra or its hub weights, an explicit one-line refusal, exit 2
    pairs = str(folder / "pairs.parquet")
    argv = ["--refs", pairs, "--ref-col", "reference", "--hyps", pairs, "--hyp-col", "raw"]
    rc = main(["score", *argv, "--metrics", "srrbert", "--out", str(tmp_path / "sc")])
    if rc == 0:  # RadEval and its weights are installed here: the column is there
        assert "srrbert_weighted_f1" in (tmp_path / "sc" / "summary.csv").read_text()
    else:
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert rc == 2 and err[-1].startswith("srrg score: error: srrbert:")
