"""The extractor's sentence cache (docs/extraction.md, "Speed"): a text is cut where the pipeline
itself ends a sentence, each sentence is extracted (or served from the cache) on its own, and the
joined result is exactly the one of the whole text at once."""

from __future__ import annotations

import pytest

from srrg.extract.evaluation import default_archive
from srrg.extract.pipeline import Extractor, column_sections, text_sections
from srrg.settings.extract import ExtractConfig
from srrg.sources.iu_xray import read_reports

WANTED = ("findings", "impression")
OTHER_CONVENTIONS = ExtractConfig(borderline_probability=1, versus_probability=1, nodular_opacity="nodule")


def _whole_text(config: ExtractConfig | None = None) -> Extractor:
    """An extractor that runs every text at once (as with a model's sentence boundaries)."""
    extractor = Extractor(config)
    extractor._by_sentence = False
    return extractor


def _rows(extractions):
    return [(e.report, e.provenance, e.status) for e in extractions]


def test_cuts_only_where_the_pipeline_ends_a_sentence() -> None:
    text = "No effusion. 1. Mild cardiomegaly, e.g. here.  Two spaces. Effusion.No cut! Why? ok"
    assert Extractor().split_sentences(text) == [
        (0, "No effusion."),
        (13, "1."),  # spaCy splits "1." into "1" and "."
        (16, "Mild cardiomegaly, e.g. here.  Two spaces."),  # "e.g." is one token; two spaces: no cut
        (59, "Effusion.No cut!"),  # no space after the period
        (76, "Why?"),
        (81, "ok"),
    ]
    assert _whole_text().split_sentences(text) == [(0, text)]


def test_a_cached_sentence_keeps_its_offset_in_another_text() -> None:
    first, second = "Mild cardiomegaly. No pneumothorax.", "Small left effusion. Mild cardiomegaly."
    extractor = Extractor()
    extractor.run([column_sections({"findings": first}, WANTED)])
    assert "Mild cardiomegaly." in extractor._sentences
    got = extractor.run([column_sections({"findings": second}, WANTED)])[0]
    assert _rows([got]) == _rows(_whole_text().run([column_sections({"findings": second}, WANTED)]))
    spans = {p["name"]: p["spans"] for p in got.provenance}
    assert second[slice(*spans["cardiomegaly"]["name"])] == "cardiomegaly"
    assert second[slice(*spans["cardiomegaly"]["level"])] == "Mild"
    assert second[slice(*spans["pleural effusion"]["name"])] == "effusion"
    assert [second[a:b] for a, b in spans["pleural effusion"]["location"]] == ["left"]


@pytest.mark.parametrize("config", [ExtractConfig(), pytest.param(OTHER_CONVENTIONS, marks=pytest.mark.slow)])
def test_sentence_path_equals_whole_text_path_on_iu_reports(config: ExtractConfig) -> None:
    records = list(read_reports(default_archive()))
    columns = [column_sections({"findings": r.findings, "impression": r.impression}, WANTED) for r in records]
    free = [
        text_sections(f"FINDINGS: {r.findings or ''}\n\nIMPRESSION:\n {r.impression or ''}", WANTED) for r in records
    ]
    for reports in (columns, free):
        by_sentence = Extractor(config).run(reports)
        assert _rows(by_sentence) == _rows(_whole_text(config).run(reports))
        assert sum(len(e.provenance) for e in by_sentence) > len(records)  # findings were found at all
