"""Study context at ingest (issue 49): indication / technique / comparison columns with their
statuses, the MIMIC-CXR study date and time, and the link to the patient's previous study."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest
from archive_helpers import write_tgz
from fixtures.mimic_cxr_layout import build_mimic_fixture

from srrg import dataset as D
from srrg import ingest as I
from srrg.config import stage_config
from srrg.settings.dataset import DatasetConfig
from srrg.settings.ingest import IngestConfig
from srrg.sources.mimic_cxr import section_texts, study_datetime
from srrg.sources.priors import link_priors

IU_XML = b"""<?xml version="1.0" encoding="utf-8"?>
<eCitation><uId id="CXR7"/>
<MedlineCitation><Article><Abstract>
<AbstractText Label="COMPARISON">Chest radiograph XXXX.</AbstractText>
<AbstractText Label="INDICATION">Cough and fever</AbstractText>
<AbstractText Label="FINDINGS">Small left effusion, unchanged.</AbstractText>
<AbstractText Label="IMPRESSION">Stable effusion.</AbstractText>
</Abstract></Article></MedlineCitation>
<parentImage id="CXR7_IM-2263-1001"><figureId>F1</figureId></parentImage>
</eCitation>"""
IU_NO_CONTEXT = IU_XML.replace(b"CXR7", b"CXR8").replace(b'"COMPARISON">Chest radiograph XXXX.', b'"COMPARISON">')
IU_NO_CONTEXT = IU_NO_CONTEXT.replace(b"Cough and fever", b"")


@pytest.fixture(scope="module")
def mimic_rows(tmp_path_factory):
    fx = build_mimic_fixture(tmp_path_factory.mktemp("mimic"))
    df = I.ingest(
        stage_config({"source": "mimic_cxr", "mimic_cxr": fx.config()}, IngestConfig, "ingest"), progress=False
    )
    return df, {r["study_id"]: r for r in df.to_dicts()}


def test_mimic_context_sections_and_statuses(mimic_rows):
    """The context sections were dropped by ingest (only findings/impression were kept): each is a
    column now, and its status tells an absent section from a missing report."""
    df, rows = mimic_rows
    first, second = rows["50000001"], rows["50000002"]
    assert first["indication"] == "___ with cough." and first["indication_status"] == "ok"
    assert first["technique"] == "CHEST (PA AND LAT)" and first["technique_status"] == "ok"
    assert first["comparison"] is None and first["comparison_status"] == "absent"
    assert second["comparison"] == "___." and second["indication_status"] == "absent"
    missing = rows["50000006"]  # listed in the split file, no report file
    assert [missing[f"{n}_status"] for n in ("indication", "technique", "comparison")] == ["no_report"] * 3
    assert df.height == 7  # every study still a row


def test_mimic_study_date_and_prior_link_by_date(mimic_rows):
    """The prior is the patient's previous study by StudyDate/StudyTime, not by study id: the
    fixture's study 50000002 has the larger id but the earlier date, so an id order would link
    the wrong way round."""
    _, rows = mimic_rows
    assert rows["50000002"]["study_datetime"] == datetime(2179, 12, 31, 8, 5, 56, 875000)
    assert rows["50000001"]["study_datetime"] == datetime(2180, 1, 1, 12, 0)
    assert rows["50000001"]["prior_study_id"] == "50000002" and rows["50000001"]["prior_status"] == "ok"
    assert rows["50000002"]["prior_study_id"] is None and rows["50000002"]["prior_status"] == "first"
    assert rows["50000003"]["prior_status"] == "first"
    assert rows["50000007"]["study_datetime"] is None and rows["50000007"]["prior_status"] == "no_date"


def test_every_prior_link_stays_within_patient_and_split(mimic_rows):
    """A prior report from another split would leak reference text across the split boundary."""
    df, rows = mimic_rows
    linked = df.filter(pl.col("prior_study_id").is_not_null())
    assert linked.height >= 1
    for row in linked.iter_rows(named=True):
        prior = rows[row["prior_study_id"]]
        assert prior["subject_id"] == row["subject_id"] and prior["split"] == row["split"]
        assert prior["study_datetime"] < row["study_datetime"]


def test_link_priors_never_crosses_splits_and_skips_ties():
    """Should a patient span two splits (a split file disagreeing with itself), the link stays in
    the split; two studies at the same moment are not linked to each other (order unknown)."""
    day = datetime(2180, 1, 1)
    rows = [
        {"study_id": "1", "subject_id": "p", "split": "train", "study_datetime": day.replace(hour=1)},
        {"study_id": "2", "subject_id": "p", "split": "test", "study_datetime": day.replace(hour=2)},
        {"study_id": "3", "subject_id": "p", "split": "train", "study_datetime": day.replace(hour=3)},
        {"study_id": "4", "subject_id": "p", "split": "train", "study_datetime": day.replace(hour=3)},
        {"study_id": "5", "subject_id": "q", "split": "train", "study_datetime": day.replace(hour=4)},
        {"study_id": "6", "subject_id": "p", "split": "train", "study_datetime": None},
    ]
    link_priors(rows)
    got = {r["study_id"]: (r["prior_study_id"], r["prior_status"]) for r in rows}
    assert got == {
        "1": (None, "first"),
        "2": (None, "first"),  # the earlier train study is another split's
        "3": ("1", "ok"),
        "4": ("1", "ok"),  # not "3": same moment
        "5": (None, "first"),  # another patient
        "6": (None, "no_date"),
    }


@pytest.mark.parametrize(
    ("date", "time", "expected"),
    [
        ("21800101", "120000.000", datetime(2180, 1, 1, 12)),
        ("21800101", "80556.875", datetime(2180, 1, 1, 8, 5, 56, 875000)),
        ("21800101", "5", datetime(2180, 1, 1, 0, 0, 5)),
        ("21801301", "120000", None),
        ("21800101", "250000", None),
        (None, "120000", None),
        ("21800101", "noon", None),
    ],
)
def test_study_datetime_parses_the_published_spelling(date, time, expected):
    """StudyTime drops the hour's leading zero ("80556.875" is 08:05:56.875); a bad value is no date."""
    assert study_datetime(date, time) == expected


def test_section_texts_names_the_context_sections():
    text = " INDICATION: cough.\n TECHNIQUE: PA and\n lateral.\n COMPARISON: none.\n FINDINGS: clear.\n"
    assert section_texts(text) == ("clear.", None, "cough.", "PA and lateral.", "none.")


def test_iu_xray_context_columns(tmp_path):
    """Open-i's INDICATION and COMPARISON labels become columns; it has no technique section
    (`not_in_source`) and no study dates (`no_date`); an unreadable XML has no report."""
    archive = write_tgz(
        tmp_path,
        {
            "ecgen-radiology/7.xml": IU_XML,
            "ecgen-radiology/8.xml": IU_NO_CONTEXT,
            "ecgen-radiology/9.xml": b"<eCitation><broken",
        },
    )
    df = I.ingest(stage_config({"iu_xray": {"archive": str(archive)}}, IngestConfig, "ingest"), progress=False)
    rows = {r["study_id"]: r for r in df.to_dicts()}
    assert rows["CXR7"]["indication"] == "Cough and fever" and rows["CXR7"]["indication_status"] == "ok"
    assert rows["CXR7"]["comparison"] == "Chest radiograph XXXX." and rows["CXR7"]["comparison_status"] == "ok"
    assert rows["CXR7"]["technique"] is None and rows["CXR7"]["technique_status"] == "not_in_source"
    assert rows["CXR8"]["indication_status"] == "absent" and rows["CXR8"]["comparison_status"] == "absent"
    assert rows["CXR9"]["indication_status"] == "no_report"
    assert set(df["prior_status"]) == {"no_date"} and df["prior_study_id"].null_count() == 3


def test_dataset_shards_carry_the_context(mimic_rows, tmp_path):
    """The shards are what train reads: the context columns must survive to them."""
    df, _ = mimic_rows
    normalized = df.with_columns(
        pl.lit(None, pl.Utf8).alias("structured"),
        pl.lit("{}").alias("provenance"),
        pl.lit("ok").alias("extract_status"),
    )
    D.write_dataset(normalized, tmp_path, DatasetConfig(), {"ingest": {"source": "mimic_cxr"}}, progress=False)
    shards = pl.concat([D.read_split(tmp_path, s) for s in D.SPLITS], how="diagonal_relaxed")
    assert shards.height == df.height  # every row accounted for
    for column in ("indication", "technique", "comparison", "study_datetime", "prior_study_id", "prior_status"):
        assert column in shards.columns
    first = shards.filter(pl.col("study_id") == "50000001").row(0, named=True)
    assert first["indication"] == "___ with cough." and first["prior_study_id"] == "50000002"
    assert first["indication_status"] == "ok" and first["technique_status"] == "ok"
