"""The finding prompt (model.context.findings, docs/model.md "Finding prompt"): the names the
model's own finding head sees in the image go into the LLM prompt, each study's prompt left padded
to the longest, in training and inference alike."""

from __future__ import annotations

import polars as pl
import pytest
import torch
from model_fixtures import TINY_MODEL, write_toy_dataset

from srrg.errors import UserError
from srrg.model.context import finding_line
from srrg.model.file import save_model
from srrg.model.infer import run_infer
from srrg.model.module import init_encoder
from srrg.model.network import ReportGenerator
from srrg.model.rl import run_rl
from srrg.settings.model import (
    ContextConfig,
    EncoderConfig,
    FrozenLLMConfig,
    InferConfig,
    ModelConfig,
    check_context,
)
from srrg.settings.rl import RLConfig

torch.set_num_threads(1)
ENC = EncoderConfig(**TINY_MODEL["encoder"])
LABELS = ["pleural effusion", "cardiomegaly", "atelectasis"]
TARGET = '{"positive": [], "negative": ["pneumothorax"]}'


def prompted(threshold: float = 0.5, tuning: str = "frozen") -> ReportGenerator:
    torch.manual_seed(0)
    cfg = ModelConfig(
        encoder=ENC,
        llm=FrozenLLMConfig(name="tiny", tuning=tuning),
        max_target_tokens=48,
        finding_loss=1.0,
        context=ContextConfig(findings=True, finding_threshold=threshold),
    )
    return ReportGenerator(cfg, findings=LABELS).eval()


def set_head(net: ReportGenerator, logits: list[float]) -> None:
    """A head that ignores the image: its bias alone decides the probabilities."""
    with torch.no_grad():
        net.finding_head.linear.weight.zero_()
        net.finding_head.linear.bias.copy_(torch.tensor(logits))


def test_finding_line_names_or_none() -> None:
    """Fails if a normal study's line were empty (it must read differently from a missing line)."""
    assert finding_line(["cardiomegaly", "atelectasis"]) == "Findings seen in the image: cardiomegaly, atelectasis"
    assert finding_line([]) == "Findings seen in the image: none"


def test_contexts_name_the_labels_at_or_above_the_threshold_in_head_order() -> None:
    """Probabilities sigmoid(2) = 0.88, sigmoid(-2) = 0.12, sigmoid(0) = 0.5 with threshold 0.5:
    effusion and atelectasis (the boundary included), in the head's order. Fails if the threshold
    were strict, the order were by probability, or a label below it were named."""
    net = prompted()
    set_head(net, [2.0, -2.0, 0.0])
    tokens = net.encoder(torch.randn(2, 3, 32, 32))
    assert net.finding_contexts(tokens) == [finding_line(["pleural effusion", "atelectasis"])] * 2
    set_head(net, [-3.0, -3.0, -3.0])
    assert net.finding_contexts(tokens) == [finding_line([])] * 2


def test_prompts_are_left_padded_so_every_prompt_ends_where_the_report_begins() -> None:
    """Two studies with contexts of different lengths: the shorter row starts with masked padding
    and both rows end with the same suffix embeddings. Fails if padding went to the right (the
    report would then start at different positions)."""
    net = prompted()
    img = net.image_tokens(torch.randn(2, 3, 32, 32))
    short, long = finding_line([]), finding_line(LABELS)
    embeds, mask = net.prompt_inputs(img, [short, long])
    pad = int((mask[0] == 0).sum())
    assert pad > 0 and int((mask[1] == 0).sum()) == 0
    assert mask[0, :pad].eq(0).all() and mask[0, pad:].eq(1).all()
    alone, _ = net.prompt_inputs(img[:1], [short])
    assert torch.equal(embeds[0, pad:], alone[0])


def test_the_loss_of_a_padded_batch_is_the_mean_of_each_study_alone() -> None:
    """Same image and target, contexts of different lengths: the batch loss is the mean of the two
    single-study losses (equal target lengths). Fails if the padded row's positions counted its
    padding (its positions would be shifted) or padding were attended."""
    net = prompted(tuning="lora")
    for name, p in net.llm.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.5)
    img = net.image_tokens(torch.randn(1, 3, 32, 32)).expand(2, -1, -1)
    ctx = [finding_line([]), finding_line(LABELS)]
    both = net.token_loss(img, [TARGET, TARGET], contexts=ctx)
    each = [net.token_loss(img[:1], [TARGET], contexts=[c]) for c in ctx]
    assert abs(float(both) - float(sum(each)) / 2) < 1e-5
    assert abs(float(each[0]) - float(each[1])) > 1e-6  # the context changes the loss


def test_generation_of_a_padded_row_equals_the_row_alone() -> None:
    """Greedy decoding of two studies whose heads name different findings equals decoding each
    alone. Fails if generation ignored the padding mask or the prompts' positions."""
    net = prompted()
    torch.manual_seed(3)
    images = torch.randn(2, 3, 32, 32)
    with torch.no_grad():  # a head that reads the image: study 0 sees more findings than study 1
        net.finding_head.linear.weight.normal_(std=5.0)
    ctx = net.finding_contexts(net.encoder(images))
    assert ctx[0] != ctx[1]
    search = InferConfig(num_beams=1, max_new_tokens=8, constrained=False)
    together = net.generate(images, search)
    assert together == [net.generate(images[i : i + 1], search)[0] for i in range(2)]


def test_a_prompted_model_without_contexts_is_refused() -> None:
    """Fails if a caller that builds the fixed prompt (e.g. the RL sampler) silently dropped the
    finding prompt the model was trained with."""
    net = prompted()
    with pytest.raises(ValueError, match="finding prompt"):
        net.prompt_inputs(net.image_tokens(torch.randn(1, 3, 32, 32)), None)


@pytest.mark.parametrize(("arch", "finding_loss"), [("baseline", 1.0), ("llm", 0.0)])
def test_findings_needs_the_llm_and_a_finding_head(arch: str, finding_loss: float) -> None:
    """Fails if a switch that would be ignored (no head, or a decoder without a prompt) were accepted."""
    cfg = ModelConfig(arch=arch, finding_loss=finding_loss, context=ContextConfig(findings=True))
    with pytest.raises(ValueError, match="findings"):
        check_context(cfg)
    check_context(ModelConfig(arch="llm", finding_loss=1.0, context=ContextConfig(findings=True)))


def test_init_from_brings_the_finding_head_only_over_the_same_labels(tmp_path) -> None:
    """Fails if the head were not copied (the prompt would name a random head's guesses) or were
    copied onto another label set (names would be shifted)."""
    source = prompted()
    set_head(source, [1.0, 2.0, 3.0])
    path = tmp_path / "model.pt"
    save_model(path, source, {"images": "phantom"}, {})
    same = prompted()
    init_encoder(same, str(path))
    assert torch.equal(same.finding_head.linear.bias, source.finding_head.linear.bias)
    other = ReportGenerator(same.cfg, findings=list(reversed(LABELS)))
    before = other.finding_head.linear.bias.clone()
    init_encoder(other, str(path))
    assert torch.equal(other.finding_head.linear.bias, before)


def test_rl_refuses_a_base_model_with_a_per_study_prompt(tmp_path) -> None:
    """srrg rl samples from the shared prompt: fine-tuning a finding-prompted model would train it on
    prompts it never reads at inference. Fails if the refusal were a traceback deep in sampling or
    came after a training step."""
    path = tmp_path / "model.pt"
    save_model(path, prompted(), {"images": "phantom"}, {})
    with pytest.raises(UserError, match="per-study prompt"):
        run_rl(write_toy_dataset(tmp_path / "data"), path, tmp_path / "rl.pt", RLConfig())


def test_predictions_record_the_finding_line_each_study_was_read_with(tmp_path) -> None:
    """The predictions' context column holds the prompt text each prediction was made from. Fails
    if a finding-prompted run left it null (the reader could not tell the head's names from the
    LLM's) or recorded another study's line."""
    net = prompted()
    set_head(net, [2.0, -2.0, 0.0])  # every study: effusion and atelectasis
    path = tmp_path / "model.pt"
    save_model(path, net, {"images": "phantom"}, {})
    out = tmp_path / "preds.parquet"
    run_infer(path, write_toy_dataset(tmp_path / "data"), out, None, InferConfig(num_beams=1, max_new_tokens=48))
    read = pl.read_parquet(out)["context"].to_list()
    assert read == [finding_line(["pleural effusion", "atelectasis"])] * 3
