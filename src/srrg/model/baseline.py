"""The Transformer-decoder baseline: randomly initialized, trained end to end with the encoder.

A GPT-2 style decoder with cross-attention over the projected image tokens; using the transformers
class gives it the same beam search (`generate`) as the LLM path.
"""

from __future__ import annotations

from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerBase

from srrg.settings.model import BaselineConfig


def build_baseline(
    cfg: BaselineConfig, tok: PreTrainedTokenizerBase, max_target_tokens: int, prefix_tokens: int
) -> GPT2LMHeadModel:
    """Vocabulary of `tok` (the word vocabulary, or the LLM tokenizer when baseline.vocab is llm);
    positions for BOS + prefix_tokens (the study's context text, model.context) + max_target_tokens.
    No prefix: the positions, and so the random weights at a seed, are those of a model without
    study text."""
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=1 + prefix_tokens + max_target_tokens,
        n_embd=cfg.d_model,
        n_layer=cfg.layers,
        n_head=cfg.heads,
        resid_pdrop=cfg.dropout,
        embd_pdrop=cfg.dropout,
        attn_pdrop=cfg.dropout,
        add_cross_attention=True,
        bos_token_id=bos,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    return GPT2LMHeadModel(config)
