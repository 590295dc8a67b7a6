"""srrg structured report <-> SRRG organ-header text (srrg.srrg_text, docs/inputs.md "SRRG text")."""

from __future__ import annotations

import json
import sys

import pytest
from paths import REPO

from srrg.report import REPAIRED, UNPARSEABLE, VALID, Finding, StructuredReport
from srrg.srrg_text import organ_map, parse_srrg, render_srrg
from srrg.vocab import findings

REPORT = StructuredReport(
    positive=(
        Finding("pleural effusion", 3, "small", "left"),
        Finding("atelectasis", 2, None, "left lung base"),
        Finding("cardiomegaly", 1, "mild", None),
        Finding("support devices", 3, None, None),
    ),
    negative=("pneumothorax", "consolidation"),
)
TEXT = (
    "Lungs and Airways:\n- Probable atelectasis, left lung base.\n- No consolidation.\n\n"
    "Pleura:\n- Small pleural effusion, left.\n- No pneumothorax.\n\n"
    "Cardiovascular:\n- Possible mild cardiomegaly.\n\n"
    "Tubes, Catheters, and Support Devices:\n- Support devices."
)


def test_organ_map_places_every_finding_once() -> None:
    """Catches a finding of srrg's vocabulary with no SRRG header (it would silently land in Other)
    or a header that is not one of the eight published ones."""
    om = organ_map()
    assert om.headers == (
        "Lungs and Airways",
        "Pleura",
        "Cardiovascular",
        "Hila and Mediastinum",
        "Tubes, Catheters, and Support Devices",
        "Musculoskeletal and Chest Wall",
        "Abdominal",
        "Other",
    )
    assert set(om.organ_of) == set(findings())
    assert len(om.organ_of) == 65


def test_render_writes_headers_in_srrg_order_with_bullets() -> None:
    """Catches headers out of SRRG's order, a missing `- ` bullet, a lost probability word, level or
    location, and negatives written before the header's positives."""
    assert render_srrg(REPORT) == TEXT
    assert render_srrg(StructuredReport()) == ""


def test_parse_reads_the_rendering_back_exactly() -> None:
    """Catches a template bullet read with the wrong probability, level, location or polarity."""
    back = parse_srrg(TEXT)
    assert back.status == VALID and back.template_bullets == 6 and back.free_bullets == 0
    assert set(back.report.positive) == set(REPORT.positive)
    assert set(back.report.negative) == set(REPORT.negative)


def test_free_bullets_take_the_extractor_and_the_header_location() -> None:
    """Catches a free-text bullet (as SRRG's own reports write them) dropped, or read without the
    organ header as location evidence when the bullet states none."""
    seen: list[str] = []

    def extractor(text: str) -> dict[str, object]:
        seen.append(text)
        return {"positive": [{"name": "pleural effusion", "probability": 3, "level": "small", "location": None}]}

    text = "Pleura:\n- Small amount of fluid layering posteriorly.\n\nOther:\n- No pneumothorax."
    back = parse_srrg(text, extractor)
    assert seen == ["Small amount of fluid layering posteriorly."]
    assert back.report.positive == (Finding("pleural effusion", 3, "small", "pleural"),)
    assert back.report.negative == ("pneumothorax",)
    assert back.status == REPAIRED and back.free_bullets == 1 and back.template_bullets == 1


def test_parse_without_structure_is_unparseable() -> None:
    """Catches free prose (no header, no bullet) passed off as an empty but valid report."""
    assert parse_srrg("The lungs are clear.").status == UNPARSEABLE
    assert parse_srrg(None).status == UNPARSEABLE
    unread = parse_srrg("Pleura:\n- The pleural spaces look fine today.")
    assert unread.status == REPAIRED and unread.unread_lines == 1 and unread.report.is_empty


@pytest.mark.slow
def test_round_trip_on_every_iu_xray_report_of_the_demo() -> None:
    """Catches a finding, negative, level or location that the SRRG text loses or changes, on all
    3,955 IU X-ray reports the demo extracts (the benchmark prints the same count)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from srrg_round_trip import normalized, round_trip

    from srrg.extract import extract_many
    from srrg.report import from_obj
    from srrg.sources.iu_xray import read_iu_xray

    records = read_iu_xray()
    texts = [" ".join(t for t in (r.get("findings"), r.get("impression")) if t) for r in records]
    reports = [from_obj(d)[0] for d in extract_many(texts, n_process=1)]
    assert len(reports) == 3955
    assert sum(not r.is_empty for r in reports) > 3500
    assert round_trip(reports) == []
    assert round_trip(normalized(reports)) == []  # the locations as the demo's dataset holds them


def test_the_organ_header_is_location_evidence_in_extracted_srrg_studies() -> None:
    """Catches the header ignored (a finding of an SRRG study left without location when its bullet
    states none), a location the bullet does state overwritten, or rows of another source changed."""
    import polars as pl

    from srrg.extract.table import extract_table
    from srrg.settings.extract import ExtractConfig
    from srrg.srrg_text import header_locations_table

    text = (
        "Lungs and Airways:\n- Mild atelectasis.\n- Nodule in the right upper lobe.\n\n"
        "Hila and Mediastinum:\n- Lymphadenopathy.\n\nCardiovascular:\n- Moderate cardiomegaly."
    )
    df = pl.DataFrame({"source": ["srrg", "iu_xray"], "findings": [text, text], "impression": [None, None]})
    out = header_locations_table(extract_table(df, ExtractConfig(n_process=1), progress=False))
    srrg, other = ({f["name"]: f["location"] for f in json.loads(s)["positive"]} for s in out["structured"])
    assert srrg == {
        "atelectasis": "lung",
        "nodule": "right upper lobe",
        "lymphadenopathy": "mediastinal",
        "cardiomegaly": None,  # Cardiovascular is no place of its own
    }
    assert other == {"atelectasis": None, "nodule": "right upper lobe", "lymphadenopathy": None, "cardiomegaly": None}


def test_the_srrg_target_trains_on_srrg_text_and_reads_predictions_back() -> None:
    """Catches target srrg trained on JSON or sentences, or its predictions not read back into the
    structured report (parse_status, structured) while the scored text stays the SRRG text."""
    from srrg.model.datamodule import report_target
    from srrg.model.infer import prediction_fields
    from srrg.report import from_obj

    assert report_target(REPORT, "ignored sentences", "srrg") == TEXT
    fields = prediction_fields(TEXT, "srrg")
    assert fields["parse_status"] == VALID and fields["report"] == TEXT
    back = from_obj(json.loads(fields["structured"]))[0]
    assert set(back.positive) == set(REPORT.positive) and set(back.negative) == set(REPORT.negative)
    assert prediction_fields("free prose", "srrg")["parse_status"] == UNPARSEABLE
