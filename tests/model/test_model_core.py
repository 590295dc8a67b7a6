"""Unit tests of the model pieces: images, encoder tokens, prompt, schedule, network step and search."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from srrg.config import ConfigError, stage_config
from srrg.model.encoder import feature_tokens
from srrg.model.images import ImageError, load_image, phantom_image, placeholder_image, resolve_images, study_image
from srrg.model.llm import ensure_pad_token
from srrg.model.module import cosine_with_warmup, param_groups
from srrg.model.network import ReportGenerator, pad_batch
from srrg.model.prompt import IMAGE_SLOT, build_prompt, prompt_text, target_token_ids
from srrg.model.tiny import tiny_tokenizer
from srrg.model.words import build_vocab, pieces, word_tokenizer
from srrg.settings.model import (
    BaselineConfig,
    EncoderConfig,
    FrozenLLMConfig,
    InferConfig,
    ModelConfig,
    TrainConfig,
    pick_run,
    run_specs,
)

torch.set_num_threads(1)
TINY_ENCODER = EncoderConfig(
    image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4}
)


# the word vocabulary of the baseline: every piece of these texts (min_word_count 1)
TEXTS = ['{"positive": [], "negative": ["pneumothorax"]}', "no", "abc", "de", "ab", "abcdef"]


def tiny_model(arch: str = "llm", target: str = "json") -> ReportGenerator:
    torch.manual_seed(0)
    cfg = ModelConfig(
        arch=arch,
        target=target,
        encoder=TINY_ENCODER,
        llm=FrozenLLMConfig(name="tiny"),
        baseline=BaselineConfig(d_model=32, layers=2, heads=2, dropout=0.0, min_word_count=1),
        max_target_tokens=48,
    )
    return ReportGenerator(cfg, vocab=build_vocab(TEXTS, 1) if arch == "baseline" else None)


def test_cosine_schedule_hand_values() -> None:
    assert cosine_with_warmup(0, 2, 10) == 0.5  # (0 + 1) / 2
    assert cosine_with_warmup(1, 2, 10) == 1.0
    assert cosine_with_warmup(2, 2, 10) == 1.0  # cos(0)
    assert math.isclose(cosine_with_warmup(6, 2, 10), 0.5)  # halfway through the 8 decay steps
    assert math.isclose(cosine_with_warmup(10, 2, 10), 0.0, abs_tol=1e-12)
    assert cosine_with_warmup(0, 0, 4) == 1.0


def test_feature_tokens_layouts() -> None:
    assert feature_tokens(torch.zeros(2, 4, 4, 8), 8).shape == (2, 16, 8)  # Swin NHWC
    assert feature_tokens(torch.zeros(2, 8, 4, 4), 8).shape == (2, 16, 8)  # CNN NCHW
    assert feature_tokens(torch.zeros(2, 5, 8), 8).shape == (2, 5, 8)  # ViT
    with pytest.raises(ValueError, match="unsupported"):
        feature_tokens(torch.zeros(2, 8), 8)


def test_placeholder_is_deterministic_per_study() -> None:
    a, b = placeholder_image("s1", 32), placeholder_image("s1", 32)
    assert a.shape == (3, 32, 32) and torch.equal(a, b)
    assert not torch.equal(a, placeholder_image("s2", 32))
    assert torch.equal(study_image({"study_id": "s1", "image_paths": ["x.png"]}, "placeholder", None, 32), a)


def test_image_switch_resolves_auto_from_what_ingest_recorded() -> None:
    assert resolve_images("auto", None, [["CXR1_IM-0001-1001"], None]) == "phantom"  # ids only: no root recorded
    assert resolve_images("auto", None, [None, ["/data/mimic/files/p10/s1/a.jpg"]]) == "real"  # ingest image_root
    assert resolve_images("auto", "/data/openi", [["CXR1.png"]]) == "real"
    assert [resolve_images(m, None, []) for m in ("real", "phantom", "placeholder")] == [
        "real",
        "phantom",
        "placeholder",
    ]


def test_phantom_input_is_the_rendered_report() -> None:
    row = {"study_id": "s1", "image_paths": ["x.png"], "structured": '{"positive": [], "negative": ["pneumothorax"]}'}
    img = study_image(row, "phantom", None, 32)
    assert img.shape == (3, 32, 32) and torch.equal(img, phantom_image("s1", row["structured"], 32))
    assert not torch.equal(img, placeholder_image("s1", 32))
    with pytest.raises(ValueError, match="study s2"):
        study_image({"study_id": "s2", "structured": None}, "phantom", None, 32)


def test_missing_and_corrupt_images_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="nope.png"):
        load_image(tmp_path / "nope.png", 32)
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(ImageError, match="bad.jpg"):
        load_image(bad, 32)
    with pytest.raises(ImageError, match="study s9"):
        study_image({"study_id": "s9", "image_paths": []}, "real", str(tmp_path), 32)
    with pytest.raises(ImageError, match="s8.png"):  # real images never fall back to anything else
        study_image({"study_id": "s8", "image_paths": ["s8.png"]}, "real", str(tmp_path), 32)
    with pytest.raises(ImageError, match="image_root is not set"):
        study_image({"study_id": "s7", "image_paths": ["s7.png"]}, "real", None, 32)


def test_real_png_loads(shared_data) -> None:
    folder = shared_data("iu_xray_images")
    pngs = sorted(folder.glob("**/*.png"))
    if not pngs:
        pytest.skip(f"{folder} absent")
    img = study_image({"study_id": "x", "image_paths": [pngs[0].name]}, "real", str(pngs[0].parent), 64)
    assert img.shape == (3, 64, 64) and torch.isfinite(img).all()


def test_pad_token_falls_back_to_eos() -> None:
    tok = tiny_tokenizer()
    assert tok.pad_token is None
    assert ensure_pad_token(tok).pad_token_id == tok.eos_token_id


def test_prompt_wraps_image_slot_in_chat_template() -> None:
    tok = ensure_pad_token(tiny_tokenizer())
    text = prompt_text(tok, "json")
    assert text.startswith("<|im_start|>user\n<Img>" + IMAGE_SLOT + "</Img> Generate a structure report")
    assert text.endswith("<|im_start|>assistant\n")
    p = build_prompt(tok, "json")
    assert tok.decode(list(p.prefix_ids)) + IMAGE_SLOT + tok.decode(list(p.suffix_ids)) == text
    assert target_token_ids(tok, ["ab"], 10) == [
        [tok.convert_tokens_to_ids("a"), tok.convert_tokens_to_ids("b"), tok.eos_token_id]
    ]
    assert len(target_token_ids(tok, ["abcdef"], 3)[0]) == 3


def test_param_groups_scale_the_visual_path_only() -> None:
    net = ReportGenerator(
        ModelConfig(arch="baseline", baseline=BaselineConfig(d_model=32, layers=1, heads=2)),
        vocab=build_vocab(['{"positive": [], "negative": []}'] * 3, 3),
    )
    decoder, visual = param_groups(net, 1e-3, 4.0)
    assert decoder["lr"] == 1e-3 and visual["lr"] == 4e-3
    visual_ids = {id(p) for p in visual["params"]}
    assert visual_ids == {id(p) for m in (net.encoder, net.projector) for p in m.parameters()}
    assert len(decoder["params"]) + len(visual["params"]) == len(list(net.parameters()))
    assert not visual_ids & {id(p) for p in decoder["params"]}


def test_pad_batch_masks() -> None:
    ids, mask = pad_batch([[5, 6, 7], [8]], 0, torch.device("cpu"))
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


@pytest.mark.parametrize("arch", ["llm", "baseline"])
def test_forward_backward_trains_encoder_and_projector(arch: str) -> None:
    net = tiny_model(arch).train()
    loss = net.loss(torch.randn(2, 3, 32, 32), ['{"positive": [], "negative": ["pneumothorax"]}', "no"])
    assert torch.isfinite(loss) and loss.item() > 0
    loss.backward()
    assert all(p.grad is not None for p in net.projector.parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in net.encoder.parameters())


def test_llm_stays_frozen_after_a_step() -> None:
    net = tiny_model("llm").train()
    assert not net.llm.training  # eval mode kept while the rest trains
    before = {k: v.clone() for k, v in net.llm.state_dict().items()}
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-2)
    net.loss(torch.randn(2, 3, 32, 32), ["abc", "de"]).backward()
    opt.step()
    assert all(not p.requires_grad and p.grad is None for p in net.llm.parameters())
    assert all(torch.equal(v, net.llm.state_dict()[k]) for k, v in before.items())
    proj_trainable = [p.requires_grad for p in net.projector.parameters()]
    assert all(proj_trainable)


@pytest.mark.parametrize("arch", ["llm", "baseline"])
def test_beam_search_returns_configured_sequences(arch: str) -> None:
    net = tiny_model(arch).eval()
    out = net.generate(torch.randn(3, 3, 32, 32), InferConfig(num_beams=3, num_return_sequences=2, max_new_tokens=5))
    assert len(out) == 3 and all(len(c) == 2 for c in out) and all(isinstance(t, str) for c in out for t in c)
    with pytest.raises(ValueError, match="more than infer.num_beams"):
        net.generate(torch.randn(1, 3, 32, 32), InferConfig(num_beams=2, num_return_sequences=3))


def test_export_round_trip_and_mismatch() -> None:
    net = tiny_model("baseline")
    state = net.export_state_dict()
    other = tiny_model("baseline")
    other.load_exported(state)
    assert all(torch.equal(v, other.state_dict()[k]) for k, v in state.items())
    with pytest.raises(ValueError, match="missing"):
        other.load_exported({k: v for k, v in state.items() if not k.startswith("projector.")})


def test_run_config_merges_overrides() -> None:
    slice_ = {
        "optim": {"lr": 1e-4},
        "runs": [
            {
                "name": "a",
                "label": "A",
                "arch": "baseline",
                "target": "sentences",
                "overrides": {"optim": {"lr": 5e-4}},
            },
            {"name": "b", "label": "B"},
        ],
    }
    cfg = pick_run(slice_, "a")
    assert cfg["optim"]["lr"] == 5e-4 and cfg["model"] == {"arch": "baseline", "target": "sentences"}
    assert "runs" not in cfg and pick_run(slice_, "b")["optim"]["lr"] == 1e-4
    with pytest.raises(ValueError, match="unknown run"):
        pick_run(slice_, "zzz")
    with pytest.raises(ValueError, match="unique"):
        run_specs({"runs": [{"name": "a", "label": "A"}, {"name": "a", "label": "B"}]})
    with pytest.raises(ConfigError, match="model.target"):
        stage_config(pick_run({"runs": [{"name": "a", "label": "A", "target": "xml"}]}, "a"), TrainConfig, "train")
    assert run_specs({}) == []  # the embedded default's runs are written once, in config.yaml


@pytest.mark.parametrize("arch", ["llm", "baseline"])
def test_batched_beam_search_matches_one_by_one(arch: str) -> None:
    """Guard against padding/attention bugs in batched search: each study's beams are independent."""
    net = tiny_model(arch).eval()
    images = torch.randn(3, 3, 32, 32)
    batched = net.generate(images, InferConfig(num_beams=3, num_return_sequences=2, max_new_tokens=12))
    assert batched == [
        net.generate(images[i : i + 1], InferConfig(num_beams=3, num_return_sequences=2, max_new_tokens=12))[0]
        for i in range(3)
    ]


@pytest.mark.parametrize("arch", ["llm", "baseline"])
def test_loss_is_token_mean_over_targets_and_eos_only(arch: str) -> None:
    """Prompt/image positions and right padding carry no loss; every target token and EOS does."""
    net = tiny_model(arch).eval()
    images, targets = torch.randn(2, 3, 32, 32), ["ab", "abcdef"]
    tok, total, count = net.tokenizer, torch.tensor(0.0), 0
    with torch.no_grad():
        for i, text in enumerate(targets):
            ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            img = net.image_tokens(images[i : i + 1])
            if arch == "llm":
                prompt = net._prompt_embeds(img)
                embeds = torch.cat([prompt, net.llm.get_input_embeddings()(torch.tensor([ids]))], dim=1)
                p = prompt.shape[1]
                logits = net.llm(inputs_embeds=embeds).logits[0, p - 1 : p - 1 + len(ids)]
            else:
                inp = torch.tensor([[net.decoder.config.bos_token_id, *ids]])
                logits = net.decoder(input_ids=inp, encoder_hidden_states=img).logits[0, : len(ids)]
            total += torch.nn.functional.cross_entropy(logits, torch.tensor(ids), reduction="sum")
            count += len(ids)
        assert net.loss(images, targets).item() == pytest.approx((total / count).item(), rel=1e-5)


def test_word_vocabulary_threshold_and_exact_round_trip() -> None:
    target = (
        '{"positive": [{"name": "pleural effusion", "probability": 3, "level": null, "location": null}], "negative": '
        "[]}"
    )
    assert pieces(target) == [
        '{"positive": [{"',
        'name": "',
        "pleural",
        " effusion",
        '", "probability": ',
        "3",
        ', "level": ',
        "null",
        ', "location": ',
        "null",
        '}], "negative": []}',
    ]
    vocab = build_vocab([target, target, "there is a mass."], 2)
    assert vocab[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"] and " mass" not in vocab and "null" in vocab
    tok = word_tokenizer(vocab)
    ids = tok(target, add_special_tokens=False)["input_ids"]
    assert len(ids) == 11 and tok.decode(ids) == target  # decoding is concatenation
    assert tok.convert_ids_to_tokens(tok("a mass", add_special_tokens=False)["input_ids"]) == ["<unk>", "<unk>"]
    with pytest.raises(ValueError, match="needs the vocabulary"):
        ReportGenerator(ModelConfig(arch="baseline", encoder=TINY_ENCODER, llm=FrozenLLMConfig(name="tiny")))
