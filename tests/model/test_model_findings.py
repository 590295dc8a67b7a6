"""The auxiliary finding loss (srrg.model.findings, docs/model.md): labels, targets, the BCE value,
how it enters training, and a trained model that carries its labels through export and inference."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.config import stage_config
from srrg.model.file import load_model
from srrg.model.findings import FindingHead, finding_labels, multi_hot
from srrg.model.network import ReportGenerator
from srrg.model.train import run_train
from srrg.model.words import build_vocab
from srrg.settings.model import EncoderConfig, ModelConfig, TrainConfig

torch.set_num_threads(1)


def test_labels_are_the_positive_names_most_frequent_first() -> None:
    # a name counts once per study; ties are broken by name
    positives = [["edema", "mass"], ["mass", "mass"], ["atelectasis"], [], ["edema", "mass"]]
    assert finding_labels(positives) == ["mass", "edema", "atelectasis"]
    assert finding_labels([]) == []


def test_multi_hot_ignores_unknown_names() -> None:
    y = multi_hot(["mass", "edema"], [["edema"], [], ["mass", "fracture", "edema"]], torch.device("cpu"))
    assert y.tolist() == [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]


def test_head_loss_hand_values() -> None:
    head = FindingHead(2, ["mass", "edema"])
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.copy_(torch.tensor([0.0, math.log(3.0)]))  # p(edema) = 0.75
    tokens = torch.randn(3, 4, 2)  # any tokens: the weights are zero
    # per study: -log 0.5 for mass (always), edema -log 0.75 when present, -log 0.25 when absent
    loss = head.loss(tokens, [["edema"], [], ["mass"]])
    expected = (3 * math.log(2.0) + -math.log(0.75) - 2 * math.log(0.25)) / 6
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    # the mean over tokens feeds the head: a token-order change leaves the logits as they are
    head.linear.weight.data.normal_()
    assert torch.allclose(head(tokens), head(tokens.flip(1)), atol=1e-6)


def _net(weight: float, findings: list[str] | None) -> ReportGenerator:
    torch.manual_seed(0)
    raw = tiny_train_config()["model"]
    raw.update(arch="baseline", finding_loss=weight)
    cfg = stage_config({"model": raw}, TrainConfig, "train").model
    return ReportGenerator(cfg, vocab=build_vocab(['{"positive": [], "negative": []}'], 1), findings=findings)


def test_total_is_report_plus_weighted_finding_loss() -> None:
    images = torch.randn(2, 3, 32, 32)
    targets = ['{"positive": [], "negative": []}'] * 2
    net = _net(0.5, ["mass", "edema"]).eval()
    parts = net.losses(images, targets, [["mass"], []])
    assert parts["report"].item() == pytest.approx(net.loss(images, targets).item(), rel=1e-6)
    assert parts["total"].item() == pytest.approx(parts["report"].item() + 0.5 * parts["findings"].item(), rel=1e-6)
    # the finding loss reaches the encoder (its gradient is what the head is for)
    net.zero_grad()
    parts["findings"].backward()
    assert net.encoder.position.grad is not None and net.encoder.position.grad.abs().sum() > 0
    # without a head: no finding loss, total = report
    plain = _net(0.0, None).eval()
    p = plain.losses(images, targets, [["mass"], []])
    assert "findings" not in p and p["total"] is p["report"] and plain.findings is None


def test_a_weight_without_labels_or_below_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="finding labels"):
        _net(1.0, None)
    with pytest.raises(ValueError, match="finding_loss must be >= 0"):
        ModelConfig(finding_loss=-1.0)


def test_trained_model_carries_its_labels_to_inference(tmp_path: Path) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    raw = tiny_train_config()
    raw["model"].update(arch="baseline", finding_loss=1.0)
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    out = tmp_path / "run" / "model.pt"
    run_train(ds, out, stage_config(raw, TrainConfig, "train"), "f")
    # the toy reports' positives, most frequent first
    net, _ = load_model(out, torch.device("cpu"))
    assert net.findings == ["atelectasis", "cardiomegaly", "pleural effusion"]
    rows = (out.parent / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert all(float(r.split(",")[header.index("finding_loss")]) > 0 for r in rows[1:])


def test_encoder_alias_and_plain_timm_names() -> None:
    # the builtin tiny-swin adds its kwargs; any other name goes to timm with the user's kwargs only
    assert EncoderConfig().timm_spec() == (
        "swin_tiny_patch4_window7_224",
        {"embed_dim": 32, "depths": [2, 2], "num_heads": [2, 4], "window_size": 4},
    )
    assert EncoderConfig(kwargs={"embed_dim": 16}).timm_spec()[1]["embed_dim"] == 16
    assert EncoderConfig(name="swin_base_patch4_window7_224").timm_spec() == ("swin_base_patch4_window7_224", {})
