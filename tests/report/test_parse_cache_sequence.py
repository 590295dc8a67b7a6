"""The parse caches of srrg.report across a sequence of near-identical texts in one process
(issue 38): a canonical report is parsed first and fills the fast path's caches (_NEGATIVES,
_FINDINGS, _CANONICAL_NAMES), then near-copies of it must still get their own report and status,
exactly as with empty caches. Also: names and attribute texts longer than the phrase caches' limit."""

from __future__ import annotations

import json

import pytest

from srrg import report
from srrg.report import REPAIRED, VALID, Finding, StructuredReport

EFFUSION = "pleural effusion"
CANONICAL = json.dumps({"positive": [], "negative": [EFFUSION]})
REPEATED = json.dumps({"positive": [], "negative": [EFFUSION, EFFUSION]})  # the near-copy
UPPER = json.dumps({"positive": [], "negative": ["Pleural Effusion"]})
TWO = json.dumps({"positive": [], "negative": [EFFUSION, "pneumothorax"]})
ONE_NEGATIVE = StructuredReport((), (EFFUSION,))
EXPECTED = {
    CANONICAL: (ONE_NEGATIVE, VALID),
    REPEATED: (ONE_NEGATIVE, REPAIRED),  # the repeat is dropped, and that is a repair
    UPPER: (ONE_NEGATIVE, REPAIRED),  # lower-cased: a repair
    TWO: (StructuredReport((), (EFFUSION, "pneumothorax")), VALID),
}


@pytest.fixture(autouse=True)
def cold_caches():
    report.clear_parse_caches()
    yield
    report.clear_parse_caches()


@pytest.mark.parametrize(
    "order",
    [(CANONICAL, REPEATED, UPPER, TWO), (REPEATED, CANONICAL, TWO, UPPER), (TWO, REPEATED, CANONICAL, UPPER)],
    ids=["canonical-first", "near-copy-first", "longer-first"],
)
def test_a_near_copy_repeating_a_negative_is_not_served_the_canonical_entry(order: tuple[str, ...]) -> None:
    """Bugs caught: the negative-list cache keyed by the set of names (frozenset) serves the
    repeated list the canonical entry (status valid); _canonical_negatives without its repeat check
    keeps the duplicate; a cached name admitted before it is normalized lets "Pleural Effusion" through."""
    for text in order:  # one process, caches filled by the texts before
        assert report.parse_report(text) == EXPECTED[text], text
    indexes, statuses = report.parse_indexed(list(order))
    for text, (index, status) in zip(order, zip(indexes, statuses)):
        assert (index, status) == (report.index_report(EXPECTED[text][0]), EXPECTED[text][1]), text
    assert report.parse_reports(list(order)) == [EXPECTED[t] for t in order]


@pytest.mark.parametrize("certain_first", [True, False])
def test_a_repeated_positive_keeps_its_most_certain_mention_after_the_canonical_one_was_cached(
    certain_first: bool,
) -> None:
    """Bug caught: a per-finding cache entry (_FINDINGS, keyed by the decoded finding) of the
    canonical report served to the near-copy that names cardiomegaly twice, or the merge keeping
    whichever mention comes first/last instead of the most certain (probability 3 over 2)."""
    definite = {"name": "cardiomegaly", "probability": 3, "level": "mild", "location": None}
    possible = {"name": "cardiomegaly", "probability": 2, "level": "mild", "location": None}
    canonical = json.dumps({"positive": [definite], "negative": []})
    mentions = [definite, possible] if certain_first else [possible, definite]
    near_copy = json.dumps({"positive": mentions, "negative": []})
    one = StructuredReport((Finding("cardiomegaly", 3, "mild", None),), ())
    assert report.parse_report(canonical) == (one, VALID)
    assert report.parse_report(near_copy) == (one, REPAIRED)
    assert report.parse_indexed([canonical, near_copy])[1] == [VALID, REPAIRED]


def test_names_and_locations_over_the_phrase_cache_limit_are_still_normalized() -> None:
    """A name or location longer than PHRASE_CACHE_MAX_CHARS bypasses the phrase caches. Bugs
    caught: that bypass skipping normalization (upper case and double spaces kept, status valid),
    or a cache keyed by the first PHRASE_CACHE_MAX_CHARS characters (two long locations that differ
    only at the end read as one)."""
    limit = report.PHRASE_CACHE_MAX_CHARS
    stem = "left  Lower lobe " * (limit // 17 + 1)  # over the limit; double spaces, one capital
    assert len(stem) > limit
    want = " ".join(stem.split()).lower()
    assert report.canonical_name(stem.upper()) == want  # not a vocabulary name: kept, normalized
    base = {"name": "nodule", "probability": 3, "level": None}
    texts = [json.dumps({"positive": [{**base, "location": stem + end}], "negative": []}) for end in ("apex", "base")]
    got = [report.parse_report(t) for t in texts]
    assert [r.positive[0].location for r, _ in got] == [want + " apex", want + " base"]
    assert [status for _, status in got] == [REPAIRED, REPAIRED]
    clean = json.dumps({"positive": [{**base, "location": want + " apex"}], "negative": []})
    assert report.parse_report(clean) == (got[0][0], VALID)  # already normalized: nothing to repair
