"""The visual encoder: any timm backbone, returning a sequence of patch tokens (B, N, C)."""

from __future__ import annotations

import logging
import math

import timm
import torch
from torch import nn

from srrg.config import ConfigError
from srrg.settings.model import ENCODER_ALIASES, EncoderConfig

log = logging.getLogger(__name__)


def check_encoder_name(cfg: EncoderConfig) -> None:
    """An encoder name timm knows (or a builtin alias): checked before any data or weights are
    read, so a typo stops the train job at once. Without torch weights."""
    if cfg.name in ENCODER_ALIASES or timm.is_model(cfg.name):
        return
    close = timm.list_models(f"*{cfg.name.split('_')[0]}*")[:5]
    raise ConfigError(
        f"model.encoder.name {cfg.name!r} is not a timm model or an alias {sorted(ENCODER_ALIASES)}"
        + (f"; similar: {close}" if close else "")
    )


def _create(cfg: EncoderConfig, pretrained: bool) -> nn.Module:
    """Transformers with a fixed grid (Swin, ViT) need img_size; CNNs reject it and take any size."""
    name, extra = cfg.timm_spec()
    kwargs = {"num_classes": 0, **extra}
    try:
        return timm.create_model(name, pretrained=pretrained, img_size=cfg.image_size, **kwargs)
    except TypeError:
        return timm.create_model(name, pretrained=pretrained, **kwargs)


def create_backbone(cfg: EncoderConfig) -> tuple[nn.Module, bool]:
    """Pretrained weights when requested and obtainable (hub or cache), otherwise random init,
    logged; the flag says whether pretrained weights were loaded (they can be loaded again)."""
    if cfg.pretrained:
        try:
            model = _create(cfg, pretrained=True)
            log.info("encoder %s: pretrained weights loaded", cfg.name)
            return model, True
        except (OSError, RuntimeError, ValueError) as exc:
            log.warning("encoder %s: pretrained weights unavailable (%s); using RANDOM initialization", cfg.name, exc)
    else:
        log.info("encoder %s: random initialization (encoder.pretrained is false)", cfg.name)
    return _create(cfg, pretrained=False), False


def feature_tokens(feats: torch.Tensor, dim: int) -> torch.Tensor:
    """(B, N, C) from timm's forward_features: ViT gives (B, N, C), Swin NHWC, CNNs NCHW."""
    if feats.ndim == 3:
        return feats
    if feats.ndim == 4:
        return feats.flatten(1, 2) if feats.shape[-1] == dim else feats.flatten(2).transpose(1, 2)
    raise ValueError(f"unsupported encoder feature shape {tuple(feats.shape)}")


def pool_tokens(tokens: torch.Tensor, k: int) -> torch.Tensor:
    """(B, N, C) tokens of a square grid (row-major, as feature_tokens flattens it) averaged over
    k x k cells: (B, N / k^2, C). Fewer visual tokens make each LLM step shorter (docs/model.md)."""
    if k == 1:
        return tokens
    b, n, c = tokens.shape
    side = math.isqrt(n)
    if side * side != n or side % k:
        raise ValueError(f"model.encoder.token_pool {k} needs a square token grid, side divisible by {k}; got {n}")
    grid = tokens.transpose(1, 2).reshape(b, c, side, side)
    return nn.functional.avg_pool2d(grid, k).flatten(2).transpose(1, 2)


class ImageEncoder(nn.Module):
    """Backbone tokens plus a learned position embedding per token: Swin's last stage has only
    window-relative positions, and a decoder that cross-attends to a bag of tokens could not tell
    the left lung from the right (docs/model.md).

    `tuning: frozen` freezes the backbone (eval mode, no gradients); the position embedding, which
    is srrg's own and starts random, trains either way. A frozen backbone is `reloadable` when its
    weights are pretrained ones (a model file need not carry them)."""

    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        self.backbone, pretrained = create_backbone(cfg)
        self.pool = cfg.token_pool
        self.frozen = cfg.tuning == "frozen"
        self.reloadable = self.frozen and pretrained
        if self.frozen:
            self.backbone.requires_grad_(False)
        self.out_dim = int(self.backbone.num_features)
        with torch.no_grad():
            n = self.tokens(torch.zeros(1, 3, cfg.image_size, cfg.image_size)).shape[1]
        self.position = nn.Parameter(torch.zeros(1, n, self.out_dim))
        nn.init.trunc_normal_(self.position, std=0.02)

    def train(self, mode: bool = True) -> ImageEncoder:
        """A frozen backbone stays in eval mode (BatchNorm statistics and drop-path fixed)."""
        super().train(mode)
        if self.frozen:
            self.backbone.eval()
        return self

    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        return pool_tokens(feature_tokens(self.backbone.forward_features(images), self.out_dim), self.pool)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.tokens(images) + self.position
