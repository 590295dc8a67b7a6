"""Error injection (docs/metaeval.md, "Error injection"): does a metric notice a known error? From
each reference report, perturbed candidates are built with a seed (k false findings inserted, or k
findings dropped), plus a control with the same findings in another order; every metric scores the
reference against itself (the clean candidate), the control and each perturbed candidate through
`srrg score`'s code, and the table gives per metric, error category and k the mean score drop and
the detection precision, recall and F1.

A finding is a sentence of the report (cut after ".", "!" or "?" followed by white space).
Detection: a candidate is flagged when the metric scores it more than `tolerance` below the clean
candidate of the same reference. A perturbed candidate is a positive (flagged = true positive,
not flagged = false negative), the control a negative (flagged = false positive). Every reference
row is accounted for: one that cannot be perturbed keeps a status (injection.parquet)."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import read_parquet, read_reports, write_parquet, write_text
from srrg.metaeval import tables
from srrg.metaeval.run import HEADLINE
from srrg.settings.metaeval import ErrorInjection

CLEAN, CONTROL = "clean", "control"
OK, DUPLICATE, NO_FINDING, TOO_FEW = "ok", "duplicate", "no_finding", "too_few_findings"
NO_FALSE_FINDING = "too_few_false_findings"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
INJECTION_SCHEMA = {
    "reference_id": pl.String, "candidate_id": pl.String, "variant": pl.String, "k": pl.Int64,
    "status": pl.String, "same_as": pl.String, "reference": pl.String, "candidate": pl.String,
}  # fmt: skip
TABLE_SCHEMA = {
    "metric": pl.String, "category": pl.String, "k": pl.Int64, "n": pl.Int64, "n_unscored": pl.Int64,
    "mean_drop": pl.Float64, "tp": pl.Int64, "fn": pl.Int64, "fp": pl.Int64, "tn": pl.Int64,
    "precision": pl.Float64, "recall": pl.Float64, "f1": pl.Float64,
}  # fmt: skip


def findings(text: str) -> list[str]:
    """The sentences of a report, in order (a finding each); none for blank text."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _rng(seed: int, reference_id: str, variant: str, k: int) -> random.Random:
    """One generator per reference, variant and k: a reference's candidates do not depend on the
    other rows (adding a reference changes no other candidate)."""
    return random.Random(f"{seed}|{reference_id}|{variant}|{k}")


def drop_findings(sentences: Sequence[str], k: int, rng: random.Random) -> list[str] | None:
    """The sentences without k of them (chosen by rng); None unless at least one finding is left."""
    if len(sentences) <= k:
        return None
    gone = set(rng.sample(range(len(sentences)), k))
    return [s for i, s in enumerate(sentences) if i not in gone]


def insert_findings(sentences: Sequence[str], k: int, pool: Mapping[str, str], rng: random.Random) -> list[str] | None:
    """The sentences with k false findings of the pool put in at random places; a pool entry is
    eligible only when the report does not name its finding at all (inserting "pneumothorax" into a
    report that says "no pneumothorax" would be a contradiction, not a plain false finding). None
    when fewer than k are eligible."""
    text = " ".join(sentences).lower()
    eligible = [sentence for name, sentence in pool.items() if name.lower() not in text]
    if len(eligible) < k:
        return None
    out = list(sentences)
    for sentence in rng.sample(eligible, k):
        out.insert(rng.randint(0, len(out)), sentence)
    return out


def control(sentences: Sequence[str], rng: random.Random) -> list[str]:
    """The same findings in a shuffled order: nothing to detect."""
    out = list(sentences)
    rng.shuffle(out)
    return out


def perturb(ids: Sequence[str], texts: Sequence[str], cfg: ErrorInjection) -> pl.DataFrame:
    """injection.parquet: per reference its clean, control and perturbed candidates (one row each,
    INJECTION_SCHEMA), with a status: ok, duplicate (the same text as an earlier reference,
    `same_as`; perturbed once), no_finding (a blank reference), too_few_findings (dropping k would
    leave none) or too_few_false_findings (fewer than k pool findings the report does not name)."""
    variants = [(CLEAN, 0), (CONTROL, 0), *((c, k) for c in cfg.categories for k in cfg.k)]
    first: dict[str, str] = {}
    rows = []
    for rid, text in zip(ids, texts, strict=True):
        sentences = findings(text)
        same_as = first.setdefault(text, rid)
        for variant, k in variants:
            status, candidate = OK, None
            if same_as != rid:
                status = DUPLICATE
            elif not sentences:
                status = NO_FINDING
            elif variant == CLEAN:
                candidate = sentences
            elif variant == CONTROL:
                candidate = control(sentences, _rng(cfg.seed, rid, variant, k))
            elif variant == "dropped":
                candidate = drop_findings(sentences, k, _rng(cfg.seed, rid, variant, k))
                status = OK if candidate is not None else TOO_FEW
            else:
                candidate = insert_findings(sentences, k, cfg.false_findings, _rng(cfg.seed, rid, variant, k))
                status = OK if candidate is not None else NO_FALSE_FINDING
            rows.append({
                "reference_id": rid, "candidate_id": f"{rid}#{variant}{k or ''}", "variant": variant, "k": k,
                "status": status, "same_as": same_as if same_as != rid else None, "reference": text,
                "candidate": " ".join(candidate) if candidate is not None else None,
            })  # fmt: skip
    return pl.DataFrame(rows, schema=INJECTION_SCHEMA, orient="row")


def detection(clean: Sequence[float], perturbed: Sequence[float], controls: Sequence[float], tolerance: float) -> dict:
    """Counts and shares of one (metric, category, k) cell over its references (aligned lists; a
    reference with a non-finite score on any side is left out and counted as unscored): mean drop
    = mean(clean - perturbed); TP/FN: perturbed flagged or not; FP/TN: control flagged or not,
    where flagged means more than `tolerance` below clean. F1 = 2 TP / (2 TP + FP + FN)."""
    kept = [
        (c, p, q)
        for c, p, q in zip(clean, perturbed, controls, strict=True)
        if math.isfinite(c) and math.isfinite(p) and math.isfinite(q)
    ]
    tp = sum(p < c - tolerance for c, p, _ in kept)
    fp = sum(q < c - tolerance for c, _, q in kept)
    n = len(kept)
    fn, tn = n - tp, n - fp

    def share(num: int, den: int) -> float:
        return num / den if den else math.nan

    return {
        "n": n, "n_unscored": len(clean) - n,
        "mean_drop": sum(c - p for c, p, _ in kept) / n if n else math.nan,
        "tp": tp, "fn": fn, "fp": fp, "tn": tn, "precision": share(tp, tp + fp), "recall": share(tp, n),
        "f1": share(2 * tp, 2 * tp + fp + fn),
    }  # fmt: skip


def detection_table(injected: pl.DataFrame, scores: pl.DataFrame, cfg: ErrorInjection) -> pl.DataFrame:
    """TABLE_SCHEMA rows: per headline score column (srrg.metaeval.run.HEADLINE, all higher is
    better), category and k, the detection of detection() over the references whose candidate of
    that cell could be built."""
    metrics = [c for c in HEADLINE if c in scores.columns]
    by_id = {r["study_id"]: r for r in scores.iter_rows(named=True)}

    def value(rid: str, variant: str, k: int, metric: str) -> float:
        row = by_id.get(f"{rid}#{variant}{k or ''}")
        v = None if row is None else row[metric]
        return math.nan if v is None else float(v)

    ok = injected.filter(pl.col("status") == OK)
    rows = []
    for metric in metrics:
        for category in cfg.categories:
            for k in cfg.k:
                refs = ok.filter((pl.col("variant") == category) & (pl.col("k") == k))["reference_id"].to_list()
                cell = detection(
                    [value(r, CLEAN, 0, metric) for r in refs],
                    [value(r, category, k, metric) for r in refs],
                    [value(r, CONTROL, 0, metric) for r in refs],
                    cfg.tolerance,
                )
                rows.append({"metric": metric, "category": category, "k": k, **cell})
    return pl.DataFrame(rows, schema=TABLE_SCHEMA, orient="row")


def injection_markdown(table: pl.DataFrame, caption: str) -> str:
    """A row per metric, category and k: n, mean drop, precision, recall, F1 (– where undefined)."""

    def fmt(v: float) -> str:
        return "–" if v is None or math.isnan(v) else f"{v:.3f}"

    header = ("Metric", "Error", "k", "n", "Mean drop", "Precision", "Recall", "Detection F1")
    rows = [
        [r["metric"], r["category"], str(r["k"]), str(r["n"]), fmt(r["mean_drop"]), fmt(r["precision"]),
         fmt(r["recall"]), fmt(r["f1"])]
        for r in table.iter_rows(named=True)
    ]  # fmt: skip
    return tables.markdown(header, rows, caption)


def run_error_injection(
    refs_path: str | Path, metrics: Sequence[str], options: Mapping[str, Mapping], cfg: ErrorInjection, out_dir: str
) -> pl.DataFrame:
    """Perturb every reference, score the ok candidates with `srrg score`'s code (run_score: the
    judges through the LLM client and its cache) and write injection.parquet, scores/,
    error_injection.{csv,md} and info.json under out_dir."""
    from srrg.metrics.score import run_score

    out = Path(out_dir)
    refs = read_reports(refs_path)
    injected = perturb(refs["study_id"].to_list(), refs["report"].to_list(), cfg)
    write_parquet(injected, out / "injection.parquet")
    ok = injected.filter(pl.col("status") == OK)
    if ok.filter(pl.col("variant") != CLEAN).filter(pl.col("variant") != CONTROL).is_empty():
        raise UserError(
            f"{refs_path}: no reference could be perturbed ({refs.height} rows; statuses in "
            f"{out / 'injection.parquet'}): nothing to measure"
        )
    pairs = out / "pairs"
    write_parquet(ok.select(pl.col("candidate_id").alias("study_id"), pl.col("reference").alias("report")),
                  pairs / "refs.parquet")  # fmt: skip
    write_parquet(ok.select(pl.col("candidate_id").alias("study_id"), pl.col("candidate").alias("report")),
                  pairs / "hyps.parquet")  # fmt: skip
    run_score(pairs / "refs.parquet", pairs / "hyps.parquet", metrics, out / "scores", options)
    table = detection_table(injected, read_parquet(out / "scores" / "per_report.parquet"), cfg)
    statuses = dict(injected.group_by("status").len().sort("status").iter_rows())
    info = {"references": refs.height, "candidates": injected.height, "statuses": statuses, "seed": cfg.seed,
            "k": list(cfg.k), "categories": list(cfg.categories), "tolerance": cfg.tolerance}  # fmt: skip
    caption = (
        f"Error injection on {refs.height} reference rows ({refs['report'].n_unique()} distinct texts; seed "
        f"{cfg.seed}): mean drop = mean score of the reference "
        "against itself minus that of the perturbed candidate; a candidate is flagged when it scores more than "
        f"{cfg.tolerance:g} below the reference against itself; positives are the perturbed candidates, negatives "
        "the controls (the same findings reordered). Candidates by status: "
        + ", ".join(f"{s} {c}" for s, c in statuses.items())
        + " (docs/metaeval.md, 'Error injection')."
    )
    write_text(out / "error_injection.csv", table.write_csv())
    write_text(out / "error_injection.md", injection_markdown(table, caption))
    write_text(out / "info.json", json.dumps(info, indent=2) + "\n")
    return table
