"""Patient context is sent as a person would write it, and a context column of the wrong kind is
one line (issue 46: N2, N3)."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metrics.context import context_text, patient_context, read_contexts
from srrg.metrics.judges.crimson import context_lines


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (45.0, "45"),
        (45, "45"),
        (45.5, "45.5"),
        (" 82 ", "82"),
        (math.nan, None),
        (math.inf, None),
        (None, None),
        ("NaN", None),
        ("", None),
        (True, None),
        (False, None),
        ([45], None),
        (b"45", None),
    ],
)
def test_n3_a_context_value_is_written_as_a_person_would(value, text):
    """N3: a missing age went to the judge as "Age: NaN", 45 as "Age: 45.0", a bool as "Age: true"."""
    assert context_text(value) == text
    lines = context_lines(patient_context({"PatientAge": value, "sex": "F"}))
    assert lines == (f"    Age: {text}\n" if text else "") + "    Sex: F\n"


def test_n3_a_refs_table_with_float_and_missing_ages_gives_integral_ages(tmp_path: Path):
    """N3: a Parquet age column of floats with a null and a NaN (what pandas writes) was cast to
    "45.0" and "NaN" text before it reached the prompt."""
    refs = tmp_path / "refs.parquet"
    pl.DataFrame({"study_id": ["a", "b", "c"], "report": ["x", "y", "z"], "age": [45.0, None, math.nan]}).write_parquet(
        refs
    )
    assert read_contexts(refs, "study_id", ["a", "b", "c"]) == [{"age": "45"}, {}, {}]


@pytest.mark.parametrize(
    "age", [pl.Series("age", [[45], [50]]), pl.Series("age", [b"45", b"50"], dtype=pl.Binary)], ids=["list", "binary"]
)
def test_n2_a_list_or_binary_age_column_is_one_line(tmp_path: Path, capsys, age):
    """N2: a list or binary `age` column was a polars cast traceback."""
    refs = tmp_path / "refs.parquet"
    pl.DataFrame({"study_id": ["a", "b"], "report": ["x", "y"]}).with_columns(age).write_parquet(refs)
    with pytest.raises(UserError, match=r"column age holds"):
        read_contexts(refs, "study_id", ["a", "b"])
    hyps = tmp_path / "hyps.parquet"
    pl.DataFrame({"study_id": ["a", "b"], "report": ["x", "y"]}).write_parquet(hyps)
    capsys.readouterr()
    rc = srrg_main(
        ["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "bleu", "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and str(refs) in err[0] and "age" in err[0], err
