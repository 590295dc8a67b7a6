"""The extractor's text cache across a sequence of near-identical section texts in one process
(issue 38): each text keeps its own report and spans, whatever was cached before it."""

from __future__ import annotations

import pytest

from srrg.extract.pipeline import Extractor, column_sections
from srrg.report import Finding, StructuredReport

FILLER = "Comparison is made to the prior study. " * 8  # 312 characters without a finding
NO_EFFUSION = StructuredReport((), ("pleural effusion",))
# text -> (report, [(status, name span)]), spans counted by hand in the text
EXPECTED = {
    "No pleural effusion.": (NO_EFFUSION, [("negative", [3, 19])]),
    "No  pleural effusion.": (NO_EFFUSION, [("negative", [4, 20])]),
    "No pleural effusion. No pleural effusion.": (NO_EFFUSION, [("negative", [3, 19]), ("negative", [24, 40])]),
    FILLER + "No pneumothorax.": (StructuredReport((), ("pneumothorax",)), [("negative", [315, 327])]),
    FILLER + "Small left pneumothorax.": (
        StructuredReport((Finding("pneumothorax", 3, "small", "left"),), ()),
        [("positive", [323, 335])],
    ),
}


def extracted(extractor: Extractor, texts: list[str]) -> list[tuple[StructuredReport, list[tuple[str, list[int]]]]]:
    out = extractor.run([column_sections({"findings": t}, ("findings",)) for t in texts])
    return [(e.report, [(p["status"], p["spans"]["name"]) for p in e.provenance]) for e in out]


@pytest.mark.parametrize("reverse", [False, True])
def test_near_identical_texts_each_keep_their_own_result(reverse: bool) -> None:
    """Bugs caught: a cache keyed by the text with whitespace collapsed (the double-spaced copy
    would get the single-spaced spans), by a bounded prefix of a long text (the two long sections
    differ only after 312 characters: the positive pneumothorax would come back negative), or a
    cached result extended in place when the same sentence repeats."""
    texts = list(EXPECTED)[::-1] if reverse else list(EXPECTED)
    extractor = Extractor()
    one_by_one = [extracted(extractor, [t])[0] for t in texts]  # one run per text: the cache fills up
    together = extracted(extractor, texts)  # again, now all served from the cache
    assert one_by_one == together == [EXPECTED[t] for t in texts]
