"""model.encoder.init_from (docs/model.md, "Encoder warm start"): a run's encoder starts from the
encoder of another run's model file, and only the encoder."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest
import torch

from srrg.model.file import save_model
from srrg.model.module import ReportModule
from srrg.model.network import ReportGenerator
from srrg.settings.model import EncoderConfig, FrozenLLMConfig, ModelConfig, OptimConfig

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
