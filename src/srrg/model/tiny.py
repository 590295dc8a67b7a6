"""A tiny random causal LM with a character-level tokenizer, built from configs in milliseconds.

It makes the whole training and inference path testable offline (no hub download, no weights) and
is the LLM of the GPU benchmark's `--tiny` smoke mode.
"""

from __future__ import annotations

import string

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SPECIALS = ("<unk>", "<|im_start|>", "<|im_end|>")
# ChatML, as SmolLM2 and Qwen use, so the tiny model exercises the same prompt path.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """One token per printable ASCII character plus ChatML specials (no pad token set on purpose:
    the loader must handle tokenizers without one)."""
    chars = [c for c in string.printable if c not in "\x0b\x0c"]
    vocab = {tok: i for i, tok in enumerate([*SPECIALS, *chars])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


# the `tiny` LLM's shape: a width of 32, 2 layers of 2 heads
TINY_HIDDEN, TINY_LAYERS, TINY_HEADS = 32, 2, 2


def tiny_llm(vocab_size: int, eos_id: int = 2) -> LlamaForCausalLM:
    """A randomly initialized Llama of the tiny shape; deterministic under torch.manual_seed."""
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=TINY_HIDDEN,
        intermediate_size=2 * TINY_HIDDEN,
        num_hidden_layers=TINY_LAYERS,
        num_attention_heads=TINY_HEADS,
        num_key_value_heads=TINY_HEADS,
        max_position_embeddings=2048,
        bos_token_id=1,
        eos_token_id=eos_id,
    )
    return LlamaForCausalLM(cfg)
