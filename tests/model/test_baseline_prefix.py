"""The baseline decoder reads the study context (model.context indication / prior_report) as prefix
tokens after BOS (issue 49; docs/model.md, "Study context"): in teacher forcing, in beam search,
in a padded batch as alone, and end to end through `srrg train` and `srrg infer`."""

from __future__ import annotations

import json

import pytest
import torch
from model_fixtures import tiny_generator

from srrg.model.context import IGNORE, prefix_ids
from srrg.model.network import ReportGenerator
from srrg.settings.model import ContextConfig, InferConfig

torch.set_num_threads(1)
TARGETS = ['{"positive": [], "negative": ["pleural effusion"]}', '{"positive": [], "negative": []}']
CONTEXTS = ["Indication: cough", "Indication: fall from a ladder, chest pain on the left"]


def prefixed(seed: int = 1, **context: object) -> ReportGenerator:
    """A tiny baseline over the tiny LLM's tokenizer that reads the indication as its prefix."""
    cfg = ContextConfig(**{"indication": True, **context})
    return tiny_generator("baseline", seed=seed, baseline={"vocab": "llm"}, context=cfg, max_target_tokens=96)


def decoder_calls(net: ReportGenerator) -> list[dict[str, torch.Tensor]]:
    """Record the keyword arguments of each forward call of the baseline decoder."""
    calls: list[dict[str, torch.Tensor]] = []
    real = net.decoder.forward
    net.decoder.forward = lambda **kw: calls.append(kw) or real(**kw)
    return calls


def test_the_baseline_prefix_carries_the_indication_before_the_target_and_the_labels_ignore_it() -> None:
    """The decoder input of a study is [BOS | its indication's tokens | its target]: fails if the
    context were dropped (the model would not read it), put after the target, or scored by the
    loss (the model would learn to write indications)."""
    net = prefixed()
    calls = decoder_calls(net)
    net.token_loss(net.image_tokens(torch.randn(2, 3, 32, 32)), TARGETS, contexts=CONTEXTS)
    ids, labels, mask = calls[0]["input_ids"], calls[0]["labels"], calls[0]["attention_mask"]
    tok = net.tokenizer
    bos = net.decoder.config.bos_token_id
    for i, (context, target) in enumerate(zip(CONTEXTS, TARGETS, strict=True)):
        prefix = tok(context, add_special_tokens=False)["input_ids"]
        body = [*tok(target, add_special_tokens=False)["input_ids"], tok.eos_token_id]
        n = 1 + len(prefix) + len(body)
        assert ids[i, :n].tolist() == [bos, *prefix, *body]
        assert labels[i, : 1 + len(prefix)].eq(IGNORE).all() and labels[i, 1 + len(prefix) : n].tolist() == body
        assert labels[i, n:].eq(IGNORE).all() and mask[i].sum() == n


def test_the_loss_of_a_padded_batch_is_the_token_weighted_mean_of_each_study_alone() -> None:
    """The batch loss is the mean over all target tokens of the batch: each study's loss alone
    weighted by its number of target tokens. Fails if the shorter prefix's padding were attended or
    scored, or the labels were shifted against the padded rows."""
    net = prefixed()
    with torch.no_grad():  # values only
        img = net.image_tokens(torch.randn(2, 3, 32, 32))
        both = float(net.token_loss(img, TARGETS, contexts=CONTEXTS))
        each = [float(net.token_loss(img[i : i + 1], TARGETS[i : i + 1], contexts=CONTEXTS[i : i + 1])) for i in (0, 1)]
        counts = [len(net.tokenizer(t, add_special_tokens=False)["input_ids"]) + 1 for t in TARGETS]
        assert both == pytest.approx(sum(c * e for c, e in zip(counts, each, strict=True)) / sum(counts), abs=1e-5)
        other = float(net.token_loss(img[:1], TARGETS[:1], contexts=["Indication: trauma"]))
    assert abs(other - each[0]) > 1e-6  # the prefix is read


def test_generation_of_a_padded_batch_equals_each_study_alone_without_the_prefix() -> None:
    """Beam search from [BOS | prefix], left padded: two studies with prefixes of different lengths
    decode as each does alone, and the returned text is the report only. Fails if padding were
    attended or numbered (the shorter row's positions would shift), or the prefix leaked into the
    report."""
    net = prefixed(seed=2)
    torch.manual_seed(3)
    images = torch.randn(2, 3, 32, 32)
    search = InferConfig(num_beams=2, num_return_sequences=2, max_new_tokens=12, constrained=False)
    together, read = net.generate_with_prompts(images, search, contexts=CONTEXTS)
    alone = [net.generate(images[i : i + 1], search, contexts=CONTEXTS[i : i + 1])[0] for i in (0, 1)]
    assert together == alone and read == CONTEXTS
    assert not any("Indication" in text for texts in together for text in texts)
    assert together != net.generate(images, search, contexts=["Indication: none"] * 2)  # the prefix is read


def test_constrained_generation_after_a_prefix_writes_a_report() -> None:
    """The report grammar starts at the first generated token, not at the prompt: fails if the
    prefix were fed to the grammar (no report could follow) or counted against the budget."""
    net = prefixed(seed=2)
    search = InferConfig(num_beams=2, max_new_tokens=48, constrained=True)
    texts = net.generate(torch.randn(2, 3, 32, 32), search, contexts=CONTEXTS)
    for (text,) in texts:
        assert set(json.loads(text)) == {"positive", "negative"}


def test_the_prefix_is_cut_to_prefix_tokens_and_the_positions_cover_it() -> None:
    """prefix_tokens bounds the prefix and the decoder has positions for BOS + prefix_tokens +
    max_target_tokens (only with a text switch on: test_switches_off_leave_the_weights_unchanged).
    Fails if a long prior report ran past the decoder's last position (an index error mid-run)."""
    net = prefixed(prefix_tokens=5, prior_report=True)
    assert net.decoder.config.n_positions == 1 + 5 + 96
    assert prefixed().decoder.config.n_positions == 1 + 256 + 96
    assert tiny_generator("baseline", baseline={"vocab": "llm"}, max_target_tokens=96).decoder.config.n_positions == 97
    calls = decoder_calls(net)
    long = "Indication: none\nPrior report: " + "unchanged " * 400
    net.token_loss(net.image_tokens(torch.randn(1, 3, 32, 32)), TARGETS[:1], contexts=[long])
    body = len(net.tokenizer(TARGETS[0], add_special_tokens=False)["input_ids"]) + 1
    assert calls[0]["input_ids"].shape[1] == 1 + 5 + body


def test_a_word_vocabulary_reads_unknown_context_words_as_its_unknown_token() -> None:
    """The word vocabulary holds the training targets' pieces: a context word outside it is read as
    <unk> (documented), never dropped or an error."""
    net = tiny_generator(
        "baseline", vocab=["<pad>", "<unk>", "<bos>", "<eos>", " effusion", ":"], context=ContextConfig(indication=True)
    )
    unk = net.tokenizer.unk_token_id
    assert prefix_ids(net.tokenizer, ["Indication: effusion"], 8) == [[unk, 5, 4]]


def test_a_baseline_with_the_indication_trains_and_predicts_end_to_end(tmp_path, monkeypatch) -> None:
    """train.model.context.indication reaches the baseline decoder in training and inference: 2
    steps on the toy dataset, predictions with each study's context. Fails if the workflow still
    refused the switch, a step dropped the batch's contexts (the model refuses to run without them)
    or the predictions hid what the model read."""
    import polars as pl
    from model_fixtures import tiny_train_config, write_toy_dataset

    from srrg.config import stage_config
    from srrg.model.infer import run_infer
    from srrg.model.train import run_train
    from srrg.settings.model import TrainConfig

    ds = write_toy_dataset(tmp_path / "ds", context=True)
    raw = tiny_train_config()
    raw["model"].update(arch="baseline", context={"indication": True, "prefix_tokens": 16})
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    seen: list[list[str] | None] = []
    real = ReportGenerator.token_loss

    def spy(self, img, targets, mask_img=None, contexts=None):
        seen.append(contexts)
        return real(self, img, targets, mask_img, contexts)

    monkeypatch.setattr(ReportGenerator, "token_loss", spy)
    summary = run_train(ds, tmp_path / "m.pt", stage_config(raw, TrainConfig, "train"), "ind")
    assert summary["steps"] == 2 and None not in seen
    assert "Indication: cough 0" in [c for batch in seen for c in batch]
    blob = torch.load(tmp_path / "m.pt", weights_only=False)
    assert blob["model_config"]["context"]["indication"] is True
    out = tmp_path / "preds.parquet"
    result = run_infer(tmp_path / "m.pt", ds, out, None, InferConfig(num_beams=2, max_new_tokens=48))
    preds = pl.read_parquet(out)
    assert preds["context"].to_list() == ["Indication: cough 0", "Indication: none", "Indication: cough 2"]
    assert result["context"] == {"samples": 3, "indication_none": 1}


def test_rl_refuses_a_baseline_that_reads_a_prefix(tmp_path) -> None:
    """srrg rl samples from [BOS] alone: fine-tuning a baseline trained with a prefix would train it
    on inputs it never reads at inference. Fails if the refusal covered only the LLM's prompt."""
    from model_fixtures import write_toy_dataset

    from srrg.errors import UserError
    from srrg.model.file import save_model
    from srrg.model.rl import run_rl
    from srrg.settings.rl import RLConfig

    path = tmp_path / "model.pt"
    save_model(path, prefixed(), {"images": "phantom"}, {})
    with pytest.raises(UserError, match="baseline decoder's prefix"):
        run_rl(write_toy_dataset(tmp_path / "data"), path, tmp_path / "rl.pt", RLConfig())
