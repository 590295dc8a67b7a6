"""RadJudge ranking cases (CRIMSON, ../shared/data/radjudge) as a behaviour report of the rule metrics.

Every candidate of a case is scored against the case's ground truth; a case passes when every
relation of its `expected_ranking` holds with RadJudge's rule: `A > B` strictly greater, `A = B`
within 0.01. Prints passes per category for s_score_text, ce (per-report `ce_f1`), BLEU-4 and
ROUGE-L; with --ablate, the s_score_text passes with each free-text option set back to its
S-Score value (docs/metrics.md, "Free-text S-Score"), the dev check behind the defaults.

    .venv/bin/python benchmarks/radjudge_metrics.py [--cases PATH] [--ablate] [--cases-detail]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from srrg.metrics import evaluate
from srrg.metrics.sscore_text import SScoreTextConfig

DEFAULT_CASES = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "radjudge" / "ranking_tests.json"
# metric -> the per-report column that ranks candidates
COLUMNS = {"s_score_text": "s_score_text", "ce": "ce_f1", "bleu": "bleu_4", "rouge_l": "rouge_l"}
EQUAL_WITHIN = 0.01


@dataclass(frozen=True)
class Case:
    category: str
    case_id: str
    reference: str
    candidates: Mapping[str, str]
    relations: tuple[str, ...]


def load_cases(path: Path = DEFAULT_CASES) -> list[Case]:
    """The cases of ranking_tests.json: a list of categories, each with `tests` (ground_truth,
    candidates.<C>.text, expected_ranking as one relation or a list)."""
    out = []
    for category in json.loads(Path(path).read_text(encoding="utf-8")):
        for test in category["tests"]:
            ranking = test["expected_ranking"]
            relations = tuple(ranking) if isinstance(ranking, list) else (ranking,)
            candidates = {name: c["text"] for name, c in test["candidates"].items()}
            out.append(Case(category["category"], test["id"], test["ground_truth"], candidates, relations))
    return out


def holds(relation: str, scores: Mapping[str, float]) -> bool:
    """`A > B`: strictly greater; `A = B`: within EQUAL_WITHIN."""
    left, op, right = relation.split()
    a, b = scores[left], scores[right]
    if op == ">":
        return a > b
    if op == "=":
        return abs(a - b) <= EQUAL_WITHIN
    raise ValueError(f"unknown relation {relation!r}")


def case_scores(cases: Sequence[Case], metrics: Sequence[str], options: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, dict[str, float]]]:
    """Per case: metric -> candidate -> score, from one evaluate call over all candidates."""
    refs = [c.reference for c in cases for _ in c.candidates]
    hyps = [text for c in cases for text in c.candidates.values()]
    per = evaluate(refs, hyps, list(metrics), per_report=True, options=options)
    out, i = [], 0
    for c in cases:
        names = list(c.candidates)
        out.append({m: {n: float(per[COLUMNS[m]][i + k]) for k, n in enumerate(names)} for m in metrics})
        i += len(names)
    return out


def passes(cases: Sequence[Case], scores: Sequence[Mapping[str, Mapping[str, float]]], metric: str) -> list[bool]:
    return [all(holds(r, s[metric]) for r in c.relations) for c, s in zip(cases, scores, strict=True)]


def category_table(cases: Sequence[Case], results: Mapping[str, Sequence[bool]]) -> str:
    """Markdown table: category x metric pass counts, and the totals."""
    categories = list(dict.fromkeys(c.category for c in cases))
    lines = ["| category | cases | " + " | ".join(results) + " |", "|---|---:|" + "---:|" * len(results)]
    for cat in categories:
        idx = [i for i, c in enumerate(cases) if c.category == cat]
        lines.append(f"| {cat} | {len(idx)} | " + " | ".join(str(sum(results[m][i] for i in idx)) for m in results) + " |")
    lines.append(f"| **all** | {len(cases)} | " + " | ".join(str(sum(v)) for v in results.values()) + " |")
    return "\n".join(lines)


# the s_score_text options whose S-Score value differs from the default
PARITY = {name: value for name, value in vars(SScoreTextConfig.s_rrg()).items() if getattr(SScoreTextConfig(), name) != value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--ablate", action="store_true", help="s_score_text passes with each option at its S-Score value")
    parser.add_argument("--cases-detail", action="store_true", help="print each case's scores")
    args = parser.parse_args()
    cases = load_cases(args.cases)
    metrics = list(COLUMNS)
    scores = case_scores(cases, metrics)
    results = {m: passes(cases, scores, m) for m in metrics}
    print(category_table(cases, results))
    if args.cases_detail:
        for c, s, *ok in zip(cases, scores, *(results[m] for m in ("s_score_text", "ce"))):
            shown = {m: {k: round(v, 3) for k, v in s[m].items()} for m in ("s_score_text", "ce")}
            print(c.case_id, " & ".join(c.relations), "s_score_text", "pass" if ok[0] else "fail", "ce", "pass" if ok[1] else "fail", shown)
    if args.ablate:
        variants = {"defaults": {}, **{f"{k}={v}": {k: v} for k, v in PARITY.items()}, "all S-Score (s_rrg)": PARITY}
        for label, options in variants.items():
            ok = passes(cases, case_scores(cases, ["s_score_text"], {"s_score_text": options}), "s_score_text")
            print(f"s_score_text {label:<28} {sum(ok):>2} / {len(cases)}")


if __name__ == "__main__":
    main()
