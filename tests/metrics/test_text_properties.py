"""Property tests of every text transformation against its written definition, over random text.

Hand-picked strings never contain the characters at the edge of a character class (`:` and `[`
bound the ASCII range R2Gen removes; `-`, `#` and `\\` sit just outside or inside it). Each
reference implementation below is written from the definition in docs/ (docs/metrics.md
"Tokenization", docs/report.md "Spelling"), independently of the code under test.
"""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srrg.metrics.nlg import PTB_PUNCTUATION, clean_r2gen, ptb_tokenize, tokenize
from srrg.text.spelling import CACHE_MAX_CHARS, plain_spelling

# every printable ASCII character, line breaks, and the class edges several times over so that
# Hypothesis draws them often
EDGES = ":;<=>?@[\\]^_`{|}~-#/.'\"()*+,!%&$0123456789 \n\t"
PRINTABLE = st.text(
    alphabet=st.sampled_from([chr(c) for c in range(32, 127)] + list(EDGES * 3) + ["\n", "\t"]), max_size=60
)

# docs/metrics.md: "the characters . , ? ; * ! % ^ & _ + ( ) [ ] { } plus the ASCII range : .. [ removed"
_REMOVED = re.compile(r"[.,?;*!%^&_+()\[\]{}:-\[]")
_NUMBERING = (
    ("1. ", ""),
    (". 2. ", ". "),
    (". 3. ", ". "),
    (". 4. ", ". "),
    (". 5. ", ". "),
    (" 2. ", ". "),
    (" 3. ", ". "),
    (" 4. ", ". "),
    (" 5. ", ". "),
)


def r2gen_reference(text: str) -> str:
    """docs/metrics.md, `r2gen`, step by step (runs collapsed completely: the texts here are short)."""
    if not text.strip():
        return ""
    text = text.replace("\n", " ")
    text = re.sub(r"_+", "_", text)
    text = re.sub(r" +", " ", text)
    text = re.sub(r"\.+", ".", text)
    for old, new in _NUMBERING:
        text = text.replace(old, new)
    sentences = []
    for sentence in text.strip().lower().split(". "):
        for quote in "\"/\\'":
            sentence = sentence.replace(quote, "")
        sentences.append(_REMOVED.sub("", sentence.strip().lower()))
    return " ".join([*" . ".join(sentences).split(), "."])


@settings(max_examples=400, deadline=None)
@given(PRINTABLE)
def test_r2gen_cleaning_follows_its_definition(text):
    assert clean_r2gen(text) == r2gen_reference(text)


@settings(max_examples=200, deadline=None)
@given(PRINTABLE)
def test_r2gen_output_keeps_only_the_allowed_characters(text):
    out = clean_r2gen(text)
    if not text.strip():
        assert out == ""
        return
    assert out.endswith(" .") or out == "."
    tokens = out.split(" ")
    assert "" not in tokens  # single spaces between tokens
    for token in tokens:
        if token != ".":
            assert not set(token) & set(".,?;*!%^&_+()[]{}:;<=>?@\"/\\'"), token
            assert token == token.lower()


@pytest.mark.parametrize(
    "char, kept",
    [
        (":", False),
        ("[", False),
        ("9", True),
        ("@", False),
        ("\\", False),
        ("]", False),
        ("-", True),
        ("#", True),
        ("^", False),
        ("`", True),
    ],
)
def test_r2gen_character_class_edges(char, kept):
    assert (char in clean_r2gen(f"a{char}b")) is kept


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40) | st.text(min_size=CACHE_MAX_CHARS - 2, max_size=CACHE_MAX_CHARS + 40))
def test_plain_spelling_is_lower_case_with_whitespace_collapsed(text):
    # docs/report.md: lower case, whitespace collapsed (and trimmed); the same on both sides of the
    # cache's length limit
    expected = " ".join(text.split()).lower()
    assert plain_spelling(text) == expected
    assert plain_spelling(plain_spelling(text)) == expected


@settings(max_examples=200, deadline=None)
@given(PRINTABLE)
def test_none_tokenization_only_normalizes_whitespace(text):
    assert tokenize([text], "none") == [" ".join(text.split())]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="the ptb tokenization runs Stanford PTBTokenizer (Java)")
@settings(max_examples=5, deadline=None)
@given(st.lists(PRINTABLE, min_size=1, max_size=20))
def test_ptb_tokenization_drops_every_punctuation_token_and_keeps_one_text_per_input(texts):
    out = ptb_tokenize(tuple(texts))
    assert len(out) == len(texts)
    for text, tokens in zip(texts, out):
        if not text.strip():
            assert tokens == ""
        assert not set(tokens.split()) & PTB_PUNCTUATION
        assert tokens == tokens.lower() or any(c.isupper() for c in tokens if not c.isascii())
