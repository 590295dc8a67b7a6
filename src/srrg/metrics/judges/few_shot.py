"""Few-shot judging (VERT's few-shot setting, docs/judges.md "Few-shot judging"): k rated pairs drawn
with a seed from the training part of a rating set, or the first k of a curated set of chosen
examples, are shown to the judge, with their expert score in [0, 1], before the pair it scores.

The shots come from the examples table `srrg judge-train-prepare` writes (examples.parquet: pair_id,
reference, candidate, the VERT answer `target` holding the scaled human score, split, status),
whose case-level split keeps a case in one split: only `train` rows with status ok are drawn. A
scored pair that is one of the shots is refused, never judged with its own answer in the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import polars as pl

from srrg.errors import UserError
from srrg.io import read_table
from srrg.metrics.judges.common import parse_direct_score
from srrg.settings.metrics import FewShotConfig
from srrg.text.spelling import plain_spelling

COLUMNS = ("pair_id", "reference", "candidate", "target", "split", "status")
EXAMPLES_FILE = "examples.parquet"
# a curated set: a file of chosen examples (csv, jsonl, json, parquet) with these columns (pair_id optional)
CURATED_COLUMNS = ("reference", "candidate", "score")


@dataclass(frozen=True)
class Shot:
    """One example the judge is shown: its pair id, the two reports and the expert score in [0, 1]."""

    pair_id: str
    reference: str
    candidate: str
    score: float


def _source_file(source: str) -> Path:
    path = Path(source).expanduser()
    return path / EXAMPLES_FILE if path.is_dir() else path


@lru_cache(maxsize=8)
def draw_shots(source: str, k: int, seed: int, split: str) -> tuple[Shot, ...]:
    """k shots from the `split` rows (status ok, a readable score) of the examples table, drawn
    without replacement by a seeded permutation of the rows sorted by pair id (independent of the
    file's row order). Too few rows, a missing column or an unreadable file is one UserError."""
    path = _source_file(source)
    if not path.is_file():
        raise UserError(f"few_shot.source {source}: no {EXAMPLES_FILE} there (run srrg judge-train-prepare)")
    table = read_table(path)
    if "target" not in table.columns and all(c in table.columns for c in CURATED_COLUMNS):
        return curated_shots(table, path, k)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise UserError(
            f"few_shot.source {path}: missing column(s) {missing}; expected judge-train-prepare's examples "
            f"or a curated set ({', '.join(CURATED_COLUMNS)})"
        )
    rows = []
    for row in table.sort("pair_id").iter_rows(named=True):
        score = parse_direct_score(row["target"]) if row["target"] else float("nan")
        if row["split"] == split and row["status"] == "ok" and score == score:
            rows.append(Shot(str(row["pair_id"]), row["reference"], row["candidate"], score))
    if len(rows) < k:
        raise UserError(f"few_shot.k is {k} but {path} has {len(rows)} scored {split!r} example(s)")
    order = np.random.default_rng(seed).permutation(len(rows))[:k]
    return tuple(rows[i] for i in order)


def curated_shots(table: pl.DataFrame, path: Path, k: int) -> tuple[Shot, ...]:
    """A curated few-shot set (VERT's hand-chosen examples): the first k rows of a file of chosen
    examples, in the file's order (the order is the curator's choice; nothing is drawn), each with
    its expert score in [0, 1]; ids from a pair_id column or `curated:<row>`. A score outside
    [0, 1], an empty report or fewer than k rows is one UserError naming the row."""
    if table.height < k:
        raise UserError(f"few_shot.k is {k} but the curated set {path} has {table.height} example(s)")
    ids = table["pair_id"].cast(pl.String).to_list() if "pair_id" in table.columns else None
    shots = []
    for i, row in enumerate(table.head(k).iter_rows(named=True)):
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            score = float("nan")
        if not 0.0 <= score <= 1.0:
            raise UserError(
                f"few_shot.source {path} row {i + 1}: score must be a number in [0, 1], got {row['score']!r}"
            )
        if not str(row["reference"] or "").strip() or not str(row["candidate"] or "").strip():
            raise UserError(f"few_shot.source {path} row {i + 1}: an empty reference or candidate")
        shots.append(Shot(ids[i] if ids else f"curated:{i}", str(row["reference"]), str(row["candidate"]), score))
    return tuple(shots)


def shots_for(cfg: FewShotConfig) -> tuple[Shot, ...]:
    """The configured shots; none when k is 0."""
    return draw_shots(str(cfg.source), cfg.k, cfg.seed, cfg.split) if cfg.k else ()


def refuse_overlap(shots: Sequence[Shot], refs: Sequence[str], hyps: Sequence[str]) -> None:
    """A UserError when a scored pair (reference and candidate in plain spelling) is one of the shots:
    the judge would be shown the expert's score of the pair it is asked to score."""
    shown = {(plain_spelling(s.reference), plain_spelling(s.candidate)): s.pair_id for s in shots}
    for i, (r, h) in enumerate(zip(refs, hyps, strict=True)):
        pair_id = shown.get((plain_spelling(r or ""), plain_spelling(h or "")))
        if pair_id is not None:
            raise UserError(
                f"pair {i} being scored is few-shot example {pair_id}: draw shots from the training part only "
                "(few_shot.split) and score the held-out pairs"
            )


def _clean(text: str) -> str:
    """A report as template text: braces would read as template fields, so they become parentheses."""
    return " ".join(text.split()).replace("{", "(").replace("}", ")")


def shots_block(shots: Sequence[Shot], modality: str) -> str:
    """The examples section put before the pair the judge scores (empty without shots)."""
    if not shots:
        return ""
    parts = [f"Examples of {modality} report pairs with the score experts gave them:"]
    for n, shot in enumerate(shots, start=1):
        parts.append(
            f"Example {n}.\nReference report:\n{_clean(shot.reference)}\n\nCandidate report:\n"
            f"{_clean(shot.candidate)}\n\nExpert score: {shot.score:.2f}"
        )
    return "\n\n".join(parts) + "\n\nNow grade the following pair.\n\n"
