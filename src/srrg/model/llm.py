"""The causal LLM and its tokenizer of the report generator (hub name, local path, GGUF or builtin
alias), loaded through srrg.causal_lm like the local judge backend; frozen, or frozen with trainable
LoRA adapters (`model.llm.tuning`, docs/model.md)."""

from __future__ import annotations

import logging

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from srrg.causal_lm import ensure_pad_token, load_causal_lm, smollm2_location
from srrg.causal_lm import load_tokenizer as load_tokenizer_from
from srrg.model.tiny import tiny_llm, tiny_tokenizer
from srrg.settings.model import FrozenLLMConfig, LoRAConfig

log = logging.getLogger(__name__)

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_source(cfg: FrozenLLMConfig) -> tuple[str, str | None]:
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


def load_tokenizer(cfg: FrozenLLMConfig) -> PreTrainedTokenizerBase:
    if cfg.name == "tiny":
        return ensure_pad_token(tiny_tokenizer())
    source, gguf = resolve_source(cfg)
    return load_tokenizer_from(source, gguf, cfg.trust_remote_code)


def freeze(model: torch.nn.Module) -> torch.nn.Module:
    """No gradients and eval mode (no dropout) for the whole module."""
    model.requires_grad_(False)
    return model.eval()


def load_llm(cfg: FrozenLLMConfig, tok: PreTrainedTokenizerBase) -> PreTrainedModel:
    """The frozen LLM in the configured dtype (adapters, when configured, are added by tune_llm)."""
    if cfg.name == "tiny":
        return freeze(tiny_llm(len(tok), eos_id=tok.eos_token_id))
    source, gguf = resolve_source(cfg)
    return freeze(load_causal_lm(source, gguf, resolve_dtype(cfg.dtype), cfg.trust_remote_code))


LORA_MARK = "lora_"  # peft names its adapter tensors lora_A / lora_B


def add_lora(model: PreTrainedModel, cfg: LoRAConfig) -> PreTrainedModel:
    """Inject LoRA adapters in place (the model keeps its class, its methods and its weight names;
    the adapters add `lora_A` / `lora_B` below each target Linear) and make only them trainable.
    A target name that matches no module is peft's ValueError, named with the config key."""
    from peft import LoraConfig, inject_adapter_in_model

    peft_cfg = LoraConfig(
        r=cfg.rank, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout, target_modules=list(cfg.target_modules)
    )
    try:
        inject_adapter_in_model(peft_cfg, model)
    except ValueError as exc:
        raise ValueError(f"model.llm.lora.target_modules {list(cfg.target_modules)}: {exc}") from exc
    for name, param in model.named_parameters():
        param.requires_grad_(LORA_MARK in name)
    return model


def tune_llm(model: PreTrainedModel, cfg: FrozenLLMConfig) -> PreTrainedModel:
    """The LLM as `model.llm.tuning` trains it: frozen (no trainable weight) or LoRA adapters."""
    freeze(model)
    return add_lora(model, cfg.lora) if cfg.tuning == "lora" else model


def set_llm_mode(model: PreTrainedModel, training: bool) -> None:
    """A tuned LLM's own layers always run in eval mode (their dropout off, as frozen); only the
    adapters' dropout follows the training flag."""
    model.eval()
    for name, module in model.named_modules():
        if training and name.endswith("lora_dropout"):
            module.train()
