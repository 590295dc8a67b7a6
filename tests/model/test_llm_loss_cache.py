"""The LLM loss computed with less work (docs/model.md, CPU step of the LLM run): the prompt prefix
from a cache computed once per batch, and the output layer only where a target token is predicted,
give the LLM's own whole-sequence loss and the same gradients."""

from __future__ import annotations

import pytest
import torch

from srrg.model.network import IGNORE, ReportGenerator, pad_batch
from srrg.model.prompt import target_token_ids
from srrg.settings.model import EncoderConfig, FrozenLLMConfig, ModelConfig

torch.set_num_threads(1)
ENC = EncoderConfig(
    name="swin_tiny_patch4_window7_224",
    image_size=32,
    kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4},
)
TARGETS = ['{"positive": [], "negative": ["pneumothorax"]}', '{"positive": []}']  # unequal: padding


def whole_sequence_loss(net: ReportGenerator, img: torch.Tensor) -> torch.Tensor:
    """The reference: the LLM's own loss over [prefix | image | suffix | target], prompt ignored."""
    ids, mask = pad_batch(target_token_ids(net.tokenizer, TARGETS, 48), net.tokenizer.pad_token_id, img.device)
    prompt = net._prompt_embeds(img)
    ones = torch.ones(prompt.shape[:2], dtype=torch.long)
    labels = torch.cat([torch.full_like(ones, IGNORE), ids.masked_fill(mask == 0, IGNORE)], dim=1)
    embeds = torch.cat([prompt, net.llm.get_input_embeddings()(ids)], dim=1)
    return net.llm(inputs_embeds=embeds, attention_mask=torch.cat([ones, mask], dim=1), labels=labels).loss


@pytest.mark.parametrize("tuning", ["frozen", "lora"])
def test_cached_prefix_and_target_logits_give_the_whole_sequence_loss(tuning: str) -> None:
    """Fails if a target token were predicted from the wrong position (off by one after the
    suffix), padding were counted, the cached prefix were not seen by the later positions, or the
    cache were used with trainable adapters (LoRA: the prefix's keys then depend on the adapters)."""
    torch.manual_seed(0)
    net = ReportGenerator(
        ModelConfig(encoder=ENC, llm=FrozenLLMConfig(name="tiny", tuning=tuning), max_target_tokens=48)
    )
    net.eval()
    if tuning == "lora":  # B starts at zero; move it so the adapters change the prefix's keys
        for name, p in net.llm.named_parameters():
            if "lora_B" in name:
                torch.nn.init.normal_(p, std=0.5)
    img = net.image_tokens(torch.randn(2, 3, 32, 32))
    trainable = [p for p in net.parameters() if p.requires_grad]
    new = net.token_loss(img, TARGETS)
    ref = whole_sequence_loss(net, img)
    assert abs(float(new) - float(ref)) < 1e-4 * abs(float(ref))
    g_new = torch.autograd.grad(new, trainable, retain_graph=True)
    g_ref = torch.autograd.grad(ref, trainable)
    for a, b in zip(g_new, g_ref, strict=True):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-6)


def test_token_pool_averages_grid_cells_by_hand() -> None:
    """A 4 x 4 grid of 0..15 pooled 2 x 2 (row-major): cells {0,1,4,5} -> 2.5, {2,3,6,7} -> 4.5,
    {8,9,12,13} -> 10.5, {10,11,14,15} -> 12.5. Fails if the grid were read column-major or the
    channels were mixed into the grid."""
    from srrg.model.encoder import pool_tokens

    tokens = torch.arange(16.0).reshape(1, 16, 1).repeat(1, 1, 2)
    tokens[..., 1] *= -1
    out = pool_tokens(tokens, 2)
    assert out[0, :, 0].tolist() == [2.5, 4.5, 10.5, 12.5] and out[0, :, 1].tolist() == [-2.5, -4.5, -10.5, -12.5]
    assert pool_tokens(tokens, 1) is tokens


def test_token_pool_shortens_the_llm_sequence() -> None:
    """encoder.token_pool 2 on the 32 px tiny Swin: 16 visual tokens -> 4 (and a position embedding
    per pooled token); a grid side that k does not divide is one clear error."""
    from srrg.model.encoder import ImageEncoder

    full, pooled = ImageEncoder(ENC), ImageEncoder(EncoderConfig(**{**ENC.__dict__, "token_pool": 2}))
    images = torch.randn(1, 3, 32, 32)
    assert full(images).shape[1] == 16 and pooled(images).shape[1] == 4 and pooled.position.shape[1] == 4
    with pytest.raises(ValueError, match="token_pool 3"):
        ImageEncoder(EncoderConfig(**{**ENC.__dict__, "token_pool": 3}))
