"""The three kinds of test issue 53 found still missing from the previous round's gap list: a packaged
CheXpert map entry naming a finding outside the vocabulary, a p-value at its resampling floor printed
rounded up (not to nearest), and the length caps of the S-Score's phrase-window and location caches.
Each test's docstring names the bug it catches."""

from __future__ import annotations

import pytest

from srrg.compare import _p_text
from srrg.errors import UserError
from srrg.metrics import chexpert, sscore
from srrg.resampling import randomization_floor

HEAD = "observations: [No Finding, Cardiomegaly, Atelectasis]\nmap:\n"


@pytest.mark.parametrize(
    "entry",
    [
        "  cardiomegally: [Cardiomegaly]\n",  # a finding the vocabulary does not have (misspelt)
        "  atelectatic changes: [Atelectasis]\n",  # a synonym, not the canonical name it maps to
        "  cardiomegaly: [Cardiomegally]\n",  # an observation that is not one of the 14
        "  cardiomegaly: [No Finding]\n",  # No Finding is derived, never mapped to
    ],
    ids=["unknown-finding", "synonym-not-canonical", "unknown-observation", "no-finding-label"],
)
def test_a_map_entry_outside_the_vocabulary_is_refused(packaged, entry):
    """Bug: an entry naming a finding that is not a canonical vocabulary name (or a label that is
    not an observation) is accepted, so it silently labels nothing (no extracted finding carries
    that name) instead of one error naming the entry."""
    packaged(HEAD + entry)
    with pytest.raises(UserError, match=r"chexpert_map\.yaml: entry '[a-z ]+' -> \["):
        chexpert.chexpert_map()
    packaged(HEAD + "  cardiomegaly: [Cardiomegaly]\n  atelectasis: [Atelectasis]\n")
    assert dict(chexpert.chexpert_map().findings) == {"cardiomegaly": ("Cardiomegaly",),
                                                      "atelectasis": ("Atelectasis",)}  # fmt: skip


@pytest.mark.parametrize(
    ("p", "floor", "text"),
    [
        (1 / 800, 1 / 800, "≤0.002"),  # 0.00125: to nearest would claim "≤0.001"
        (0.0021, 0.0021, "≤0.003"),
        (1 / 300, 1 / 300, "≤0.004"),  # 0.00333...
        (0.004, 0.004, "≤0.004"),  # exactly on a step: not pushed up a step
        (randomization_floor(12, 799), randomization_floor(12, 799), "≤0.002"),
    ],
)
def test_a_p_at_its_resampling_floor_is_printed_rounded_up(p, floor, text):
    """Bug: the floor rounded to nearest (or down), so the printed bound claims a smaller p than
    the resamples can show."""
    assert _p_text(p, floor) == text


def long_phrase(end: str) -> str:
    stem = "left lower lobe " * (sscore.PHRASE_MAX_CHARS // 16 + 2)
    assert sscore.PHRASE_MAX_CHARS < len(stem) + len(end) < sscore.LOCATION_CACHE_MAX_CHARS
    return stem + end


def test_long_phrases_and_pairs_never_enter_the_caches():
    """Bug: the length cap of the phrase-window cache (or of the pair cache) removed: every long
    location is kept, so memory grows with long free-text locations. Short ones are still cached."""
    sscore.clear_caches()
    sscore.location_score(long_phrase("apex"), long_phrase("base"))  # a pair over the pair cap
    assert sscore._cached_phrase_windows.cache_info().currsize == 0
    assert sscore.location_bleu.cache_info().currsize == 0
    sscore.location_score(long_phrase("apex"), "left apex")  # a pair under the pair cap, one long phrase
    assert sscore.location_bleu.cache_info().currsize == 1
    assert sscore._cached_phrase_windows.cache_info().currsize == 1  # only "left apex"
    sscore.location_score("right base", "left base")
    assert sscore._cached_phrase_windows.cache_info().currsize == 3
    sscore.clear_caches()
