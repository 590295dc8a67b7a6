"""Alignment modes (docs/model.md): a frozen or LoRA-tuned LLM, a trained or frozen encoder; the
model file carries exactly the trained tensors plus frozen ones no source gives back."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from model_fixtures import tiny_train_config, write_toy_dataset

import srrg.model.train as train_mod
from srrg.config import ConfigError, stage_config
from srrg.model.file import load_model
from srrg.model.tiny import tiny_llm, tiny_tokenizer
from srrg.settings.model import LoRAConfig, TrainConfig

torch.set_num_threads(1)


def _local_llm(folder: Path) -> str:
    """The tiny random LLM saved as a local model folder: a source it can be reloaded from."""
    torch.manual_seed(7)
    tok = tiny_tokenizer()
    tiny_llm(len(tok), eos_id=tok.eos_token_id).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def _train(tmp: Path, monkeypatch: pytest.MonkeyPatch, llm: dict, encoder: dict) -> tuple[object, Path]:
    """Three steps on the toy set; returns the trained network (captured at save) and the model file."""
    raw = tiny_train_config(max_steps=3)
    raw["model"]["llm"] = llm
    raw["model"]["encoder"].update(encoder)
    raw["optim"] = {"lr": 1e-2}
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    saved = {}
    real_save = train_mod.save_model

    def capture(path, net, data_config, summary):
        saved["net"] = net
        real_save(path, net, data_config, summary)

    monkeypatch.setattr(train_mod, "save_model", capture)
    out = tmp / "run" / "model.pt"
    train_mod.run_train(write_toy_dataset(tmp / "ds"), out, stage_config(raw, TrainConfig, "train"), "r")
    return saved["net"], out


def _outputs(net, images: torch.Tensor) -> torch.Tensor:
    net.eval()
    with torch.no_grad():
        return net.loss(images, ['{"positive": [], "negative": ["pneumothorax"]}'])


def test_lora_run_saves_only_adapters_and_the_visual_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LoRA on a reloadable LLM: the file holds exactly the trained tensors (encoder, projector,
    the adapters' lora_A / lora_B), the LLM's own weights stay as loaded, and the reloaded model
    computes the same loss. Fails if the file carried the frozen LLM, lost an adapter, or if
    training moved a frozen weight."""
    source = _local_llm(tmp_path / "llm")
    net, out = _train(tmp_path, monkeypatch, {"name": source, "tuning": "lora", "lora": {"rank": 2, "alpha": 4}}, {})
    trained = {n for n, p in net.named_parameters() if p.requires_grad}
    saved = set(torch.load(out, weights_only=False)["state_dict"])
    assert saved == trained
    lora = sorted(n for n in saved if n.startswith("llm."))
    # 2 layers x 4 attention projections x (A, B)
    assert len(lora) == 16 and all(".lora_A." in n or ".lora_B." in n for n in lora)
    assert any(n.startswith("encoder.backbone.") for n in saved) and any(n.startswith("projector.") for n in saved)
    reloaded, _ = load_model(out, torch.device("cpu"))
    images = torch.randn(1, 3, 32, 32)
    assert torch.equal(_outputs(net, images), _outputs(reloaded, images))
    # LoRA's B starts at zero: a trained adapter moved away from it, the LLM's own weights did not move
    b = next(p for n, p in net.llm.named_parameters() if n.endswith("q_proj.lora_B.default.weight"))
    assert b.abs().sum() > 0
    w = dict(net.llm.named_parameters())["model.layers.0.self_attn.q_proj.base_layer.weight"]
    torch.manual_seed(7)
    assert torch.equal(w, tiny_llm(len(tiny_tokenizer())).model.layers[0].self_attn.q_proj.weight)


def test_frozen_llm_run_saves_no_llm_weight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper's setting with a reloadable LLM: no `llm.` tensor in the file, the rest all of it.
    Fails if a frozen LLM weight were exported (a 3B file per run) or a trained one dropped."""
    net, out = _train(tmp_path, monkeypatch, {"name": _local_llm(tmp_path / "llm")}, {})
    saved = set(torch.load(out, weights_only=False)["state_dict"])
    assert saved == {n for n, p in net.named_parameters() if p.requires_grad}
    assert not any(n.startswith("llm.") for n in saved)
    reloaded, _ = load_model(out, torch.device("cpu"))
    images = torch.randn(1, 3, 32, 32)
    assert torch.equal(_outputs(net, images), _outputs(reloaded, images))


def test_frozen_random_encoder_travels_but_does_not_train(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R2GenGPT's shallow alignment (encoder and LLM frozen): only the projector and srrg's position
    embedding train; a random backbone cannot be reloaded, so it is in the file unchanged. Fails if
    the frozen backbone trained (gradients or BatchNorm/drop-path in train mode) or were left out."""
    torch.manual_seed(0)
    net, out = _train(tmp_path, monkeypatch, {"name": _local_llm(tmp_path / "llm")}, {"tuning": "frozen"})
    trained = {n for n, p in net.named_parameters() if p.requires_grad}
    assert {n.split(".")[0] for n in trained} == {"encoder", "projector"}
    assert {n for n in trained if n.startswith("encoder.")} == {"encoder.position"}
    state = torch.load(out, weights_only=False)["state_dict"]
    backbone = {n for n in state if n.startswith("encoder.backbone.")}
    assert backbone and not net.encoder.reloadable
    net.train()
    assert not net.encoder.backbone.training and net.projector.training


def test_lora_settings_are_checked() -> None:
    """A rank of 0 or no target module is one config error, not a peft traceback at train time."""
    with pytest.raises(ValueError, match="rank must be >= 1"):
        LoRAConfig(rank=0)
    with pytest.raises(ValueError, match="target_modules must list at least 1"):
        LoRAConfig(target_modules=())
    with pytest.raises(ConfigError, match="model.llm.tuning"):
        stage_config({"model": {"llm": {"tuning": "full"}}}, TrainConfig, "train")
