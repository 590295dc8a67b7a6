"""RadJudge ranking cases (CRIMSON repository, RadJudge/test_cases.py RANKING_TESTS, MIT; layout in
docs/metaeval.md): behavioural checks that a report metric ranks candidate reports as radiologists
expect, e.g. that a report with more false findings scores lower.

Layout: a JSON list of categories {category, description, tests: [{id, ground_truth, candidates:
{C1: {text, context?}, ...}, expected_ranking}]}; expected_ranking is "Ci > Cj" (Ci must score
strictly higher), "Ci = Cj" (scores within 0.01) or a list of such relations that must all hold
(RadJudge's own rule). A NaN score fails its relation. A candidate's patient context (age,
indication) goes to the metrics with its pair (Metric.compute_with_context): CRIMSON and s_score_text
(variant v2) read it, the other text metrics ignore it; the cases that carry one are counted in info.json.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from srrg.errors import UserError
from srrg.io import write_text
from srrg.metrics.base import score_all
from srrg.metrics.context import patient_context
from srrg.metrics.corpus import statistics

EQUAL_TOLERANCE = 0.01
RELATION = re.compile(r"^\s*(C\d+)\s*([>=])\s*(C\d+)\s*$")
# the per-candidate statistic a metric is checked on when --keys does not say (srrg.metrics.corpus names;
# ce: its per-report F1, docs/metrics.md)
DEFAULT_KEYS = {"bleu": "bleu_4", "ce": "ce_f1"}


@dataclass(frozen=True)
class RankingCase:
    case_id: str
    category: str
    reference: str
    candidates: dict[str, str]
    relations: tuple[tuple[str, str, str], ...]
    contexts: dict[str, dict[str, str]]  # candidate -> its patient context (srrg.metrics.context; {} = none)

    @property
    def has_context(self) -> bool:
        return any(self.contexts.values())


def parse_relations(expected: Any, where: str) -> tuple[tuple[str, str, str], ...]:
    """("C1", ">", "C2") triples of an expected_ranking string or list of strings."""
    items = [expected] if isinstance(expected, str) else expected
    if not isinstance(items, list) or not items:
        raise UserError(f"{where}: expected_ranking must be a string or a list of strings, got {expected!r}")
    out = []
    for item in items:
        m = RELATION.match(item) if isinstance(item, str) else None
        if m is None:
            raise UserError(f"{where}: expected_ranking {item!r} is not 'Ci > Cj' or 'Ci = Cj'")
        out.append((m.group(1), m.group(2), m.group(3)))
    return tuple(out)


def read_cases(path: str | Path) -> list[RankingCase]:
    """Every test of every category, in file order; a relation naming an absent candidate, a
    duplicate id or an empty file is a UserError."""
    path = Path(path)
    path = path / "ranking_tests.json" if path.is_dir() else path
    if not path.is_file():
        raise UserError(f"{path}: no such file (RadJudge ranking_tests.json)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(doc, list) or not all(isinstance(c, Mapping) and isinstance(c.get("tests"), list) for c in doc):
        raise UserError(f"{path}: expected a JSON list of categories, each with a 'tests' list")
    cases, seen = [], set()
    for cat in doc:
        for n, test in enumerate(cat["tests"]):
            if not isinstance(test, Mapping):
                raise UserError(f"{path} category {cat.get('category')!r} test {n}: expected an object, got {test!r}")
            where = f"{path} case {test.get('id')!r}"
            cands = test.get("candidates")
            if not isinstance(cands, Mapping) or not all(
                isinstance(c, Mapping) and isinstance(c.get("text"), str) for c in cands.values()
            ):
                raise UserError(f"{where}: candidates must map C1, C2, ... to objects with a text")
            if not isinstance(test.get("ground_truth"), str) or test.get("id") is None:
                raise UserError(f"{where}: a case needs an id and a ground_truth text")
            relations = parse_relations(test.get("expected_ranking"), where)
            absent = sorted({c for a, _, b in relations for c in (a, b)} - set(cands))
            if absent:
                raise UserError(f"{where}: expected_ranking names {absent}, not among the candidates {sorted(cands)}")
            if str(test["id"]) in seen:
                raise UserError(f"{where}: duplicate case id")
            seen.add(str(test["id"]))
            texts = {k: v["text"] for k, v in cands.items()}
            contexts = {k: patient_context(_context_of(v, where)) for k, v in cands.items()}
            category = str(cat.get("category", ""))
            cases.append(RankingCase(str(test["id"]), category, test["ground_truth"], texts, relations, contexts))
    if not cases:
        raise UserError(f"{path}: no ranking case; nothing to check")
    return cases


def _context_of(candidate: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
    context = candidate.get("context")
    if context is not None and not isinstance(context, Mapping):
        raise UserError(f'{where}: a candidate\'s context must be an object such as {{"age": "82"}}, got {context!r}')
    return context


def holds(relation: tuple[str, str, str], scores: Mapping[str, float]) -> bool:
    """RadJudge's rule: '>' strictly greater, '=' within 0.01; NaN never holds."""
    a, op, b = relation
    sa, sb = scores[a], scores[b]
    if math.isnan(sa) or math.isnan(sb):
        return False
    return sa > sb if op == ">" else abs(sa - sb) <= EQUAL_TOLERANCE


def metric_keys(metrics: Sequence[str], keys: Mapping[str, str]) -> dict[str, str]:
    return {m: keys.get(m, DEFAULT_KEYS.get(m, m)) for m in metrics}


def candidate_scores(
    cases: Sequence[RankingCase], metrics: Sequence[str], keys: Mapping[str, str], options: Mapping[str, Any] | None
) -> dict[str, list[dict[str, float]]]:
    """metric -> per case {candidate: score}: every candidate scored against its case's ground
    truth with its patient context in one call per metric, reduced to the metric's key statistic
    (srrg.metrics.corpus.statistics)."""
    slots = [(i, name) for i, case in enumerate(cases) for name in case.candidates]
    refs = [cases[i].reference for i, _ in slots]
    hyps = [cases[i].candidates[name] for i, name in slots]
    contexts = [cases[i].contexts[name] for i, name in slots] if any(c.has_context for c in cases) else None
    out = {}
    for metric, key in metric_keys(metrics, keys).items():
        table = score_all(refs, hyps, [metric], options, contexts).per_report
        numeric = [
            c for c, v in table.items() if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
        ]
        stats = {s.key: s for s in statistics(numeric)}
        if key not in stats:
            raise UserError(
                f"metaeval-rank: {metric} has no statistic {key!r}; choose one of {sorted(stats)} with --keys"
            )
        stat = stats[key]
        per_case: list[dict[str, float]] = [{} for _ in cases]
        for row, (i, name) in enumerate(slots):
            per_case[i][name] = float(stat.fn(np.array([[float(table[c][row]) for c in stat.columns]])))
        out[metric] = per_case
    return out


def check_cases(
    cases: Sequence[RankingCase], scores: Mapping[str, list[dict[str, float]]], keys: Mapping[str, str]
) -> pl.DataFrame:
    """One row per case and metric: the scores, whether every relation holds, and the ones that do not."""
    rows = []
    for metric, per_case in scores.items():
        for case, s in zip(cases, per_case):
            failed = [f"{a} {op} {b}" for a, op, b in case.relations if not holds((a, op, b), s)]
            rows.append({
                "case_id": case.case_id, "category": case.category, "metric": metric, "key": keys[metric],
                "expected": "; ".join(f"{a} {op} {b}" for a, op, b in case.relations),
                "scores": json.dumps({k: (None if math.isnan(v) else round(v, 6)) for k, v in s.items()}),
                "passed": not failed, "failed": "; ".join(failed),
            })  # fmt: skip
    return pl.DataFrame(rows)


def category_table(checked: pl.DataFrame) -> pl.DataFrame:
    """category x metric pass counts (and the total), categories in file order."""
    order = checked["category"].unique(maintain_order=True).to_list()
    metrics = checked["metric"].unique(maintain_order=True).to_list()
    rows = []
    for category in [*order, "Total"]:
        part = checked if category == "Total" else checked.filter(pl.col("category") == category)
        row: dict[str, Any] = {"category": category, "n_cases": part["case_id"].n_unique()}
        for metric in metrics:
            row[metric] = int(part.filter(pl.col("metric") == metric)["passed"].sum())
        rows.append(row)
    return pl.DataFrame(rows)


def category_markdown(table: pl.DataFrame, keys: Mapping[str, str], caption: str) -> str:
    metrics = [c for c in table.columns if c not in {"category", "n_cases"}]
    header = ["Category", "cases", *(f"{m} ({keys[m]})" for m in metrics)]
    lines = [caption, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in table.iter_rows(named=True):
        lines.append(
            f"| {r['category']} | {r['n_cases']} | " + " | ".join(f"{r[m]}/{r['n_cases']}" for m in metrics) + " |"
        )
    return "\n".join(lines) + "\n"


def run_metaeval_rank(
    cases_path: str, metrics: Sequence[str], keys: Mapping[str, str], options: Mapping[str, Any], out_dir: str | Path
) -> tuple[str, int]:
    """The metaeval-rank stage: every case's candidates scored and checked, written to out_dir as
    rank_cases.csv, rank_categories.csv/.md and info.json; returns (the category table as
    Markdown, the number of cases)."""
    cases = read_cases(cases_path)
    checked_keys = metric_keys(list(metrics), dict(keys))
    checked = check_cases(cases, candidate_scores(cases, list(metrics), checked_keys, options), checked_keys)
    table = category_table(checked)
    out = Path(out_dir)
    caption = (
        f"RadJudge ranking cases passed per category ({len(cases)} cases; '>' strictly greater, '=' within "
        f"{EQUAL_TOLERANCE}, every relation of a case must hold; patient context reaches crimson and "
        "s_score_text v2, the other text metrics ignore it)."
    )
    markdown = category_markdown(table, checked_keys, caption)
    write_text(out / "rank_cases.csv", checked.write_csv())
    write_text(out / "rank_categories.csv", table.write_csv())
    write_text(out / "rank_categories.md", markdown)
    info = {
        "cases": cases_path,
        "n_cases": len(cases),
        "n_categories": table.height - 1,
        "metrics": list(metrics),
        "keys": checked_keys,
        "n_cases_with_context": sum(c.has_context for c in cases),
        "equal_tolerance": EQUAL_TOLERANCE,
    }
    write_text(out / "info.json", json.dumps(info, indent=2) + "\n")
    return markdown, len(cases)
