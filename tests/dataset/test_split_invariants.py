"""The seeded split on realistically shaped data: several studies per patient.

With one study per patient, splitting by the study id and by the patient id cannot be told apart;
here every patient has several studies, so a split keyed on the wrong id puts patients in two
splits (train/test leakage), which ingest's rule forbids (docs/inputs.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from srrg.ingest import SEEDED, assign_splits, seeded_split
from srrg.settings.ingest import SplitConfig


def studies(n_patients: int, per_patient: int) -> list[dict]:
    return [
        {"subject_id": f"p{p}", "study_id": f"s{p}_{k}", "split": None}
        for p in range(n_patients)
        for k in range(per_patient)
    ]


def test_a_patient_never_spans_two_seeded_splits():
    rows = studies(300, 4)
    assign_splits(rows, SplitConfig())
    by_patient = defaultdict(set)
    for row in rows:
        by_patient[row["subject_id"]].add(row["split"])
        assert row["split_source"] == SEEDED
    assert all(len(s) == 1 for s in by_patient.values())
    # and the split really is by patient: all three splits are used, near their fractions
    counts = Counter(next(iter(s)) for s in by_patient.values())
    assert set(counts) == {"train", "validate", "test"}
    assert counts["train"] / 300 == pytest.approx(0.7, abs=0.1)


def test_the_seeded_split_is_a_function_of_seed_and_patient_only():
    fractions = {"train": 0.7, "validate": 0.1, "test": 0.2}
    a = [seeded_split(f"p{i}", fractions, 13) for i in range(200)]
    assert a == [seeded_split(f"p{i}", fractions, 13) for i in range(200)]
    assert a != [seeded_split(f"p{i}", fractions, 14) for i in range(200)]


@pytest.mark.parametrize("zero", ["train", "validate", "test"])
def test_a_split_with_fraction_zero_gets_no_patient(zero):
    fractions = {"train": 0.6, "validate": 0.2, "test": 0.2} | {zero: 0.0}
    assert zero not in {seeded_split(f"p{i}", fractions, 1) for i in range(500)}
