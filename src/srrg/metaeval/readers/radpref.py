"""The RadPref reader (docs/metaeval.md): the CRIMSON repository's preference data and
radiologist annotations as a ratings table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from srrg.errors import UserError
from srrg.io import list_files
from srrg.metaeval.readers.common import (
    ATTRIBUTE_LEVELS,
    PAIR_INFO_SCHEMA,
    RADPREF_LEVELS,
    RATINGS_SCHEMA,
    RatingsDataset,
    error_row,
    once,
    rating_row,
    read_rating_json,
    table_of,
)
from srrg.settings.metaeval import RadprefOptions

RADPREF_CONTEXT = ("PatientAge", "PatientSex", "Indication", "Comparison", "StudyDescription")
RADPREF_CANDIDATES = ("C1", "C2")


def _radpref_level(item: Any, levels: tuple[str, ...], where: str) -> str:
    value = item.get("clinical_significance") if isinstance(item, Mapping) else None
    if value not in levels:
        raise UserError(f"{where}: clinical_significance must be one of {list(levels)}, got {value!r}")
    return str(value)


def _indexed(obj: Any, where: str) -> list[Any]:
    """The items of a finding_errors / missing_findings object keyed by the finding's index."""
    if obj is None:
        return []
    if not isinstance(obj, Mapping):
        raise UserError(f"{where}: expected an object keyed by finding index, got {type(obj).__name__}")
    for key in obj:
        if not str(key).isdigit():
            raise UserError(f"{where}: key {key!r} is not a finding index")
    return list(obj.values())


def radpref_errors(entry: Mapping[str, Any], pid: str, rater: str, where: str) -> list[dict[str, Any]]:
    """One rater's errors on one candidate: false and missing findings counted per significance
    level (zero counts included, so every rated candidate has a total), attribute errors counted
    per attribute and its significant/negligible level."""
    kinds = ("false_finding", "missing_finding")
    counts: dict[tuple[str, str], float] = {(c, lvl): 0.0 for c in kinds for lvl in RADPREF_LEVELS}
    for item in _indexed(entry.get("finding_errors"), f"{where} finding_errors"):
        kind = item.get("error_type") if isinstance(item, Mapping) else None
        if kind == "false":
            key = ("false_finding", _radpref_level(item, RADPREF_LEVELS, f"{where} finding_errors"))
            counts[key] += 1
        elif kind == "attribute":
            attributes = item.get("attributes")
            if not isinstance(attributes, Mapping) or not attributes:
                raise UserError(f"{where}: an attribute error needs an attributes object, got {attributes!r}")
            for attribute, level in attributes.items():
                if level not in ATTRIBUTE_LEVELS:
                    allowed = list(ATTRIBUTE_LEVELS)
                    raise UserError(f"{where}: attribute {attribute!r} level must be one of {allowed}, got {level!r}")
                key = (f"attribute_{attribute}", str(level))
                counts[key] = counts.get(key, 0.0) + 1
        else:
            raise UserError(f"{where}: finding error_type must be 'false' or 'attribute', got {kind!r}")
    for item in _indexed(entry.get("missing_findings"), f"{where} missing_findings"):
        counts[("missing_finding", _radpref_level(item, RADPREF_LEVELS, f"{where} missing_findings"))] += 1
    return [error_row(pid, rater, c, lvl, n) for (c, lvl), n in counts.items()]


def read_radpref(root: str | Path, options: RadprefOptions = RadprefOptions()) -> RatingsDataset:
    """RadPref (CRIMSON repository, MIT): per case two candidates (C1, C2) rated 1-5 by three
    radiologists, with per-finding errors and their clinical significance.

    Layout: rajpurkarlab/CRIMSON README.md names `RadPref/preference_data.json` and
    `RadPref/radiologist_annotations/`; the nesting (below) is the one of the published files as
    reproduced field by field in the project's synthetic layout sample (docs/metaeval.md).
    - preference_data.json: a list of cases with id, ground_truth_report, C1_report, C2_report,
      C1_source/C2_source (the generator, kept as `system`), patient context PatientAge, PatientSex,
      Indication, Comparison, StudyDescription (kept as `context`), and findings lists.
    - radiologist_annotations/<rater>.json: {"user_id": ..., "annotations": {case id: {C1: ..., C2:
      ...}}}; per candidate `rating` (1-5), `finding_errors` and `missing_findings` as objects keyed
      by finding index; a finding error is error_type "false" (with clinical_significance) or
      "attribute" (attributes: name -> significant | negligible). A rater may skip a case.
    options.raters: annotation file stems to read, each once (default: every .json in
    radiologist_annotations/)."""
    raters = options.raters
    root = Path(root)
    data_path = root / "preference_data.json"
    cases = read_rating_json(data_path)
    if not isinstance(cases, list) or not all(isinstance(c, Mapping) and "id" in c for c in cases):
        raise UserError(f"{data_path}: expected a JSON list of cases with an 'id' each")
    pairs, case_ids = [], {}
    for n, case in enumerate(cases):
        where = f"{data_path} case {n} (id {case['id']!r})"
        once(case_ids, str(case["id"]), where, f"case id {case['id']!r}")
        texts = ("ground_truth_report", *(f"{c}_report" for c in RADPREF_CANDIDATES))
        bad = [k for k in texts if not isinstance(case.get(k, ""), str)]
        if bad:
            raise UserError(f"{where}: {bad[0]} must be a text, got {type(case[bad[0]]).__name__}")
        context = json.dumps({k: case[k] for k in RADPREF_CONTEXT if k in case})
        for cand in RADPREF_CANDIDATES:
            pairs.append({"pair_id": f"{case['id']}:{cand}", "reference": case.get("ground_truth_report"),
                          "candidate": case.get(f"{cand}_report"), "cluster": str(case["id"]),
                          "system": str(case.get(f"{cand}_source", "")), "context": context})  # fmt: skip
    ids = [str(c["id"]) for c in cases]
    folder = root / "radiologist_annotations"
    paths = [folder / f"{r}.json" for r in raters] if raters else list_files(folder, suffix=".json")
    if not paths:
        raise UserError(f"{folder}: no rater file (<rater>.json); the published layout has user_1.json ... user_3.json")
    ratings: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    users: dict[Any, str] = {}
    for path in paths:
        doc = read_rating_json(path)
        if not isinstance(doc, Mapping) or not isinstance(doc.get("annotations"), Mapping) or "user_id" not in doc:
            raise UserError(f'{path}: expected {{"user_id": ..., "annotations": {{case id: ...}}}}')
        rater, annotations = str(doc["user_id"]), doc["annotations"]
        once(users, rater, str(path), f"user_id {rater!r} (one radiologist read twice)")
        unknown = [k for k in annotations if str(k) not in ids]
        if unknown:
            raise UserError(f"{path}: case id(s) {unknown[:5]} are not in {data_path.name}")
        if not annotations:
            raise UserError(f"{path}: rater {rater!r} annotated no case of {data_path.name}; nothing to measure")
        skipped[rater] = len(ids) - len(annotations)
        for case_id, ann in annotations.items():
            for cand in RADPREF_CANDIDATES:
                entry = ann.get(cand) if isinstance(ann, Mapping) else None
                if not isinstance(entry, Mapping):
                    raise UserError(f"{path}: case {case_id!r} has no {cand} annotation object")
                pid, where = f"{case_id}:{cand}", f"{path} case {case_id} {cand}"
                rating = entry.get("rating")
                if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not 1 <= rating <= 5:
                    raise UserError(f"{where}: rating must be a number 1-5, got {rating!r}")
                ratings.append(rating_row(pid, rater, float(rating)))
                ratings.extend(radpref_errors(entry, pid, rater, where))
    rated = {r["pair_id"] for r in ratings}
    notes = {"skipped_cases_per_rater": skipped, "pairs_without_rating": sum(p["pair_id"] not in rated for p in pairs)}
    return RatingsDataset("radpref", table_of(pairs, PAIR_INFO_SCHEMA), table_of(ratings, RATINGS_SCHEMA), notes)
