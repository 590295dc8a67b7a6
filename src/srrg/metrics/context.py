"""Patient context of a report pair (age, sex, indication): what a context-aware metric (CRIMSON)
reads beside the two report texts (docs/judges.md, "Patient context").

One canonical form, a dict with some of the keys CONTEXT_FIELDS and non-empty text values, built
from the keys the published layouts use (RadPref `PatientAge`, `PatientSex`, `Indication`; RadJudge
`age`, `indication`). `srrg score` reads it from optional columns `age`, `sex`, `indication` of
the --refs file (the study's context, beside its reference); a file without them gives no context
and every metric scores as before. A `prior_study_id` column (ingest's link to the patient's
previous study) adds `prior`: "yes" or "no" (left out where a `prior_status` column says
`no_date`: unknown), which the temporal-claim measure reads (srrg.metrics.temporal); it is no
patient context, so no judge is shown it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table
from srrg.sources.priors import NO_DATE

CONTEXT_FIELDS = ("age", "sex", "indication")
PRIOR_COLUMN = "prior_study_id"  # -> context key "prior" ("yes" / "no")
PRIOR_STATUS_COLUMN = "prior_status"  # ingest's; `no_date`: whether a prior exists is unknown (no "prior" key)
# a layout's key, lower-cased without "_", "-" or spaces -> the canonical field
_ALIASES = {
    "age": "age",
    "patientage": "age",
    "sex": "sex",
    "patientsex": "sex",
    "indication": "indication",
    "clinicalindication": "indication",
}
_KEY_NOISE = re.compile(r"[\s_-]+")


_MISSING = frozenset({"nan", "none", "null", "n/a", "na"})  # what a table writes for "no value"


def context_text(value: Any) -> str | None:
    """One context value as a person would write it (docs/judges.md, "Patient context"): text
    stripped, an integral number without its ".0" (45.0 -> "45"), any other number as written; a
    missing value (null, NaN, blank, "nan") and a value no one writes as an age, sex or indication
    (true/false, a list, bytes, a mapping) give None, so the field is left out, never sent as
    "Age: NaN" or "Age: true"."""
    if value is None or isinstance(value, (bool, Mapping, list, tuple, bytes, bytearray)):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return str(int(value)) if value.is_integer() else f"{value:g}"
    text = str(value).strip()
    return text if text and text.lower() not in _MISSING else None


def patient_context(raw: Mapping[str, Any] | None) -> dict[str, str]:
    """The canonical context of one pair from a layout's mapping: the known keys (any case,
    `PatientAge` or `age`) with their values as text (context_text); missing values and other keys
    are left out, so a pair without context gives {}. Two keys naming one field (`age` and
    `PatientAge`) with different values are a UserError."""
    out: dict[str, str] = {}
    for key, value in (raw or {}).items():
        name = _ALIASES.get(_KEY_NOISE.sub("", str(key)).lower())
        text = None if name is None else context_text(value)
        if text is None:
            continue
        if out.get(name, text) != text:
            raise UserError(f"patient context names {name} twice with different values: {out[name]!r} and {text!r}")
        out[name] = text
    return {f: out[f] for f in CONTEXT_FIELDS if f in out}


def context_json(raw: Mapping[str, Any] | None) -> str:
    """patient_context as compact JSON text (the `context` cells metaeval files carry)."""
    return json.dumps(patient_context(raw), ensure_ascii=False, separators=(",", ":"))


def read_contexts(path: str | Path, id_col: str, ids: Sequence[str]) -> list[dict[str, str]] | None:
    """The context of each id (in the order given) from the columns CONTEXT_FIELDS (and
    PRIOR_COLUMN) of a reports file; None when the file has none of them (no pair has context). A
    .txt file has no columns."""
    table = read_table(path, id_cols=[id_col])
    present = [c for c in CONTEXT_FIELDS if c in table.columns]
    prior = PRIOR_COLUMN in table.columns
    if not (present or prior) or id_col not in table.columns:
        return None
    for c in present:  # values are read as they are (context_text), so a nested or binary column is refused here
        dtype = table.schema[c]
        if not (dtype.is_numeric() or dtype in (pl.String, pl.Boolean, pl.Null)):
            raise UserError(f"{path}: column {c} holds {dtype} values; patient context is numbers or text, one a row")
    status = prior and PRIOR_STATUS_COLUMN in table.columns
    frame = table.select(
        id_col, *present, *([PRIOR_COLUMN] if prior else []), *([PRIOR_STATUS_COLUMN] if status else [])
    )
    by_id = {}
    for row in frame.iter_rows(named=True):
        context = patient_context({c: row[c] for c in present})
        if prior and not (status and row[PRIOR_STATUS_COLUMN] == NO_DATE):
            context["prior"] = "yes" if context_text(row[PRIOR_COLUMN]) else "no"
        by_id[row[id_col]] = context
    return [by_id.get(i, {}) for i in ids]
