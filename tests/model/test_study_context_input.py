"""Study context as model input (issue 49, train.model.context): the indication and prior report
in the prompt / baseline prefix, several views with view embeddings and masked padding, and a
model with every switch off unchanged."""

from __future__ import annotations

import dataclasses

import torch
from model_fixtures import tiny_generator, tiny_model_config

from srrg.model.context import (
    IGNORE,
    ViewEmbedding,
    context_prompt,
    context_text,
    encode_views,
    prefix_ids,
    prefixed_inputs,
    study_views,
)
from srrg.model.llm import load_tokenizer
from srrg.model.prompt import build_prompt
from srrg.settings.model import ContextConfig

ROW = {"indication": "  Cough and fever. ", "findings": "x"}


def test_context_text_lines_and_budget():
    """The switches decide what the model reads; a missing field says 'none' (a first study is
    told apart from a forgotten field); the prior is cut to prior_words."""
    assert context_text(ContextConfig(), ROW, "Old report.") == ""
    assert context_text(ContextConfig(indication=True), ROW) == "Indication: Cough and fever."
    both = ContextConfig(indication=True, prior_report=True, prior_words=3)
    assert context_text(both, ROW, "Small  left effusion, unchanged since before.") == (
        "Indication: Cough and fever.\nPrior report: Small left effusion,"
    )
    assert context_text(both, {}, None) == "Indication: none\nPrior report: none"


def test_the_prompt_carries_the_indication():
    """The LLM must read the indication before the image; with no context the prompt is today's."""
    tok = load_tokenizer(tiny_model_config().llm)
    plain = build_prompt(tok, "json")
    assert context_prompt(tok, "json", "") == plain
    with_ctx = context_prompt(tok, "json", "Indication: cough")
    text = tok.decode(list(with_ctx.prefix_ids))
    assert "Indication: cough" in text and text.index("Indication: cough") < text.index("<Img>")
    assert with_ctx.suffix_ids == plain.suffix_ids


def test_the_baseline_prefix_carries_the_indication_and_is_not_a_target():
    """The baseline decoder reads the context as prefix tokens after BOS; the loss must be on the
    report tokens only, or the model would learn to write indications."""
    tok = load_tokenizer(tiny_model_config().llm)
    prefixes = prefix_ids(tok, ["Indication: cough", ""], max_tokens=8)
    assert tok.decode(prefixes[0]) == "Indication"[:8] and prefixes[1] == []
    ids, mask, labels = prefixed_inputs(1, 0, prefixes, [[5, 6], [7]])
    assert ids[0].tolist() == [1, *prefixes[0], 5, 6] and ids[1].tolist()[:2] == [1, 7]
    assert labels[0].tolist() == [IGNORE] * 9 + [5, 6]
    assert labels[1].tolist() == [IGNORE, 7] + [IGNORE] * 9
    assert mask.sum(1).tolist() == [11, 2]


def test_study_views_frontal_first_never_duplicated():
    paths = ["lat.jpg", "pa.jpg", "pa.jpg", "ap.jpg"]
    views = ["LATERAL", "PA", "PA", "AP"]
    assert study_views(paths, views, 2) == (["pa.jpg", "ap.jpg"], ["PA", "AP"])
    assert study_views(paths, views, 5) == (["pa.jpg", "ap.jpg", "lat.jpg"], ["PA", "AP", "LATERAL"])
    assert study_views(["only.jpg"], ["PA"], 3) == (["only.jpg"], ["PA"])  # fewer: no padding copies


def test_n_views_in_n_encodings_with_view_embeddings_and_masked_padding():
    """N views in -> N encodings, each plus its slot's embedding; a padded slot is never encoded
    (no BatchNorm update, no duplicate) and is zero and masked."""
    torch.manual_seed(0)
    embedding = ViewEmbedding(3, 4)
    calls = []

    def encode(x: torch.Tensor) -> torch.Tensor:
        calls.append(x.shape[0])
        return x.flatten(1)[:, :8].view(x.shape[0], 2, 4)  # 2 tokens of width 4 per image

    images = torch.arange(2 * 3 * 1 * 2 * 4, dtype=torch.float).view(2, 3, 1, 2, 4)
    present = torch.tensor([[True, True, True], [True, False, False]])
    tokens, mask = encode_views(encode, images, present, embedding)
    assert calls == [4]  # the 4 real images, once
    assert tokens.shape == (2, 6, 4) and mask.tolist() == [[1] * 6, [1, 1, 0, 0, 0, 0]]
    for slot in range(3):
        expected = encode(images[0, slot : slot + 1])[0] + embedding.weight[slot]
        assert torch.allclose(tokens[0, 2 * slot : 2 * slot + 2], expected)
    assert torch.equal(tokens[1, 2:], torch.zeros(4, 4))
    assert not torch.allclose(embedding.weight[0], embedding.weight[1])  # slots are told apart


def test_switches_off_leave_the_weights_unchanged():
    """Every switch off must build today's network at the same seed, weight for weight (cached
    results stay valid): no parameter may be created, nor a random number drawn, when off."""
    for arch in ("llm", "baseline"):
        vocab = {"vocab": "llm"}  # the tiny LLM's tokenizer: no training targets needed
        before = tiny_generator(arch, seed=3, baseline=vocab).state_dict()
        cfg = tiny_model_config(arch, vocab)
        assert cfg.context == ContextConfig() and not cfg.context.active
        explicit = dataclasses.replace(cfg, context=ContextConfig(indication=False, prior_report=False, views=1))
        torch.manual_seed(3)
        from srrg.model.network import ReportGenerator

        after = ReportGenerator(explicit).eval().state_dict()
        assert list(before) == list(after)
        assert all(torch.equal(before[k], after[k]) for k in before)


def test_a_switch_not_fed_yet_is_refused(tmp_path):
    """The text switches (and views for the LLM or beside a finding head) are not fed to the
    network yet: they must stop the run at once, not train a model that claims to read them."""
    import pytest

    from srrg.errors import UserError
    from srrg.model.context import check_supported
    from srrg.model.train import run_train
    from srrg.settings.model import TrainConfig

    base = tiny_model_config("baseline")
    check_supported(base)  # all off: fine
    check_supported(dataclasses.replace(base, context=ContextConfig(views=2)))  # views: the baseline reads them
    with pytest.raises(UserError, match=r"train.model.context: indication, views: 2 \(with arch llm"):
        check_supported(tiny_model_config("llm", context=ContextConfig(indication=True, views=2)))
    cfg = TrainConfig()
    cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, context=ContextConfig(prior_report=True)))
    with pytest.raises(UserError, match="prior_report"):
        run_train(tmp_path / "no-dataset", tmp_path / "model.pt", cfg)


def test_baseline_reads_n_views_and_ignores_padding():
    """N views in: the loss reads them with their view embeddings (which get gradients); the
    content of an empty slot changes nothing (masked, never encoded); generation takes the views."""
    net = tiny_generator("baseline", seed=1, baseline={"vocab": "llm"}, context=ContextConfig(views=2))
    assert net.view_embedding is not None and tuple(net.view_embedding.weight.shape) == (2, 32)
    net.train()
    torch.manual_seed(0)
    images = torch.randn(2, 2, 3, 32, 32)
    present = torch.tensor([[True, True], [True, False]])
    target = ['{"positive": [], "negative": []}'] * 2
    net.eval()  # no dropout: two passes comparable
    loss = net.loss(images, target, present)
    other = images.clone()
    other[1, 1] = torch.randn(3, 32, 32) * 5  # the empty slot
    assert torch.equal(net.loss(other, target, present), loss)
    changed = images.clone()
    changed[0, 1] = torch.randn(3, 32, 32)  # a real lateral
    assert not torch.equal(net.loss(changed, target, present), loss)
    loss.backward()
    assert net.view_embedding.weight.grad is not None and net.view_embedding.weight.grad.abs().sum() > 0
    from srrg.settings.model import InferConfig

    texts = net.generate(images, InferConfig(num_beams=2, max_new_tokens=4), present)
    assert len(texts) == 2 and all(len(t) == 1 for t in texts)


def test_views_2_trains_and_predicts_end_to_end(tmp_path):
    """train.model.context.views reaches the data (phantoms per view, padded slots), the network and
    inference; the model file carries the view embedding."""
    from model_fixtures import tiny_train_config, write_toy_dataset

    from srrg.config import stage_config
    from srrg.model.infer import run_infer
    from srrg.model.train import run_train
    from srrg.settings.model import InferConfig, TrainConfig

    ds = write_toy_dataset(tmp_path / "ds")
    raw = tiny_train_config()
    raw["model"].update(arch="baseline", context={"views": 2})
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    summary = run_train(ds, tmp_path / "m.pt", stage_config(raw, TrainConfig, "train"), "v2")
    assert summary["steps"] == 2 and summary["train_loss"] > 0
    blob = torch.load(tmp_path / "m.pt", weights_only=False)
    assert blob["model_config"]["context"]["views"] == 2
    assert any("view_embedding" in k for k in blob["state_dict"])
    out = tmp_path / "preds.parquet"
    run_infer(tmp_path / "m.pt", ds, out, None, InferConfig(num_beams=1, max_new_tokens=48))
    import polars as pl

    assert pl.read_parquet(out).height == 3


def test_the_workflow_pre_check_refuses_a_switch_not_fed_yet():
    """`snakemake -n` must stop before any job, naming the switch, not only `srrg train` later."""
    import pytest
    import yaml
    from paths import REPO

    from srrg.config import ConfigError
    from srrg.config_tree import check_workflow_config

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg.setdefault("train", {}).setdefault("model", {})["context"] = {"indication": True}
    with pytest.raises(ConfigError, match=r"train.model.context: indication is not read"):
        check_workflow_config(cfg)
