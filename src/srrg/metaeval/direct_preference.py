"""GREEN Table 7's direct preference (docs/metaeval.md, "Direct preference"): instead of scoring
each candidate, a judge is shown the reference and two candidates of one case and asked which is
better. Its accuracy against the experts' preference stands beside each metric's accuracy on the
same comparisons (a metric prefers the candidate it scores higher).

A comparison is a within-case pair of rated candidates (in the order of the pairs table: the
earlier one is A) that the experts' mean judgement prefers one of; a tie of the experts is no
comparison (counted). Outcomes per row: correct, wrong, tie (a metric scores both equal) or failed
(the judge's answer is missing, cut off or unreadable, or a metric has no score): never a guess.
accuracy = correct / comparisons (ties and failures count as not correct, so every row has the
same denominator); accuracy (answered) = correct / (correct + wrong)."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from srrg.errors import UserError
from srrg.io import write_parquet, write_text
from srrg.llm.base import LLMRequest
from srrg.metaeval import tables
from srrg.metaeval.readers.common import RATINGS_SCHEMA
from srrg.metaeval.run import HEADLINE, ID, checked_table, resolve_human
from srrg.metrics.base import MetricResult
from srrg.metrics.judges.common import OK, UNPARSEABLE, Reply, as_reply, ask, check_failures, client_for, template
from srrg.metrics.judges.common import truncate_words as cut
from srrg.settings.metaeval import DirectPreference, MetaevalConfig

NAME = "direct_preference"
A, B = "A", "B"
CORRECT, WRONG, TIE, FAILED = "correct", "wrong", "tie", "failed"
# the last line of an answer: "Preferred: A" (markdown emphasis, quotes, "candidate" and a full stop allowed)
_CHOICE = re.compile(r"[\s*_\"'`]*preferred\s*:[\s*_\"'`]*(?:candidate\s+)?([ab])[\s*_\"'`.]*", re.IGNORECASE)
TABLE_SCHEMA = {
    "row": pl.String, "kind": pl.String, "comparisons": pl.Int64, "correct": pl.Int64, "wrong": pl.Int64,
    "tie": pl.Int64, "failed": pl.Int64, "accuracy": pl.Float64, "accuracy_answered": pl.Float64,
}  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """Two rated candidates of one case and the side the experts prefer (A or B)."""

    cluster: str
    a: str
    b: str
    human: str


def parse_preference(answer: str | Reply | None) -> tuple[str | None, str]:
    """(A or B, status): the choice on the answer's last non-blank line, exactly as the prompt asks;
    anything else is unparseable, and a reply that failed in transport (no_response, truncated) is
    never read."""
    reply = as_reply(answer)
    if reply.status != OK or reply.text is None:
        return None, reply.status
    lines = [line for line in reply.text.splitlines() if line.strip()]
    match = _CHOICE.fullmatch(lines[-1]) if lines else None
    return (match.group(1).upper(), OK) if match else (None, UNPARSEABLE)


def comparisons(pairs: pl.DataFrame, human: Mapping[str, float], lower: bool) -> tuple[list[Comparison], dict]:
    """The comparisons of every case (pairs' `cluster`, in the pairs' order) between candidates with
    a human judgement, and the counts of what is left out: expert ties, candidates without one."""
    members: dict[str, list[str]] = {}
    for pid, cluster in zip(pairs["pair_id"], pairs["cluster"], strict=True):
        members.setdefault(str(cluster), []).append(str(pid))
    out, ties, unrated = [], 0, 0
    for cluster, ids in members.items():
        for a, b in itertools.combinations(ids, 2):
            ha, hb = human.get(a), human.get(b)
            if ha is None or hb is None or not (math.isfinite(ha) and math.isfinite(hb)):
                unrated += 1
            elif ha == hb:
                ties += 1
            else:
                out.append(Comparison(cluster, a, b, A if (ha > hb) != lower else B))
    return out, {"expert_ties": ties, "without_human": unrated}


def preference_requests(
    items: Sequence[Comparison], texts: Mapping[str, tuple[str, str]], cfg: DirectPreference
) -> list[LLMRequest]:
    """One request per comparison: the reference and both candidates, each cut to cfg.max_words."""
    prompt = template(NAME, ("reference", "candidate_a", "candidate_b"), modality=cfg.modality)
    return [
        prompt.render(
            purpose=NAME, max_tokens=cfg.max_tokens, reference=cut(texts[c.a][0], cfg.max_words),
            candidate_a=cut(texts[c.a][1], cfg.max_words), candidate_b=cut(texts[c.b][1], cfg.max_words),
        )
        for c in items
    ]  # fmt: skip


def metric_outcome(c: Comparison, values: Mapping[str, float]) -> str:
    """A metric's outcome on one comparison (higher is better: the HEADLINE columns)."""
    va, vb = values.get(c.a, math.nan), values.get(c.b, math.nan)
    if not (math.isfinite(va) and math.isfinite(vb)):
        return FAILED
    if va == vb:
        return TIE
    return CORRECT if (A if va > vb else B) == c.human else WRONG


def accuracy_row(row: str, kind: str, outcomes: Sequence[str]) -> dict:
    """A table row: counts per outcome, accuracy = correct / all, accuracy (answered) = correct /
    (correct + wrong); NaN where the denominator is 0."""
    n = {k: outcomes.count(k) for k in (CORRECT, WRONG, TIE, FAILED)}
    answered = n[CORRECT] + n[WRONG]
    return {
        "row": row, "kind": kind, "comparisons": len(outcomes), **n,
        "accuracy": n[CORRECT] / len(outcomes) if outcomes else math.nan,
        "accuracy_answered": n[CORRECT] / answered if answered else math.nan,
    }  # fmt: skip


def preference_markdown(table: pl.DataFrame, caption: str) -> str:
    def fmt(v: float) -> str:
        return "–" if v is None or math.isnan(v) else f"{v:.3f}"

    header = ("", "Comparisons", "Correct", "Wrong", "Tie", "Failed", "Accuracy", "Accuracy (answered)")
    rows = [
        [r["row"], str(r["comparisons"]), str(r["correct"]), str(r["wrong"]), str(r["tie"]), str(r["failed"]),
         fmt(r["accuracy"]), fmt(r["accuracy_answered"])]
        for r in table.iter_rows(named=True)
    ]  # fmt: skip
    return tables.markdown(header, rows, caption)


def run_metaeval_preference(
    pairs_path: str, ratings_path: str, scores_path: str, cfg: DirectPreference, out_dir: str | Path, client=None
) -> pl.DataFrame:
    """Ask the judge once per comparison (through the LLM client and its cache), and write
    preference.{csv,md} (the judge's row, then every headline metric of the scores),
    comparisons.parquet (each comparison, the judge's choice, status and answer) and info.json.
    A judge failing more than cfg.max_failure_fraction of its answers fails the stage after writing."""
    pairs = checked_table(
        pairs_path, ["pair_id", "reference", "candidate", "cluster"], "pairs.parquet of metaeval-prepare"
    )
    ratings = checked_table(ratings_path, RATINGS_SCHEMA, "ratings.parquet of `srrg metaeval-prepare`")
    scores = checked_table(scores_path, [ID], "per_report.parquet of `srrg score`")
    human, target, lower = resolve_human(scores, ratings, MetaevalConfig(human_target=cfg.human_target))
    items, left_out = comparisons(pairs, dict(zip(human[ID], human["human"], strict=True)), lower)
    if not items:
        raise UserError(
            f"{pairs_path}: no case has two rated candidates the experts prefer one of ({left_out}); "
            "direct preference needs pairwise expert preferences"
        )
    texts = {str(p): (r, c) for p, r, c in zip(pairs["pair_id"], pairs["reference"], pairs["candidate"], strict=True)}
    try:
        client = client_for(client, cfg)
    except ValueError as err:  # a backend that cannot judge: the settings' fault, one line
        raise UserError(f"metaeval.preference.llm: {err}") from None
    replies = ask(client, preference_requests(items, texts, cfg))
    parsed = [parse_preference(r) for r in replies]
    judge = [FAILED if s != OK else CORRECT if choice == c.human else WRONG for c, (choice, s) in zip(items, parsed)]
    model = str(cfg.llm.get("model", "judge"))
    rows = [accuracy_row(f"direct preference ({model})", "judge", judge)]
    for metric in (m for m in HEADLINE if m in scores.columns):
        values = {str(k): math.nan if v is None else float(v) for k, v in zip(scores[ID], scores[metric])}
        rows.append(accuracy_row(metric, "metric", [metric_outcome(c, values) for c in items]))
    table = pl.DataFrame(rows, schema=TABLE_SCHEMA, orient="row")
    out = Path(out_dir)
    write_parquet(
        pl.DataFrame({
            "cluster": [c.cluster for c in items], "pair_a": [c.a for c in items], "pair_b": [c.b for c in items],
            "human": [c.human for c in items], "judge": [p[0] for p in parsed], "status": [p[1] for p in parsed],
            "answer": [r.text for r in replies],
        }, schema_overrides={"judge": pl.String, "answer": pl.String}),
        out / "comparisons.parquet",
    )  # fmt: skip
    statuses = [s for _, s in parsed]
    info = {"target": target, "comparisons": len(items), **left_out,
            "judge_statuses": {s: statuses.count(s) for s in sorted(set(statuses))}}  # fmt: skip
    caption = (
        f"Direct preference on {len(items)} within-case comparisons (experts' {target}; {left_out['expert_ties']} "
        f"expert ties and {left_out['without_human']} comparisons without a human judgement left out): the judge "
        "is asked which of two candidates is better; a metric prefers the one it scores higher. Accuracy = correct / "
        "comparisons (ties and failed answers count as not correct); answered = correct / (correct + wrong) "
        "(docs/metaeval.md, 'Direct preference')."
    )
    write_text(out / "preference.csv", table.write_csv())
    write_text(out / "preference.md", preference_markdown(table, caption))
    write_text(out / "info.json", json.dumps(info, indent=2) + "\n")
    check_failures(NAME, statuses, replies, client, cfg, MetricResult({}, {}))
    return table
