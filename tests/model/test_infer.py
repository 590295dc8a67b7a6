"""Inference: parse status per prediction, every study accounted for, pairs for scoring."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

import srrg.report as report_mod
from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.model.infer import prediction_fields
from srrg.model.train import run_train
from srrg.settings.model import InferConfig, TrainConfig

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _synonyms(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_report canonicalizes through the packaged vocabulary; without it, identity."""
    try:
        report_mod.default_synonyms()
    except ImportError:
        monkeypatch.setattr(report_mod, "default_synonyms", lambda: {})


def test_prediction_fields_json_statuses() -> None:
    valid = '{"positive": [{"name": "atelectasis", "probability": 2, "level": null, "location": null}], "negative": []}'
    f = prediction_fields(valid, "json")
    assert f["parse_status"] == "valid" and f["sentences"] == "there may be atelectasis."
    assert json.loads(f["structured"])["positive"][0]["name"] == "atelectasis" and f["report"] == f["structured"]
    broken = prediction_fields('{"positive": [], "negative": ["pneumothorax"]', "json")
    assert broken["parse_status"] == "repaired" and broken["sentences"] == "no evidence of pneumothorax."
    junk = prediction_fields("lorem ipsum", "json")
    assert junk["parse_status"] == "unparseable" and json.loads(junk["structured"]) == {"positive": [], "negative": []}
    sent = prediction_fields("no evidence of effusion.", "sentences")
    assert sent == {
        "parse_status": None,
        "structured": None,
        "sentences": "no evidence of effusion.",
        "report": "no evidence of effusion.",
    }


@pytest.mark.parametrize("target", ["json", "sentences"])
def test_infer_cli_accounts_for_every_study(tmp_path: Path, target: str) -> None:
    ds = write_toy_dataset(tmp_path / "ds", n_test=4)
    raw = tiny_train_config()
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    raw["model"]["target"] = target
    raw["data"]["views"] = ["PA"]
    run_train(ds, tmp_path / "model.pt", stage_config(raw, TrainConfig, "train"), target)
    cfg = json.dumps({"num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 48, "batch_size": 3})
    rc = srrg_main(
        [
            "infer",
            "--model",
            str(tmp_path / "model.pt"),
            "--dataset",
            str(ds),
            "--out",
            str(tmp_path / "p.parquet"),
            "--pairs",
            str(tmp_path / "pairs.parquet"),
            "--config",
            cfg,
        ]
    )
    assert rc == 0
    preds = pl.read_parquet(tmp_path / "p.parquet")
    assert preds["study_id"].to_list() == ["te000", "te001", "te002", "te003"]
    # views of the toy set: LATERAL for i % 3 == 0
    assert preds["infer_status"].to_list() == ["view_filtered", "ok", "ok", "view_filtered"]
    assert preds["images"].to_list() == ["phantom"] * 4  # the resolved image source travels with the model
    ok = preds.filter(pl.col("infer_status") == "ok")
    assert all(len(c) == 2 for c in ok["candidates"].to_list()) and ok["raw"].null_count() == 0
    if target == "json":
        assert set(ok["parse_status"].to_list()) <= {"valid", "repaired", "unparseable"}
        assert ok["reference"][0].startswith("{")
    else:
        assert ok["parse_status"].null_count() == ok.height and not ok["reference"][0].startswith("{")
    pairs = pl.read_parquet(tmp_path / "pairs.parquet")
    assert pairs.columns == ["study_id", "reference", "report", "raw"] and pairs["study_id"].to_list() == [
        "te001",
        "te002",
    ]


def test_infer_rejects_unknown_config_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = srrg_main(
        ["infer", "--model", "m.pt", "--dataset", str(tmp_path), "--out", "p.parquet", "--config", '{"beams": 3}']
    )
    assert rc == 2 and "beams" in capsys.readouterr().err
    assert stage_config({}, InferConfig, "infer") == InferConfig()


@pytest.mark.parametrize("content", [b"RBADPICKLE\x00\x01", b"", "dict"])
def test_a_file_that_is_no_model_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: object
) -> None:
    """A truncated or foreign model file stops infer with one line naming the file, never a traceback."""
    model = tmp_path / "model.pt"
    if content == "dict":
        torch.save({"weights": torch.zeros(1)}, model)  # a torch file, but not one srrg train wrote
    else:
        model.write_bytes(content)
    ds = write_toy_dataset(tmp_path / "ds")
    rc = srrg_main(["infer", "--model", str(model), "--dataset", str(ds), "--out", str(tmp_path / "p.parquet")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1 and str(model) in err
    assert not (tmp_path / "p.parquet").exists()
