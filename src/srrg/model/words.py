"""The baseline's word-level vocabulary, built from the training targets.

R2Gen-family baselines keep the words seen at least `min_count` times in the training reports; the
rest become <unk>. A few hundred entries instead of a 49k-token LLM vocabulary keep the output layer
(and a CPU step) small. Words keep their leading space, a run of punctuation is one piece, and a
MIMIC-STRUC key with the punctuation around it (`", "probability": `) is one piece, so JSON targets
are about as short as their words; decoding is plain concatenation and round-trips exactly
(docs/model.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
# the keys of the structured report's JSON (docs/model.md)
JSON_KEYS = ("positive", "negative", "name", "probability", "level", "location")
# a key with its quotes, colon and surrounding punctuation; else an optional space and a word or a
# run of punctuation; other whitespace runs stand alone
PIECE = Regex(rf'[^A-Za-z0-9]*(?:{"|".join(JSON_KEYS)})":[^A-Za-z0-9]*| ?[A-Za-z0-9]+| ?[^A-Za-z0-9\s]+|\s+')


def _splitter() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Split(PIECE, behavior="isolated")


def pieces(text: str) -> list[str]:
    """The word-level pieces of a text (what the vocabulary counts)."""
    return [p for p, _ in _splitter().pre_tokenize_str(text)]


def build_vocab(texts: Iterable[str], min_count: int) -> list[str]:
    """Special tokens, then pieces seen >= min_count times, most frequent first (ties by spelling)."""
    counts = Counter(p for t in texts for p in pieces(t))
    kept = sorted((p for p, n in counts.items() if n >= min_count), key=lambda p: (-counts[p], p))
    return [*SPECIALS, *kept]


def word_tokenizer(vocab: list[str]) -> PreTrainedTokenizerFast:
    """A transformers tokenizer over `vocab` (as build_vocab returns it: specials first)."""
    if list(vocab[: len(SPECIALS)]) != list(SPECIALS):
        raise ValueError(f"a word vocabulary starts with {SPECIALS}, got {vocab[:4]}")
    backend = Tokenizer(models.WordLevel({tok: i for i, tok in enumerate(vocab)}, unk_token=UNK))
    backend.pre_tokenizer = _splitter()
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=PAD, unk_token=UNK, bos_token=BOS, eos_token=EOS)
