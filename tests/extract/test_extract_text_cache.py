"""The extractor's text cache (docs/extraction.md, "Speed"): a repeated section text is served from
the cache with its own section name and offset, exactly as a fresh extraction would give it."""

from __future__ import annotations

import pytest

from srrg.extract import pipeline
from srrg.extract.pipeline import Extractor, column_sections, text_sections

TEXT = "Mild cardiomegaly in the left base. No pleural effusion."
WANTED = ("findings", "impression")


def _reports() -> list[list[pipeline.Section]]:
    """The same text as a findings column, an impression column and inside a free-text report."""
    return [
        column_sections({"findings": TEXT}, WANTED),
        column_sections({"impression": TEXT}, WANTED),
        text_sections(f"INDICATION: cough\n\nFINDINGS:   {TEXT}", WANTED),
    ]


def test_cached_text_keeps_its_section_and_offset() -> None:
    extractor = Extractor()
    cached = extractor.run(_reports())
    fresh = [Extractor().run([r])[0] for r in _reports()]  # each text extracted by an empty cache
    assert [(e.report, e.provenance, e.status) for e in cached] == [(e.report, e.provenance, e.status) for e in fresh]
    findings, impression, free = (e.provenance for e in cached)
    assert [p["section"] for p in findings] == ["findings", "findings"]
    assert [p["section"] for p in impression] == ["impression", "impression"]
    full = f"INDICATION: cough\n\nFINDINGS:   {TEXT}"
    for spans, source in ((findings[0]["spans"], TEXT), (free[0]["spans"], full)):
        assert source[spans["name"][0] : spans["name"][1]] == "cardiomegaly"
        assert source[spans["level"][0] : spans["level"][1]] == "Mild"
        assert [source[s:e] for s, e in spans["location"]] == ["left base"]


def test_cached_provenance_is_a_fresh_copy() -> None:
    extractor = Extractor()
    first, second = extractor.run(_reports()[:1] * 2)
    first.provenance[0]["spans"]["name"][0] = -1
    assert second.provenance[0]["spans"]["name"][0] == TEXT.index("cardiomegaly")
    assert extractor.run(_reports()[:1])[0].provenance[0]["spans"]["name"][0] == TEXT.index("cardiomegaly")


def test_cache_forgets_the_oldest_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "TEXT_CACHE_SIZE", 2)
    extractor = Extractor()
    texts = ["Mild cardiomegaly.", "No pleural effusion.", "Small left pneumothorax."]
    got = extractor.run([column_sections({"findings": t}, WANTED) for t in texts])
    assert list(extractor._cache) == texts[1:]
    again = extractor.run([column_sections({"findings": t}, WANTED) for t in texts])
    assert [e.report for e in again] == [e.report for e in got]
    extractor.clear_cache()
    assert not extractor._cache


def test_no_config_shares_the_default_extractor_and_its_cache() -> None:
    from srrg.extract.pipeline import get_extractor
    from srrg.settings.extract import ExtractConfig

    assert get_extractor() is get_extractor(ExtractConfig())
    assert get_extractor() is not get_extractor(ExtractConfig(borderline_probability=1))
