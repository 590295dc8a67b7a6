"""ReXrank, the public report-generation leaderboard: its test files in, its submission file out
(docs/inputs.md, "ReXrank").

A test file (`ReXRank_<set>_test.json`) is one JSON object keyed by study id; each study an object
with `image_path` (list of image paths under the set's image folder), `section_findings`,
`section_impression` (text, or NaN where the study has none), `context` (one text such as
"Age:50-60.Gender:M.Indication: ...Comparison: ...", the parts a study lacks left out) and further
keys (`key_image_path`, `report`, `split`, `frontal_lateral`, `subject_id`, ...) kept as they are.
A submission is the same object with `model_prediction` (the generated report text) added to every
study. `run_rexrank_prepare` writes the studies as a references table whose age / sex / indication
columns reach context-aware metrics (CRIMSON) through `srrg score`; `run_rexrank_export` writes the
submission from a predictions table and refuses a study set that is not the test file's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet, write_text

REQUIRED_KEYS = ("image_path", "section_findings", "section_impression")
PREDICTION_KEY = "model_prediction"
CONTEXT_LABELS = {"age": "age", "gender": "sex", "indication": "indication", "comparison": "comparison"}
_LABEL = re.compile(r"\b(Age|Gender|Indication|Comparison)\s*:", re.IGNORECASE)
_TAGS = re.compile(r"</?context>", re.IGNORECASE)
REFS_SCHEMA = {
    "study_id": pl.String,
    "report": pl.String,
    "findings": pl.String,
    "impression": pl.String,
    "image_paths": pl.List(pl.String),
    "age": pl.String,
    "sex": pl.String,
    "indication": pl.String,
    "comparison": pl.String,
}


def read_test_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """The test file's studies in file order (values as written, NaN kept); refuses a file without
    the published layout, in one line naming the file and what is missing."""
    p = Path(path)

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:  # json would keep the last of two equal keys
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise UserError(f"{p}: not a ReXrank test file: key {key!r} appears twice in one object")
            seen[key] = value
        return seen

    try:  # json reads the NaN the published files hold
        data = json.loads(p.read_text(encoding="utf-8"), object_pairs_hook=unique)
    except UserError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserError(f"{p}: not a ReXrank test file: not readable JSON ({type(err).__name__})") from None
    if not isinstance(data, dict) or not data:
        raise UserError(f"{p}: not a ReXrank test file: expected a JSON object keyed by study id, one entry a study")
    for sid, entry in data.items():
        if not isinstance(entry, dict):
            raise UserError(f"{p}: not a ReXrank test file: study {sid!r} is not an object")
        missing = [k for k in REQUIRED_KEYS if k not in entry]
        if missing:
            raise UserError(f"{p}: not a ReXrank test file: study {sid!r} lacks key(s) {', '.join(missing)}")
        if not isinstance(entry["image_path"], list):
            raise UserError(f"{p}: not a ReXrank test file: study {sid!r} image_path is not a list of paths")
    return data


def _text(value: Any) -> str | None:
    """A section or context value as text; NaN, null and blank are None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def parse_context(value: Any) -> dict[str, str]:
    """The labelled parts of a study's context (age, sex, indication, comparison): the published
    files write one text `Age:..Gender:..Indication: ..Comparison: ..` (optionally inside
    <context> tags) with absent parts left out; an object with those keys is read as well."""
    if isinstance(value, Mapping):
        parts = {CONTEXT_LABELS.get(str(k).lower()): _text(v) for k, v in value.items()}
    else:
        text = _TAGS.sub("", _text(value) or "")
        marks = list(_LABEL.finditer(text))
        parts = {
            CONTEXT_LABELS[m.group(1).lower()]: _text(text[m.end() : nxt.start() if nxt else len(text)])
            for m, nxt in zip(marks, [*marks[1:], None], strict=False)  # the last mark runs to the end
        }
    out = {k: v for k, v in parts.items() if k and v}
    for short in ("age", "sex"):  # "50-60." / "M." : the label's period is no part of the value
        if short in out:
            out[short] = out[short].rstrip(".").strip()
    return {k: v for k, v in out.items() if v}


def reference_text(findings: str | None, impression: str | None) -> str:
    """A study's reference as ReXrank's evaluation joins it, "Findings: ... Impression: ...", a
    section the study lacks left out (so section-cut scoring sees no "None" text)."""
    return " ".join(f"{label}: {text}" for label, text in (("Findings", findings), ("Impression", impression)) if text)


def references(tests: Mapping[str, Mapping[str, Any]], image_root: str | None = None) -> pl.DataFrame:
    """One references row per study: the reference text, its sections, images (under image_root
    when given) and the patient context as columns."""
    rows = []
    for sid, entry in tests.items():
        findings, impression = _text(entry["section_findings"]), _text(entry["section_impression"])
        context = parse_context(entry.get("context"))
        images = [str(p) for p in entry["image_path"]]
        rows.append(
            {
                "study_id": str(sid),
                "report": reference_text(findings, impression),
                "findings": findings,
                "impression": impression,
                "image_paths": [str(Path(image_root) / p.lstrip("/")) for p in images] if image_root else images,
                **{k: context.get(k) for k in ("age", "sex", "indication", "comparison")},
            }
        )
    return pl.DataFrame(rows, schema=REFS_SCHEMA)


def run_rexrank_prepare(test_path: str | Path, out: str | Path, image_root: str | None = None) -> str:
    """The rexrank-prepare stage: the test file's studies as a references table; returns its line."""
    refs = references(read_test_file(test_path), image_root)
    write_parquet(refs, out)
    with_context = refs.filter(pl.any_horizontal(pl.col("age", "sex", "indication").is_not_null())).height
    return (
        f"{refs.height} studies, {refs.filter(pl.col('report') == '').height} without findings or impression, "
        f"{with_context} with patient context -> {out}"
    )


def predictions_by_study(path: str | Path, id_col: str, pred_col: str) -> dict[str, str]:
    """study id -> generated text of a predictions table; refuses a missing column, a repeated
    study or a study without a prediction (the leaderboard scores every study)."""
    table = read_table(path, id_cols=[id_col])
    missing = [c for c in (id_col, pred_col) if c not in table.columns]
    if missing:
        raise UserError(f"--predictions {path}: no column(s) {', '.join(missing)} (choose with --id-col / --pred-col)")
    ids = table[id_col].to_list()
    repeated = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if repeated:
        raise UserError(f"--predictions {path}: study {repeated[0]!r} appears more than once ({len(repeated)} such)")
    texts = dict(zip(ids, table[pred_col].to_list(), strict=True))
    empty = [i for i, t in texts.items() if not isinstance(t, str) or not t.strip()]
    if empty:
        raise UserError(f"--predictions {path}: {len(empty)} stud(ies) without a {pred_col} text, e.g. {empty[0]!r}")
    return texts


def submission(tests: Mapping[str, Mapping[str, Any]], predictions: Mapping[str, str], test_path: str) -> dict:
    """The submission object: every study of the test file as written, `model_prediction` added;
    refuses predictions whose study set is not the test file's."""
    missing = [s for s in tests if s not in predictions]
    extra = [s for s in predictions if s not in tests]
    if missing or extra:
        parts = [f"{len(missing)} test stud(ies) without a prediction (e.g. {missing[0]!r})"] if missing else []
        parts += [f"{len(extra)} prediction(s) not in the test file (e.g. {extra[0]!r})"] if extra else []
        raise UserError(f"--predictions do not match the studies of --test {test_path}: " + "; ".join(parts))
    return {sid: {**entry, PREDICTION_KEY: predictions[sid]} for sid, entry in tests.items()}


def run_rexrank_export(
    test_path: str | Path, predictions_path: str | Path, out: str | Path, id_col: str, pred_col: str
) -> str:
    """The rexrank-export stage: the submission JSON (indented like the leaderboard's example
    scripts write it); returns its line."""
    tests = read_test_file(test_path)
    result = submission(tests, predictions_by_study(predictions_path, id_col, pred_col), str(test_path))
    write_text(out, json.dumps(result, indent=4, ensure_ascii=False) + "\n")
    return f"{len(result)} studies with {PREDICTION_KEY} -> {out}"
