"""Memorization: each architecture learns 8 distinct phantom studies by heart, and cannot when all
8 get the same image. Together this shows that gradients flow from the image through encoder ->
projector -> decoder, that loss masking and beam search agree, and that outputs parse.

What is asserted holds on any CPU's floating-point path (issue 38: an exact 8 of 8 came out 7 of 8
on another CPU): the loss falls, the distinct images reach at least DISTINCT of 8 while the
same-image control can reach at most one (one image, one output), and the frozen LLM's weights
stay bit-identical. Measured on this project's 2-core machine: 8 of 8 distinct, 1 (baseline) and
0 (frozen LLM) of 8 for the control, loss 3.7 -> 0.007 (baseline) and 2.3 -> 0.009 (LLM) on the
distinct images; the baseline's numbers are the same with 2 torch threads. DISTINCT leaves two
studies of margin for another CPU's floating-point path."""

from __future__ import annotations

import pytest
import torch

from srrg.model.images import phantom_image
from srrg.model.network import ReportGenerator
from srrg.model.words import build_vocab
from srrg.report import Finding, StructuredReport, parse_report, render_sentences
from srrg.settings.model import BaselineConfig, EncoderConfig, FrozenLLMConfig, InferConfig, ModelConfig

torch.set_num_threads(1)
ENCODER = EncoderConfig(
    image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4}
)
REPORTS = [
    StructuredReport((), ("pneumothorax",)),
    StructuredReport((Finding("cardiomegaly", 3, "mild", None),), ()),
    StructuredReport((Finding("pleural effusion", 3, "small", "in the right lung"),), ()),
    StructuredReport((Finding("nodule", 3, None, "in the left lung"),), ()),
    StructuredReport((Finding("atelectasis", 2, None, None),), ("pneumothorax",)),
    StructuredReport((Finding("pneumothorax", 3, "large", None),), ()),
    StructuredReport((Finding("edema", 3, "mild", None),), ()),
    StructuredReport((Finding("support devices", 3, None, None),), ()),
]


def phantoms(same: bool) -> torch.Tensor:
    """The 8 studies' phantoms, or 8 copies of the first study's phantom (the control)."""
    return torch.stack(
        [phantom_image(f"s{0 if same else i}", REPORTS[0 if same else i].to_json(), 32) for i in range(8)]
    )


DISTINCT = 6  # memorized of 8 distinct phantoms, at least (a bug in the image path gives <= 1)
CONTROL = 1  # memorized of 8 when all get one image, at most: one input, one output


def fit(net: ReportGenerator, images: torch.Tensor, targets: list[str], steps: int, lr: float) -> tuple[float, float]:
    """Full-batch AdamW on the trainable parameters; returns the first and the last loss."""
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    losses = []
    for _ in range(steps):
        loss = net.loss(images, targets)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss.detach()))
    return losses[0], losses[-1]


def check(same: bool, got: int, first: float, last: float) -> None:
    """The loss fell (by half at least; measured: fourfold or more); distinct images are learned nearly
    by heart (loss < 0.1, measured < 0.01) and at least DISTINCT of 8 come back exactly; the
    control gets at most CONTROL."""
    assert last < first / 2, f"loss {first:.3f} -> {last:.3f}"
    if same:
        assert got <= CONTROL, f"{got} of 8 memorized from one image"
    else:
        assert last < 0.1 and got >= DISTINCT, f"{got} of 8 memorized, loss {first:.3f} -> {last:.3f}"


def memorized(net: ReportGenerator, images: torch.Tensor, targets: list[str]) -> int:
    outputs = net.eval().generate(images, InferConfig(num_beams=3, max_new_tokens=160))
    return sum(out[0] == t for out, t in zip(outputs, targets))


def baseline(targets: list[str]) -> ReportGenerator:
    torch.manual_seed(0)
    cfg = ModelConfig(
        arch="baseline",
        encoder=ENCODER,
        max_target_tokens=64,
        baseline=BaselineConfig(d_model=64, layers=2, heads=2, dropout=0.0, min_word_count=1),
    )
    return ReportGenerator(cfg, vocab=build_vocab(targets, 1))


@pytest.mark.parametrize("same", [False, True])
def test_baseline_memorizes_distinct_phantoms_only(same: bool) -> None:
    targets = [r.to_json() for r in REPORTS]
    net = baseline(targets)
    first, last = fit(net, phantoms(same), targets, steps=150, lr=3e-3)
    check(same, memorized(net, phantoms(same), targets), first, last)
    if not same:
        assert all(parse_report(t)[1] == "valid" for t in targets)


def pretrained_tiny_llm(targets: list[str], steps: int) -> ReportGenerator:
    """The llm arch with the `tiny` LLM, first trained as a language model of the 8 reports (each
    after its own code character in the image slot, blurred by noise so that nearby prefixes work
    too), then frozen: a random LLM knows no language a visual prefix could steer, a pretrained one
    does, as real frozen LLMs do."""
    torch.manual_seed(0)
    net = ReportGenerator(
        ModelConfig(
            arch="llm", target="sentences", encoder=ENCODER, llm=FrozenLLMConfig(name="tiny"), max_target_tokens=64
        )
    )
    assert net.llm is not None
    embed = net.llm.get_input_embeddings()
    codes = torch.tensor(net.tokenizer.convert_tokens_to_ids(list("ABCDEFGH")))
    slots = net.image_tokens(torch.zeros(1, 3, 32, 32)).shape[1]
    net.llm.requires_grad_(True)
    opt = torch.optim.AdamW(net.llm.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(steps):
        prefix = embed(codes)[:, None, :].expand(-1, slots, -1)
        net.token_loss(prefix + 0.3 * prefix.detach().std() * torch.randn_like(prefix), targets).backward()
        opt.step()
        opt.zero_grad()
    net.llm.requires_grad_(False)
    return net


@pytest.mark.slow
@pytest.mark.parametrize("same", [False, True])
def test_frozen_tiny_llm_memorizes_distinct_phantoms_only(same: bool) -> None:
    targets = [render_sentences(r) for r in REPORTS]
    net = pretrained_tiny_llm(targets, steps=250)
    before = {k: v.clone() for k, v in net.llm.state_dict().items()}
    first, last = fit(net, phantoms(same), targets, steps=300, lr=1e-2)
    assert all(torch.equal(v, net.llm.state_dict()[k]) for k, v in before.items())  # the LLM stayed frozen
    check(same, memorized(net, phantoms(same), targets), first, last)
