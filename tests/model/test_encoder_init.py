"""model.encoder.init_from (docs/model.md, "Encoder warm start"): a run's encoder starts from the
encoder of another run's model file, and only the encoder."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

from srrg.config import stage_config
from srrg.model.file import read_blob, save_model
from srrg.model.infer import run_infer
from srrg.model.module import ReportModule
from srrg.model.network import ReportGenerator
from srrg.model.train import run_train
from srrg.settings.model import (
    EncoderConfig,
    FrozenLLMConfig,
    InferConfig,
    ModelConfig,
    OptimConfig,
    TrainConfig,
    deep_merge,
)

torch.set_num_threads(1)
ENC = EncoderConfig(
    name="swin_tiny_patch4_window7_224",
    image_size=32,
    kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4},
)
CFG = ModelConfig(encoder=ENC, llm=FrozenLLMConfig(name="tiny"), max_target_tokens=16)


def trained_file(tmp_path, cfg: ModelConfig = CFG):
    """A model file whose encoder differs from any fresh one (weights moved by hand)."""
    torch.manual_seed(1)
    net = ReportGenerator(cfg)
    with torch.no_grad():
        for p in net.encoder.parameters():
            p.add_(0.5)
    path = tmp_path / "source.pt"
    save_model(path, net, {}, {})
    return path, net


def test_init_from_copies_the_encoder_and_nothing_else(tmp_path) -> None:
    """Fails if the encoder (backbone and position embedding) were not loaded, or if the
    projector (whose width belongs to the source's decoder) were copied too."""
    path, source = trained_file(tmp_path)
    torch.manual_seed(2)
    cfg = replace(CFG, encoder=replace(ENC, init_from=str(path)))
    module = ReportModule(asdict(cfg), asdict(OptimConfig()))
    for name, value in source.encoder.state_dict().items():
        assert torch.equal(module.net.encoder.state_dict()[name], value), name
    assert not torch.equal(module.net.projector.net[0].weight, source.projector.net[0].weight)


def test_init_from_another_encoder_is_an_error_naming_the_file(tmp_path) -> None:
    """Fails if an encoder of another image size (another position embedding) loaded silently
    or stopped with a bare state_dict traceback instead of naming the option and the file."""
    path, _ = trained_file(tmp_path, replace(CFG, encoder=replace(ENC, image_size=64)))
    cfg = replace(CFG, encoder=replace(ENC, init_from=str(path)))
    with pytest.raises(ValueError, match=r"init_from .*source\.pt.*image_size"):
        ReportModule(asdict(cfg), asdict(OptimConfig()))


def test_demo_shape_run_trains_from_a_baseline_and_predicts_without_it(tmp_path) -> None:
    """The demo's SmolLM2 run shape end to end on the toy set: a baseline (finding loss) trains,
    an LLM run starts its frozen encoder from that model file with LoRA on the LLM, and its own
    model file predicts after the baseline's file is gone. Fails if the frozen, warm-started
    backbone were left out of the model file (it is no pretrained weight that can be reloaded),
    if inference re-read init_from, or if training moved the frozen encoder."""
    ds = write_toy_dataset(tmp_path / "ds")
    base = deep_merge(tiny_train_config(), {"model": {"arch": "baseline", "finding_loss": 1.0}})
    base["checkpoint_dir"] = str(tmp_path / "ckpt")
    run_train(ds, tmp_path / "base" / "model.pt", stage_config(base, TrainConfig, "train"), "base")
    over = {
        "model": {
            "encoder": {"init_from": str(tmp_path / "base" / "model.pt"), "tuning": "frozen"},
            "llm": {"tuning": "lora"},
        }
    }
    llm = deep_merge(tiny_train_config(), over)
    llm["checkpoint_dir"] = str(tmp_path / "ckpt")
    run_train(ds, tmp_path / "llm" / "model.pt", stage_config(llm, TrainConfig, "train"), "llm")
    source = read_blob(tmp_path / "base" / "model.pt")["state_dict"]
    saved = read_blob(tmp_path / "llm" / "model.pt")["state_dict"]
    backbone = [k for k in source if k.startswith("encoder.backbone.")]
    assert backbone and all(torch.equal(saved[k], source[k]) for k in backbone)
    assert any("lora_" in k for k in saved)
    (tmp_path / "base" / "model.pt").unlink()
    out = tmp_path / "llm" / "pred.parquet"
    summary = run_infer(tmp_path / "llm" / "model.pt", ds, out, None, InferConfig(num_beams=1, max_new_tokens=48))
    assert summary["predicted"] == summary["studies"] > 0
