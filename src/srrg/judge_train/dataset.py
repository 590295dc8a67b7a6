"""Supervised judge-training data from a ratings table (srrg.metaeval.readers): one example per
rated pair, split by case so that no reference study appears in two splits.

Targets: VERT-style `[Score]:\n0.7` (the human judgement scaled to [0, 1], rounded as VERT does),
GREEN-style analysis text when analyses are given, or a distilled GEMA (GEMA-Score Table 6): the
answers of GEMA's agents as a teacher judge gave them (its `srrg score --metrics gema` table), one
example per agent request. Prompts are the packaged judge prompts rendered exactly as the `vert` /
`green` / `gema` metrics render them, so the tuned judge sees at inference what it saw in training.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet, write_text
from srrg.metaeval.readers.common import RatingsDataset
from srrg.metaeval.readers.load import load_dataset
from srrg.metaeval.run import ID, resolve_human
from srrg.metrics.judges.common import pair_requests, truncate_words
from srrg.metrics.judges.gema import gema_requests
from srrg.metrics.judges.vert import VARIANTS, vert_requests
from srrg.settings.judge_train import JudgeTrainConfig
from srrg.settings.metaeval import MetaevalConfig
from srrg.settings.metrics import GEMA_ASPECTS, GemaConfig, JudgeConfig, VertConfig
from srrg.settings.splits import SPLITS
from srrg.text.spelling import plain_spelling

# example statuses: ok (trained / evaluated on) | no_target (no human score, analysis or teacher
# answer) | empty_text (reference or candidate missing) | duplicate (a GEMA entity request already
# an example of its split: one report is learned once); training adds too_long
OK, NO_TARGET, EMPTY_TEXT, TOO_LONG, DUPLICATE = "ok", "no_target", "empty_text", "too_long", "duplicate"
# a pair of the published training file whose case (reference) is also in the published test file
TEST_CASE = "test_case"
PROMPTS = {"score": "vert", "analysis": "green", "gema": "gema"}
# the request an example answers: the pair's one judge request (vert, green), or one of GEMA's agents
PAIR, SUBJECTIVE, REF_ENTITIES, HYP_ENTITIES = "pair", "subjective", "ref_entities", "hyp_entities"
PAIR_REQUESTS = (PAIR, SUBJECTIVE)  # one per pair: the rows of the held-out tables
EXAMPLE_SCHEMA = {
    "pair_id": pl.String, "case_id": pl.String, "split": pl.String, "request": pl.String, "reference": pl.String,
    "candidate": pl.String, "human": pl.Float64, "target": pl.String, "messages": pl.String, "status": pl.String,
}  # fmt: skip


@dataclass(frozen=True)
class Scale:
    """How a human judgement maps to [0, 1]: (value - low) / (high - low), flipped when lower is better."""

    target: str
    low: float
    high: float
    lower_is_better: bool

    def apply(self, value: float, decimals: int) -> float:
        unit = min(1.0, max(0.0, (value - self.low) / (self.high - self.low))) if self.high > self.low else 1.0
        return round(1.0 - unit if self.lower_is_better else unit, decimals)


def case_key(pair_id: str, reference: str | None, case_by: str) -> str:
    """The case a pair belongs to: its reference text in plain spelling (pairs judged against the same
    report are one case), or the pair id before its first ':' (`study:candidate` ids)."""
    if case_by == "pair_prefix":
        return pair_id.split(":", 1)[0]
    return plain_spelling(reference or "")


def split_cases(cases: Sequence[str], validate_fraction: float, test_fraction: float, seed: int) -> dict[str, str]:
    """case -> split from a seeded permutation of the sorted unique cases (independent of row order).
    A non-zero fraction gets at least one case when three or more cases exist; train keeps the rest."""
    unique = sorted(set(cases))
    n = len(unique)

    def count(fraction: float) -> int:
        k = round(fraction * n)
        return max(k, 1) if fraction > 0 and n >= 3 else k

    n_test, n_val = count(test_fraction), count(validate_fraction)
    if n - n_test - n_val < 1:
        raise UserError(
            f"{n} case(s) cannot fill train/validate/test with fractions {validate_fraction}/{test_fraction}"
        )
    order = np.random.default_rng(seed).permutation(n)
    labels = ["test"] * n_test + ["validate"] * n_val + ["train"] * (n - n_test - n_val)
    return {unique[i]: label for i, label in zip(order, labels)}


def published_splits(
    ids: Sequence[str], cases: Sequence[str], published: Mapping[str, str], validate_fraction: float, seed: int
) -> tuple[list[str], set[str]]:
    """Each pair's split from the rating set's own train/test files: a test file's pair is test, the
    training file's cases are split into train and validate by case (validate_fraction, seeded, as
    split_cases). Returns the splits and the training file's cases that also occur in the test
    file (those pairs are kept out of training: a reference is never both learned and tested)."""
    test_cases = {c for p, c in zip(ids, cases) if published.get(p) == "test"}
    train_cases = sorted({c for p, c in zip(ids, cases) if published.get(p) == "train"} - test_cases)
    if not train_cases or not test_cases:
        raise UserError("the published split leaves no training or no test case; use judge_train.split_by: cases")
    train_of = split_cases(train_cases, validate_fraction, 0.0, seed)
    splits = [train_of.get(c, "train") if published.get(p) == "train" else "test" for p, c in zip(ids, cases)]
    shared = {c for p, c in zip(ids, cases) if published.get(p) == "train"} & test_cases
    return splits, shared


def human_scale(ratings: pl.DataFrame, cfg: JudgeTrainConfig) -> tuple[dict[str, float], Scale]:
    """pair_id -> mean human judgement (the metaeval target rules) and the scale to [0, 1]."""
    human, target, lower = resolve_human(pl.DataFrame(), ratings, MetaevalConfig(human_target=cfg.human_target))
    values = dict(zip(human[ID].to_list(), human["human"].to_list()))
    observed = [v for v in values.values() if v is not None and not math.isnan(v)]
    low = cfg.score_min if cfg.score_min is not None else (min(observed) if observed else 0.0)
    high = cfg.score_max if cfg.score_max is not None else (max(observed) if observed else 1.0)
    return values, Scale(target, float(low), float(high), lower)


def score_target(value: float, decimals: int) -> str:
    """The VERT answer the judge learns: the section the `vert` metric's direct-score parser reads."""
    return f"[Score]:\n{value:.{decimals}f}"


def target_mode(cfg: JudgeTrainConfig, analyses: pl.DataFrame | None) -> str:
    """score without a table; with one, gema when it holds GEMA's per-report columns, else analysis."""
    if cfg.target == "auto":
        if analyses is None:
            return "score"
        return "gema" if set(GEMA_COLUMNS) <= set(analyses.columns) else "analysis"
    if cfg.target == "analysis" and analyses is None:
        raise UserError("judge_train.target 'analysis' needs an analyses table (--analyses with pair_id, analysis)")
    if cfg.target == "gema" and analyses is None:
        raise UserError(
            "judge_train.target 'gema' needs the teacher's GEMA answers (--analyses: per_report.parquet of "
            "`srrg score --metrics gema`)"
        )
    return cfg.target


GEMA_COLUMNS = ("gema_status", "gema_ref_entities", "gema_hyp_entities", *(f"gema_{a}_errors" for a in GEMA_ASPECTS))


def teacher_explanation(text: str | None) -> str:
    """The subjective agent's explanation inside GEMA's per-report `gema_explanation`, which puts
    srrg's objective note (`matched: ...; missing: ...; extra: ...`) before it, joined by ' | '."""
    note, sep, rest = (text or "").partition(" | ")
    if note.startswith("matched: "):
        return rest if sep else ""
    return text or ""


def gema_targets(row: Mapping[str, Any]) -> dict[str, str | None]:
    """The teacher's answer to each GEMA agent request of one pair, as JSON the agents' parsers read
    (srrg.metrics.judges.gema): the entity lists and the subjective error counts with the
    explanation; None for an agent that failed (its name in gema_status) or a count that is missing."""
    status = str(row.get("gema_status") or "")
    failed = set(status.split(":", 1)[1].split(",")) if ":" in status else set() if status == "ok" else {"all"}
    targets: dict[str, str | None] = {}
    for request in (REF_ENTITIES, HYP_ENTITIES):
        entities = row.get(f"gema_{request}")
        ok = not failed & {request, "all"} and entities is not None
        targets[request] = json.dumps({"entities": json.loads(entities)}, ensure_ascii=False) if ok else None
    counts = [row.get(f"gema_{a}_errors") for a in GEMA_ASPECTS]
    if failed & {SUBJECTIVE, "all"} or any(c is None or math.isnan(c) for c in counts):
        targets[SUBJECTIVE] = None
    else:
        answer = {f"{a}_errors": int(c) for a, c in zip(GEMA_ASPECTS, counts)}
        targets[SUBJECTIVE] = json.dumps(
            {**answer, "explanation": teacher_explanation(row.get("gema_explanation"))}, ensure_ascii=False
        )
    return targets


def gema_examples(
    refs: Sequence[str],
    hyps: Sequence[str],
    ids: Sequence[str],
    splits: Sequence[str],
    table: pl.DataFrame,
    cfg: JudgeTrainConfig,
) -> list[dict[str, Any]]:
    """Per pair its three GEMA agent requests (subjective, reference entities, candidate entities)
    with the teacher's answers (request, messages, target); an entity request already an example
    of the same split is a duplicate."""
    entity, texts, subjective = gema_requests(refs, hyps, GemaConfig(max_words=cfg.max_words))
    entity_of = dict(zip(texts, entity))
    answers = {str(r["pair_id"]): gema_targets(r) for r in table.iter_rows(named=True)}
    seen: set[tuple[str, str]] = set()
    rows = []
    for pid, ref, hyp, split, sub in zip(ids, refs, hyps, splits, subjective, strict=True):
        teacher = answers.get(pid, {})
        for request, text in ((SUBJECTIVE, None), (REF_ENTITIES, ref), (HYP_ENTITIES, hyp)):
            req = sub if text is None else entity_of[truncate_words(text, cfg.max_words)]
            key = (split, json.dumps(list(req.messages), ensure_ascii=False))
            duplicate = text is not None and key in seen
            seen.add(key)
            rows.append({"request": request, "messages": key[1], "target": teacher.get(request),
                         "duplicate": duplicate})  # fmt: skip
    return rows


def build_examples(
    ds: RatingsDataset, cfg: JudgeTrainConfig, analyses: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """One row per rated pair (EXAMPLE_SCHEMA) and a summary (target, scale, counts per split)."""
    mode = target_mode(cfg, analyses)
    if mode != "score" and cfg.vert_variant != "direct":
        raise UserError(f"judge_train.vert_variant {cfg.vert_variant!r} is a prompt of score targets, not of {mode}")
    values, scale = human_scale(ds.ratings, cfg) if not ds.ratings.is_empty() else ({}, Scale("none", 0.0, 1.0, False))
    texts: Mapping[str, str] = {}
    if analyses is not None and "pair_id" not in analyses.columns and ID in analyses.columns:
        analyses = analyses.rename({ID: "pair_id"})  # a `srrg score` table (the teacher's GEMA answers)
    if mode == "gema":
        assert analyses is not None  # target_mode insists
        missing = [c for c in ("pair_id", *GEMA_COLUMNS) if c not in analyses.columns]
        if missing:
            raise UserError(f"GEMA answers table: missing column(s) {missing}; found {analyses.columns}")
    elif analyses is not None:
        missing = [c for c in ("pair_id", "analysis") if c not in analyses.columns]
        if missing:
            raise UserError(f"analyses table: missing column(s) {missing}; found {analyses.columns}")
        texts = {str(p): a for p, a in zip(analyses["pair_id"], analyses["analysis"]) if a and str(a).strip()}
    pairs = ds.pairs.with_columns(pl.col("reference").fill_null(""), pl.col("candidate").fill_null(""))
    ids, refs, hyps = pairs["pair_id"].to_list(), pairs["reference"].to_list(), pairs["candidate"].to_list()
    cases = [case_key(p, r, cfg.case_by) for p, r in zip(ids, refs)]
    published = cfg.split_by == "published" and bool(ds.splits)
    if published:
        unknown = [p for p in ids if p not in ds.splits]
        if unknown:
            raise UserError(f"{ds.name}: pair(s) outside its published split: {unknown[:3]}")
        pair_splits, shared = published_splits(ids, cases, ds.splits, cfg.validate_fraction, cfg.split_seed)
    else:
        split_of = split_cases(cases, cfg.validate_fraction, cfg.test_fraction, cfg.split_seed)
        pair_splits, shared = [split_of[c] for c in cases], set()
    if mode == "gema":
        assert analyses is not None
        requests = gema_examples(refs, hyps, ids, pair_splits, analyses, cfg)
        per_pair = 3
    else:
        requests = [
            {"request": PAIR, "messages": json.dumps(list(r.messages), ensure_ascii=False), "duplicate": False}
            for r in (
                vert_requests(refs, hyps, VertConfig(max_words=cfg.max_words, variant=cfg.vert_variant))
                if mode == "score"
                else pair_requests(PROMPTS[mode], refs, hyps, JudgeConfig(max_words=cfg.max_words))
            )
        ]
        per_pair = 1
    rows = []
    for i, request in enumerate(requests):
        k = i // per_pair
        pid, ref, hyp, case, split = ids[k], refs[k], hyps[k], cases[k], pair_splits[k]
        human = values.get(pid)
        human = None if human is None or math.isnan(human) else float(human)
        if mode == "gema":
            target = request["target"]
        elif mode == "analysis":
            target = texts.get(pid)
        else:
            target = score_target(scale.apply(human, cfg.decimals), cfg.decimals) if human is not None else None
        status = EMPTY_TEXT if not ref.strip() or not hyp.strip() else OK if target is not None else NO_TARGET
        if split != "test" and case in shared:
            status = TEST_CASE
        elif status == OK and request["duplicate"]:
            status = DUPLICATE
        rows.append({
            "pair_id": pid, "case_id": case, "split": split, "request": request["request"], "reference": ref,
            "candidate": hyp, "human": human, "target": target, "messages": request["messages"], "status": status,
        })  # fmt: skip
    examples = pl.DataFrame(rows, schema=EXAMPLE_SCHEMA, orient="row") if rows else pl.DataFrame(schema=EXAMPLE_SCHEMA)
    summary = {
        "dataset": ds.name,
        "target": mode,
        "prompt": VARIANTS[cfg.vert_variant] if mode == "score" else PROMPTS[mode],
        "scale": {
            "human_target": scale.target,
            "low": scale.low,
            "high": scale.high,
            "lower_is_better": scale.lower_is_better,
            "decimals": cfg.decimals,
        },
        "cases": {s: len({c for c, t in zip(cases, pair_splits) if t == s}) for s in SPLITS},
        "split_by": "published" if published else "cases",
        "pairs": {f"{r['split']}:{r['status']}": c for r, c in _count(examples)},
        "n_pairs": len(ids),
        "n_examples": examples.height,
        "split_seed": cfg.split_seed,
        "case_by": cfg.case_by,
    }
    return examples, summary


def _count(examples: pl.DataFrame) -> list[tuple[dict[str, Any], int]]:
    grouped = examples.group_by("split", "status").len().sort("split", "status")
    return [({"split": s, "status": t}, n) for s, t, n in grouped.iter_rows()]


def write_prepared(
    examples: pl.DataFrame, ratings: pl.DataFrame, summary: Mapping[str, Any], out_dir: str | Path
) -> None:
    """examples.parquet (every pair), heldout/{refs,hyps,ratings}.parquet (the test split in the
    `srrg score` / `srrg metaeval-correlate` formats) and prepare.json."""
    out = Path(out_dir)
    write_parquet(examples, out / "examples.parquet")
    test = examples.filter((pl.col("split") == "test") & pl.col("request").is_in(PAIR_REQUESTS))
    write_parquet(
        test.select(pl.col("pair_id").alias(ID), pl.col("reference").alias("report")), out / "heldout" / "refs.parquet"
    )
    write_parquet(
        test.select(pl.col("pair_id").alias(ID), pl.col("candidate").alias("report")), out / "heldout" / "hyps.parquet"
    )
    write_parquet(
        ratings.filter(pl.col("pair_id").is_in(test["pair_id"].implode())), out / "heldout" / "ratings.parquet"
    )
    write_text(out / "prepare.json", json.dumps(dict(summary), indent=2) + "\n")


def run_judge_train_prepare(
    adapter: str,
    data: str,
    options: Mapping[str, Any],
    analyses: str | None,
    cfg: JudgeTrainConfig,
    out_dir: str | Path,
) -> str:
    """The judge-train-prepare stage: the ratings dataset (and optional judge analyses) as training
    examples and held-out tables in out_dir; returns the summary line it prints."""
    ds = load_dataset(adapter, data, **options)
    table = read_table(analyses).with_columns(pl.col("pair_id").cast(pl.String)) if analyses else None
    examples, summary = build_examples(ds, cfg, table)
    write_prepared(examples, ds.ratings, summary, out_dir)
    return (
        f"{ds.name}: {examples.height} pairs, cases {summary['cases']}, target {summary['target']}, "
        f"statuses {summary['pairs']}"
    )
