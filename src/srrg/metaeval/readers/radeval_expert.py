"""The RadEval expert reader (docs/metaeval.md): IAMJB/RadEvalExpertDataset as a ratings table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from srrg.metaeval.readers.common import (
    PAIR_INFO_SCHEMA,
    RATINGS_SCHEMA,
    RatingsDataset,
    error_row,
    read_rating_csv,
    require_columns,
    rows_or_fail,
    table_of,
)
from srrg.metrics.judges.common import CATEGORIES
from srrg.settings.metaeval import RadevalExpertOptions

RADEVAL_FILE = "reader_study_final_with_annotationsv3.csv"
RADEVAL_SLOTS = tuple(f"{k}{i}" for k in ("prediction", "annotation") for i in (1, 2, 3))
RADEVAL_COLUMNS = ("annotator", "type", "ground_truth", "images_path", *RADEVAL_SLOTS)
RADEVAL_CATEGORIES = (*CATEGORIES, "g")  # 1-6 as GREEN a..f; 7: inarticulate report (grammar, readability)
_SEVERITY_LINE = re.compile(r"[^A-Za-z0-9]*(significant|insignificant)[^A-Za-z0-9]*", re.I)
_COUNT_LINE = re.compile(r"\s*([1-7])[.)]\s+[^:]*:\s*([0-9]+)\s*[.;]?\s*")


def radeval_counts(cell: str | None) -> dict[tuple[str, str], float] | None:
    """(category, significance) -> count of one annotation cell: a `Significant` and an
    `Insignificant` header, each followed by seven numbered lines `k. <category>: <count>`. None
    when the cell is blank or any line, header or count is missing or unreadable (never zeros)."""
    if not cell or not cell.strip():
        return None
    counts: dict[tuple[str, str], float] = {}
    current = None
    for line in filter(str.strip, cell.splitlines()):
        header, item = _SEVERITY_LINE.fullmatch(line), _COUNT_LINE.fullmatch(line)
        if header:
            current = header.group(1).lower()
            if any(sig == current for _, sig in counts):
                return None
        elif item and current is not None:
            key = (RADEVAL_CATEGORIES[int(item.group(1)) - 1], current)
            if key in counts:
                return None
            counts[key] = float(item.group(2))
        else:
            return None
    return counts if len(counts) == 2 * len(RADEVAL_CATEGORIES) else None


def read_radeval_expert(path: str | Path, options: RadevalExpertOptions = RadevalExpertOptions()) -> RatingsDataset:
    """RadEval expert dataset (Hugging Face IAMJB/RadEvalExpertDataset, MIT; linked from
    jbdel/RadEval README.md): `reader_study_final_with_annotationsv3.csv`, 208 rows of annotator,
    type (report section), ground_truth, images_path and three candidates prediction1..3 with one
    radiologist's annotation1..3 each.

    Layout: the column names as public download and evaluation scripts read them (found by content
    search, docs/metaeval.md); the annotation cell as a public adapter parses it: a Significant and
    an Insignificant header, each with seven numbered `k. <category>: <count>` lines (1-6 the GREEN
    categories a..f, 7 an inarticulate report). A blank or unreadable cell is not a zero: its pair
    has no rating and is counted in notes. Pair ids `<row>:<slot>`, clusters images_path (one
    image's candidates), rater the annotator, system the candidate slot."""
    path = Path(path)
    path = path / RADEVAL_FILE if path.is_dir() else path
    frame = read_rating_csv(path)
    require_columns(frame, list(RADEVAL_COLUMNS), path)
    pairs, ratings, unreadable = [], [], 0
    for i, row in enumerate(frame.iter_rows(named=True)):
        context = json.dumps({"type": row["type"], "images_path": row["images_path"]})
        for slot in (1, 2, 3):
            pid = f"{i}:{slot}"
            pairs.append({
                "pair_id": pid, "reference": row["ground_truth"] or "", "candidate": row[f"prediction{slot}"] or "",
                "cluster": str(row["images_path"]), "system": f"prediction{slot}", "context": context,
            })  # fmt: skip
            counts = radeval_counts(row[f"annotation{slot}"])
            if counts is None:
                unreadable += 1
                continue
            ratings.extend(error_row(pid, str(row["annotator"]), c, sig, n) for (c, sig), n in counts.items())
    rows_or_fail(ratings, path)
    notes = {"unreadable_annotation_cells": unreadable, "pairs_without_rating": unreadable}
    return RatingsDataset("radeval_expert", table_of(pairs, PAIR_INFO_SCHEMA), table_of(ratings, RATINGS_SCHEMA), notes)
