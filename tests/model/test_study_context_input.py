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
    place_views,
    prefix_ids,
    prefixed_inputs,
)
from srrg.model.images import study_views
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
    ordered, their_views = study_views(paths, views)
    assert (ordered[:2], their_views[:2]) == (["pa.jpg", "ap.jpg"], ["PA", "AP"])
    assert (ordered[:5], their_views[:5]) == (["pa.jpg", "ap.jpg", "lat.jpg"], ["PA", "AP", "LATERAL"])
    assert study_views(["only.jpg"], ["PA"]) == (["only.jpg"], ["PA"])  # fewer: no padding copies


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
    tokens, mask = place_views(encode(images[present]), present, embedding)
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
    """views for the LLM, and findings for the baseline, are not fed to the network: they must stop
    the run at once, not train a model that claims to read them. Both architectures read indication
    and prior_report, and the baseline reads views with or without a finding head (accepted)."""
    import pytest

    from srrg.errors import UserError
    from srrg.model.context import check_supported
    from srrg.model.train import run_train
    from srrg.settings.model import TrainConfig

    base = tiny_model_config("baseline")
    check_supported(base)  # all off: fine
    check_supported(dataclasses.replace(base, context=ContextConfig(views=2)))  # views: the baseline reads them
    check_supported(dataclasses.replace(base, finding_loss=1.0, context=ContextConfig(views=2)))  # beside a head too
    check_supported(tiny_model_config("llm", context=ContextConfig(indication=True, prior_report=True)))
    check_supported(dataclasses.replace(base, context=ContextConfig(indication=True, prior_report=True, views=2)))
    with pytest.raises(UserError, match=r"train.model.context: views: 2 \(with arch llm"):
        check_supported(tiny_model_config("llm", context=ContextConfig(indication=True, views=2)))
    with pytest.raises(UserError, match=r"train.model.context: findings \(with arch baseline"):
        check_supported(dataclasses.replace(base, context=ContextConfig(findings=True)))
    cfg = TrainConfig()
    context = ContextConfig(findings=True)
    cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, arch="baseline", context=context))
    with pytest.raises(UserError, match=r"findings \(with arch baseline"):
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
    """train.model.context.views reaches the data (phantoms per view, padded slots), the network
    (beside a finding head, which reads every view) and inference; the model file carries the view
    embedding and the finding head."""
    from model_fixtures import tiny_train_config, write_toy_dataset

    from srrg.config import stage_config
    from srrg.model.infer import run_infer
    from srrg.model.train import run_train
    from srrg.settings.model import InferConfig, TrainConfig

    ds = write_toy_dataset(tmp_path / "ds")
    raw = tiny_train_config()
    raw["model"].update(arch="baseline", context={"views": 2}, finding_loss=1.0)
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    summary = run_train(ds, tmp_path / "m.pt", stage_config(raw, TrainConfig, "train"), "v2")
    assert summary["steps"] == 2 and summary["train_loss"] > 0
    blob = torch.load(tmp_path / "m.pt", weights_only=False)
    assert blob["model_config"]["context"]["views"] == 2
    assert any("view_embedding" in k for k in blob["state_dict"])
    assert any("finding_head" in k for k in blob["state_dict"])
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
    cfg.setdefault("train", {}).setdefault("model", {})["context"] = {"findings": True}  # a baseline run too
    with pytest.raises(ConfigError, match=r"train.model.context: findings \(with arch baseline.*is not read"):
        check_workflow_config(cfg)


def test_prompt_texts_put_the_context_before_the_finding_line():
    """One text per study: its context lines, then its finding line; either alone when the other
    is off; None when both are off (the fixed prompt and its prefix cache stay in use)."""
    from srrg.model.context import finding_line, prompt_texts

    line = finding_line(["cardiomegaly"])
    assert prompt_texts(None, None) is None
    assert prompt_texts(["Indication: cough"], None) == ["Indication: cough"]
    assert prompt_texts(None, [line]) == [line]
    assert prompt_texts(["Indication: cough", ""], [line, line]) == [f"Indication: cough\n{line}", line]


def toy_rows(tmp_path, split="train"):
    from model_fixtures import write_toy_dataset

    from srrg.dataset import read_split

    ds = write_toy_dataset(tmp_path / "ds", context=True)
    return ds, read_split(ds, split)


def test_study_contexts_read_the_indication_and_the_prior_reference_and_count_a_missing_prior(tmp_path, caplog):
    """Study 0 is first (prior none), study 1 has no indication and reads study 0's reference
    (the run's target text, cut to prior_words), a study whose prior is not in the split reads
    none and is counted and logged. Fails if a missing prior were silent or read another study."""
    import logging

    from srrg.model.datamodule import reference_text, study_contexts

    _, frame = toy_rows(tmp_path)
    rows = frame.to_dicts()
    rows[3]["prior_study_id"] = "tr999"  # a link to a study the split does not hold
    cfg = ContextConfig(indication=True, prior_report=True, prior_words=1000)
    with caplog.at_level(logging.INFO, logger="srrg.model.datamodule"):
        texts, counts = study_contexts(rows, frame, cfg, "json")
    assert texts[0] == "Indication: cough 0\nPrior report: none"
    assert texts[1] == f"Indication: none\nPrior report: {reference_text(rows[0], 'json')}"
    assert texts[2] == f"Indication: cough 2\nPrior report: {reference_text(rows[1], 'json')}"
    assert texts[3] == "Indication: cough 3\nPrior report: none"
    assert counts == {"samples": 4, "indication_none": 1, "prior": 2, "prior_none": 1, "prior_missing": 1}
    assert "1 of 4 samples link a prior study that is not in the split" in caplog.text
    only = study_contexts(rows[1:2], frame, ContextConfig(prior_report=True, prior_words=2), "json")
    assert only == (["Prior report: " + " ".join(reference_text(rows[0], "json").split()[:2])], {
        "samples": 1, "prior": 1, "prior_none": 0, "prior_missing": 0})  # fmt: skip
    assert study_contexts(rows, frame, ContextConfig(views=2), "json") == (None, {})


def test_switches_off_give_the_same_batches_and_on_adds_contexts(tmp_path):
    """Every text switch off: items and batches are today's (no `contexts` key, same tensors), so
    a run with the switches off trains on the same batches. On: each batch carries its studies'
    context texts in batch order, a validation study's prior read from the validate split."""
    from srrg.model.datamodule import ReportDataModule, collate
    from srrg.settings.model import DataConfig

    ds, _ = toy_rows(tmp_path)

    def first_batch(context, split="train"):
        data = ReportDataModule(ds, DataConfig(batch_size=2, images="placeholder"), "json", 32, 0, None, context)
        data.setup("fit")
        dataset = data.train_set if split == "train" else data.val_set
        return collate([dataset[0], dataset[1]])

    today, off = first_batch(None), first_batch(ContextConfig(findings=True, finding_threshold=0.3))
    assert set(today) == set(off) and "contexts" not in today
    assert torch.equal(today["images"], off["images"]) and today["targets"] == off["targets"]
    on = first_batch(ContextConfig(indication=True))
    assert on["contexts"] == ["Indication: cough 0", "Indication: none"] and torch.equal(on["images"], today["images"])
    val = first_batch(ContextConfig(prior_report=True), "validate")
    assert val["contexts"][0] == "Prior report: none" and val["contexts"][1].startswith('Prior report: {"positive"')


def test_the_llm_loss_reads_each_studys_context_and_refuses_to_run_without_it():
    """The context changes the loss (it is read), a context model given no text is refused (a
    caller that dropped it would predict from a prompt it was not trained with), and the context
    comes before the finding line in one prompt per study."""
    import pytest

    from srrg.model.context import finding_line

    net = tiny_generator("llm", seed=1, context=ContextConfig(indication=True))
    images = torch.randn(2, 3, 32, 32)
    target = ['{"positive": [], "negative": []}'] * 2
    seen = []
    real = net.prompt_inputs
    net.prompt_inputs = lambda img, contexts: seen.append(contexts) or real(img, contexts)
    a = net.loss(images, target, contexts=["Indication: cough", "Indication: none"])
    b = net.loss(images, target, contexts=["Indication: trauma", "Indication: none"])
    assert seen == [["Indication: cough", "Indication: none"], ["Indication: trauma", "Indication: none"]]
    assert not torch.equal(a, b)
    with pytest.raises(ValueError, match="study context"):
        net.loss(images, target)
    net.finding_contexts = lambda tokens: [finding_line([]), finding_line(["cardiomegaly"])]
    seen.clear()
    net.losses(images, target, [[], []], contexts=["Indication: cough", "Indication: none"])
    assert seen == [[f"Indication: cough\n{finding_line([])}", f"Indication: none\n{finding_line(['cardiomegaly'])}"]]
    baseline = tiny_generator("baseline", seed=1, baseline={"vocab": "llm"})
    with pytest.raises(ValueError, match="reads no prompt text"):
        baseline.loss(images, target, contexts=["Indication: cough", "Indication: none"])


def test_indication_and_prior_report_train_and_predict_end_to_end(tmp_path, monkeypatch):
    """train.model.context.indication and prior_report reach the LLM's prompt in training steps,
    validation and inference; the predictions file records each prediction's context and the
    summary counts the priors. Fails if a step dropped the batch's contexts (the prompt would be
    the fixed one) or the predictions hid what the model read."""
    import polars as pl
    from model_fixtures import tiny_train_config

    from srrg.config import stage_config
    from srrg.model.datamodule import reference_text
    from srrg.model.infer import run_infer
    from srrg.model.network import ReportGenerator
    from srrg.model.train import run_train
    from srrg.settings.model import InferConfig, TrainConfig

    ds, train_frame = toy_rows(tmp_path)
    seen: list[str] = []
    real = ReportGenerator.prompt_inputs

    def spy(self, img, contexts):
        seen.extend(contexts or ["<fixed prompt>"])
        return real(self, img, contexts)

    monkeypatch.setattr(ReportGenerator, "prompt_inputs", spy)
    raw = tiny_train_config()
    raw["model"]["context"] = {"indication": True, "prior_report": True}
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    summary = run_train(ds, tmp_path / "m.pt", stage_config(raw, TrainConfig, "train"), "ctx")
    assert summary["steps"] == 2 and "<fixed prompt>" not in seen
    assert summary["context"]["train"] == {
        "samples": 4, "indication_none": 1, "prior": 3, "prior_none": 1, "prior_missing": 0}  # fmt: skip
    prior = reference_text(train_frame.to_dicts()[0], "json")
    assert f"Indication: none\nPrior report: {' '.join(prior.split()[:100])}" in seen  # train study 1
    assert "Indication: cough 0\nPrior report: none" in seen  # a first study
    seen.clear()
    out = tmp_path / "preds.parquet"
    result = run_infer(tmp_path / "m.pt", ds, out, None, InferConfig(num_beams=1, max_new_tokens=48))
    preds = pl.read_parquet(out)
    assert preds["context"].to_list()[0] == "Indication: cough 0\nPrior report: none"
    assert preds["context"].to_list()[1].startswith("Indication: none\nPrior report: {")
    assert seen == preds["context"].to_list()  # each prediction was made from its row's context
    assert result["context"] == {
        "samples": 3, "indication_none": 1, "prior": 2, "prior_none": 1, "prior_missing": 0}  # fmt: skip


def test_each_image_of_a_study_reads_its_studys_context(tmp_path):
    """data.samples / infer.samples image: every image sample of a study reads that study's
    indication and prior (the sample rows keep the study's columns). Fails if a per-image sample
    lost its context or read another study's."""
    from srrg.model.datamodule import image_rows, study_contexts

    _, frame = toy_rows(tmp_path)
    rows = frame.to_dicts()
    study = {**rows[2], "image_paths": ["a.png", "b.png"], "image_views": ["PA", "LATERAL"]}
    samples = image_rows(study)
    cfg = ContextConfig(indication=True, prior_report=True)
    texts, counts = study_contexts(samples, frame, cfg, "json")
    alone, _ = study_contexts([rows[2]], frame, cfg, "json")
    assert len(texts) == 2 and texts[0] == texts[1] == alone[0]
    assert texts[0].startswith("Indication: cough 2\nPrior report: {") and counts["prior"] == 2


def test_a_one_view_model_reads_the_frontal_a_two_view_model_reads_first():
    """Phantom mode: the image of a one-view model (study_image) is slot 0 of a two-view model
    (view_inputs), so the two arms differ only by the lateral; in a study with a lateral the frontal
    leaves out a small effusion, a one-image study keeps render()'s phantom."""
    from srrg.model.context import view_inputs
    from srrg.model.images import phantom_image, study_image
    from srrg.report import Finding, StructuredReport

    effusion = StructuredReport((Finding("pleural effusion", 3, "small", "left base"),), ()).to_json()
    empty = StructuredReport((), ()).to_json()
    row = {"study_id": "s7", "structured": effusion, "image_paths": ["lat.png", "pa.png"], "image_views": ["LL", "PA"]}
    one = study_image(row, "phantom", None, 32)
    two, present = view_inputs(row, "phantom", None, 32, None, 2)
    assert present.tolist() == [True, True] and torch.equal(one, two[0])
    assert torch.equal(one, phantom_image("s7", empty, 32))  # the small effusion: on the lateral only
    assert not torch.equal(two[1], phantom_image("s7", empty, 32, ["PA", "LL"]))
    single = {**row, "image_paths": ["pa.png"], "image_views": ["PA"]}
    assert torch.equal(study_image(single, "phantom", None, 32), phantom_image("s7", effusion, 32))
    assert not torch.equal(study_image(single, "phantom", None, 32), one)


def test_the_finding_head_reads_a_study_as_its_most_telling_view():
    """With several views a study's finding logit is the largest of its present views' (a small
    effusion seen on the lateral only is in the study); a padded slot never counts, and the BCE is
    taken on those study logits (hand-computed)."""
    import math

    from srrg.model.findings import FindingHead

    head = FindingHead(2, ["effusion", "nodule"])
    with torch.no_grad():
        head.linear.weight.copy_(torch.eye(2))
        head.linear.bias.zero_()
    # 3 present views (study 0: frontal, lateral; study 1: frontal), one token each = its logits
    tokens = torch.tensor([[[-2.0, 1.0]], [[3.0, -1.0]], [[0.5, 0.0]]])
    present = torch.tensor([[True, True], [True, False]])
    assert head.study_logits(tokens, present).tolist() == [[3.0, 1.0], [0.5, 0.0]]
    loss = head.loss(tokens, [["effusion"], []], present)

    def bce(x: float, y: float) -> float:
        return -(y * math.log(1 / (1 + math.exp(-x))) + (1 - y) * math.log(1 - 1 / (1 + math.exp(-x))))

    expected = (bce(3.0, 1) + bce(1.0, 0) + bce(0.5, 0) + bce(0.0, 0)) / 4
    assert abs(loss.item() - expected) < 1e-6
    assert torch.equal(head.study_logits(tokens[:1, :, :]), tokens[:1, 0, :])  # one view: its own logits
