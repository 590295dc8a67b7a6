"""benchmarks/paper_shape_step.py at a reduced shape: the code that ran once at full size (Swin-base
224 + Qwen2.5-3B dimensions, bf16, checkpointing) builds, steps and beam-searches on CPU."""

from __future__ import annotations

import sys

import pytest
from paths import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))
import paper_shape_step as paper  # noqa: E402


@pytest.mark.slow
def test_reduced_shape_step_and_generation() -> None:
    """One optimizer step through the frozen bf16 LLM trains only the visual path, and the
    3-beam generation gives exactly the requested tokens. Fails if a weight were built in fp32,
    the frozen LLM had trainable weights, checkpointing broke the backward, or generation stopped early."""
    out = paper.run(reduced=True, new_tokens=8, beams=3)
    assert out["dtype"] == "bfloat16" and out["generated_tokens"] == 8 and out["loss"] > 0
    assert out["params"]["frozen"] > 0 and out["params"]["trainable"] > 0
    assert out["peak_rss_gb"]["generate"] >= out["peak_rss_gb"]["built"] > 0


def test_build_makes_every_weight_bf16() -> None:
    """No fp32 copy: every parameter of the reduced model is created in bf16, and the LLM is frozen
    with checkpointing on. Fails if the default dtype were not set while building."""
    import torch

    net = paper.build(reduced=True)
    assert {p.dtype for p in net.parameters()} == {torch.bfloat16}
    assert not any(p.requires_grad for p in net.llm.parameters())
    assert net.llm.is_activation_checkpointing and torch.get_default_dtype() == torch.float32
