"""Location phrases longer than the S-Score's phrase caches allow (sscore.PHRASE_MAX_CHARS a
phrase, LOCATION_CACHE_MAX_CHARS a pair) are scored uncached, with the same rules (issue 38)."""

from __future__ import annotations

from srrg.metrics import sscore


def test_long_locations_are_lower_cased_and_compared_whole() -> None:
    """Bugs caught: the uncached path skipping lower-casing (a long location in capitals would
    score below 1 against itself), or a cache keyed by the first PHRASE_MAX_CHARS characters (two
    long locations that differ only at their end would score 1)."""
    stem = "left lower lobe " * (sscore.PHRASE_MAX_CHARS // 16 + 1)
    assert len(stem) > sscore.PHRASE_MAX_CHARS
    sscore.clear_caches()
    for _ in range(2):  # cold, then with whatever the first round cached
        assert sscore.location_score(stem.upper() + "apex", stem + "apex") == 1.0
        assert sscore.location_score(stem + "apex", stem + "base") < 1.0
        assert sscore.location_score("left base", "LEFT BASE") == 1.0  # the cached path: same rule
