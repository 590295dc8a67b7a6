"""Compare report generators scored on the same studies: per metric, each system's value with a
paired-bootstrap CI, the difference to the baseline (the first system) with its CI, a paired
bootstrap p-value and an approximate-randomization p-value (docs/metrics.md, "Comparing systems").

The statistic of a metric (srrg.metrics.corpus) is the mean of its per-report values (NaN skipped),
except where the corpus value is not a mean: CE micro precision/recall/F1 are recomputed from
per-report counts and BLEU from its per-pair n-gram statistics, so both equal the summary's numbers
on the full set. The table names the statistic it tests. The resampling and the multiple-comparison
adjustment are srrg.resampling's, shared with the meta-evaluation; the settings are
srrg.settings.compare.CompareConfig.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.metrics.base import score_all
from srrg.metrics.corpus import BLEU_COLUMNS, Statistic, statistics
from srrg.metrics.nlg import bleu_statistics
from srrg.resampling import (
    adjust,
    bootstrap_indices,
    bootstrap_p,
    bootstrap_p_floor,
    percentile_ci,
    randomization_floor,
    randomization_p,
)
from srrg.settings.compare import CompareConfig
from srrg.settings.metrics import NLGConfig


@dataclass(frozen=True)
class Comparison:
    """System b against baseline a on one statistic; CIs are paired-bootstrap percentile intervals."""

    key: str
    statistic: str
    system_a: str
    system_b: str
    value_a: float
    ci_a: tuple[float, float]
    value_b: float
    ci_b: tuple[float, float]
    difference: float
    ci_difference: tuple[float, float]
    p_bootstrap: float
    p_randomization: float
    n: int
    correction: str = "none"
    p_bootstrap_adj: float = math.nan
    p_randomization_adj: float = math.nan
    signature: str = ""  # what produced the numbers (srrg.metrics.signature)
    p_bootstrap_floor: float = 0.0  # the smallest p the resamples could give (2 / (B + 1))
    p_randomization_floor: float = 0.0  # 1 / (rounds + 1) when sampled, 0 when all swaps were enumerated


def finite_studies(a: np.ndarray, b: np.ndarray) -> int:
    """Studies with a finite value in every column of the statistic for both systems: the count a
    caption may claim (a failed judge answer or an unmatched S-Score sub-score is NaN and skipped)."""
    return int((np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)).sum())


def compare_pair(
    a: np.ndarray, b: np.ndarray, stat: Statistic, names: tuple[str, str], cfg: CompareConfig
) -> Comparison:
    """All numbers of one row: values, bootstrap CIs (same resampled studies for both systems),
    both p-values and the smallest value each could take."""
    idx = bootstrap_indices(len(a), cfg.n_boot, cfg.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sa = np.array([stat.fn(a[i]) for i in idx])
        sb = np.array([stat.fn(b[i]) for i in idx])
    value_a, value_b = stat.fn(a), stat.fn(b)
    return Comparison(
        stat.key,
        stat.label,
        *names,
        value_a,
        percentile_ci(sa, cfg.ci_level),
        value_b,
        percentile_ci(sb, cfg.ci_level),
        value_b - value_a,
        percentile_ci(sb - sa, cfg.ci_level),
        bootstrap_p(sb - sa),
        randomization_p(a, b, stat.fn, cfg.n_rounds, cfg.seed),
        finite_studies(a, b),
        p_bootstrap_floor=bootstrap_p_floor(sb - sa),
        p_randomization_floor=randomization_floor(len(a), cfg.n_rounds),
    )


def corrected(rows: Sequence[Comparison], method: str) -> list[Comparison]:
    """Rows with both p-values adjusted over the whole family (every metric x system pair of one
    comparison), each kind of test on its own (srrg.resampling.adjust); raw p-values are kept."""
    boot = adjust([r.p_bootstrap for r in rows], method)
    rand = adjust([r.p_randomization for r in rows], method)
    return [
        replace(r, correction=method, p_bootstrap_adj=b, p_randomization_adj=a) for r, b, a in zip(rows, boot, rand)
    ]


def numeric_columns(table: Mapping[str, Sequence[Any]]) -> list[str]:
    """Per-report columns that hold numbers (statuses, labels and explanations are text)."""
    return [k for k, v in table.items() if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)]


def compare_tables(
    tables: Mapping[str, Mapping[str, Sequence[Any]]],
    cfg: CompareConfig = CompareConfig(),
    signatures: Mapping[str, Mapping[str, str]] | None = None,
    allow_mixed: bool = False,
) -> list[Comparison]:
    """Every system after the first against the first, on the statistics all tables share; the
    tables hold per-report values of the same studies in the same order. signatures: system ->
    column -> signature; a statistic whose columns were made differently is refused unless
    allow_mixed (srrg.metrics.signature.column_signatures)."""
    from srrg.metrics.signature import column_signatures

    names = list(tables)
    if len(names) < 2:
        raise UserError(f"compare needs two or more systems, got {len(names)}")
    lengths = {n: len(next(iter(t.values()), [])) for n, t in tables.items()}
    if len(set(lengths.values())) > 1:
        raise UserError(f"compare: systems must be scored on the same studies, got counts {lengths}")
    shared = [c for c in numeric_columns(tables[names[0]]) if all(c in numeric_columns(tables[n]) for n in names[1:])]
    out = []
    stats = statistics(shared)
    sigs = (
        column_signatures(
            {n: (signatures or {}).get(n, {}) for n in names}, [s.columns[0] for s in stats], allow_mixed, "compare"
        )
        if signatures
        else {}
    )
    for stat in stats:
        arrays = {n: np.column_stack([np.asarray(tables[n][c], dtype=float) for c in stat.columns]) for n in names}
        sig = sigs.get(stat.columns[0], "")
        out += [
            replace(compare_pair(arrays[names[0]], arrays[other], stat, (names[0], other), cfg), signature=sig)
            for other in names[1:]
        ]
    return corrected(out, cfg.correction)


def compare_systems(
    refs: Sequence[str],
    systems: Mapping[str, Sequence[str]],
    metrics: Sequence[str],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    cfg: CompareConfig = CompareConfig(),
) -> list[Comparison]:
    """Score each system's hypotheses (aligned with refs) with the same metrics, then compare;
    with BLEU, its per-pair statistics join the tables so that corpus BLEU is resampled."""
    tables, signatures = {}, {}
    for name, hyps in systems.items():
        result = score_all(refs, hyps, metrics, options)
        table, signatures[name] = dict(result.per_report), result.signatures
        if "bleu" in metrics:
            tokenization = from_dict(NLGConfig, (options or {}).get("bleu"), "bleu options").tokenization
            table.update(zip(BLEU_COLUMNS, map(list, zip(*bleu_statistics(refs, hyps, tokenization)))))
        tables[name] = table
    signatures = {n: {**s, **{c: s.get("bleu_4", "") for c in BLEU_COLUMNS}} for n, s in signatures.items()}
    return compare_tables(tables, cfg, signatures)


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _ci_text(ci: tuple[float, float]) -> str:
    return "n/a" if any(math.isnan(v) for v in ci) else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _p_text(p: float, floor: float = 0.0) -> str:
    """3 decimals; "<0.001" only below 0.001; a p at the floor of its resamples (floor > 0) as
    "≤" the floor rounded up, since the resamples cannot tell how much smaller it is."""
    if math.isnan(p):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    if floor > 0 and p <= floor * (1 + 1e-9):
        return f"≤{math.ceil(floor * 1000 - 1e-9) / 1000:.3f}"
    return f"{p:.3f}"


CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "none"}
FLOOR_NOTE = (
    "Resampled p-values cannot fall below 2/(B+1) (bootstrap, B resamples) or 1/(R+1) (randomization, R sampled "
    "rounds); ≤x marks a p-value at that floor."
)


def to_markdown(rows: Sequence[Comparison], level: float = 0.95) -> str:
    """One table per system pair: values with CIs, difference with CI, both p-values raw and
    adjusted for multiple comparisons (3 decimals). The heading counts the studies with values;
    metrics with fewer (a value missing on either side) are named with their count."""
    pct = f"{level:.0%}"
    parts = []
    for (a, b), group in itertools.groupby(rows, key=lambda r: (r.system_a, r.system_b)):
        group = list(group)
        adj = CORRECTION_NAMES[group[0].correction]
        studies = max(r.n for r in group)
        fewer = ", ".join(f"{r.key} {r.n}" for r in group if r.n < studies)
        parts.append(
            f"### {b} vs {a} ({studies} studies; {pct} paired-bootstrap CIs)\n\n"
            + (f"Studies with a value on both sides, where fewer: {fewer}.\n\n" if fewer else "")
            + f"p adj.: {adj} adjustment over all {len(rows)} comparisons (metrics x system pairs). "
            f"{FLOOR_NOTE}\n\n"
            f"| metric | statistic | {a} | {pct} CI | {b} | {pct} CI | {b} − {a} | {pct} CI | p (bootstrap) | p adj. "
            f"| p (randomization) | p adj. |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
            + "".join(
                f"| {r.key} | {r.statistic} | {_fmt(r.value_a)} | {_ci_text(r.ci_a)} "
                f"| {_fmt(r.value_b)} | {_ci_text(r.ci_b)} "
                f"| {_fmt(r.difference)} | {_ci_text(r.ci_difference)} "
                f"| {_p_text(r.p_bootstrap, r.p_bootstrap_floor)} "
                f"| {_p_text(r.p_bootstrap_adj, r.p_bootstrap_floor)} "
                f"| {_p_text(r.p_randomization, r.p_randomization_floor)} "
                f"| {_p_text(r.p_randomization_adj, r.p_randomization_floor)} |\n"
                for r in group
            )
        )
    return "\n".join(parts)


def to_records(rows: Sequence[Comparison]) -> list[dict[str, Any]]:
    """Flat rows for CSV/Parquet, full precision."""
    return [
        {
            "metric": r.key,
            "statistic": r.statistic,
            "system_a": r.system_a,
            "system_b": r.system_b,
            "n": r.n,
            "value_a": r.value_a,
            "ci_a_low": r.ci_a[0],
            "ci_a_high": r.ci_a[1],
            "value_b": r.value_b,
            "ci_b_low": r.ci_b[0],
            "ci_b_high": r.ci_b[1],
            "difference": r.difference,
            "ci_difference_low": r.ci_difference[0],
            "ci_difference_high": r.ci_difference[1],
            "p_bootstrap": r.p_bootstrap,
            "p_randomization": r.p_randomization,
            "correction": r.correction,
            "p_bootstrap_adj": r.p_bootstrap_adj,
            "p_randomization_adj": r.p_randomization_adj,
            "p_bootstrap_floor": r.p_bootstrap_floor,
            "p_randomization_floor": r.p_randomization_floor,
            "signature": r.signature,
        }
        for r in rows
    ]


def run_compare(
    refs_path: str,
    systems: Mapping[str, str],
    metrics: Sequence[str],
    out_dir: str,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    cfg: CompareConfig = CompareConfig(),
    id_col: str = "study_id",
    ref_col: str = "report",
    hyp_col: str = "report",
) -> list[Comparison]:
    """Join every system's file with the references on study id, keep the studies all systems
    have, compare; writes compare.md, compare.csv (full precision) and unmatched.csv (every study
    left out, per system and side)."""
    import polars as pl

    from srrg.metrics.score import align, load_reports

    refs = load_reports(refs_path, id_col, ref_col)
    hyps, unmatched = {}, []
    for name, path in systems.items():
        pairs, missing = align(refs, load_reports(path, id_col, hyp_col))
        hyps[name] = dict(zip(pairs["study_id"], pairs["hypothesis"]))
        unmatched.append(missing.with_columns(pl.lit(name).alias("system")))
    common = [s for s in refs["study_id"] if all(s in h for h in hyps.values())]
    if not common:
        raise UserError(f"compare: no study id of {refs_path} is in every system's file; see the ids each file holds")
    ref_text = dict(zip(refs["study_id"], refs["report"]))
    rows = compare_systems(
        [ref_text[s] for s in common], {n: [h[s] for s in common] for n, h in hyps.items()}, metrics, options, cfg
    )
    write_outputs(rows, pl.concat(unmatched), out_dir, cfg.ci_level)
    return rows


def system_values(rows: Sequence[Comparison]) -> dict[str, dict[str, float]]:
    """metric -> system -> its value on the compared studies (the baseline's from any of its rows)."""
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r.key, {}).update({r.system_a: r.value_a, r.system_b: r.value_b})
    return out


def write_outputs(rows: Sequence[Comparison], unmatched: Any, out_dir: str, level: float) -> None:
    """compare.md (3 decimals), compare.csv (full precision), unmatched.csv, and the system-ranking
    agreement between metrics (ranking_agreement.csv / .md; docs/metaeval.md)."""
    from pathlib import Path

    import polars as pl

    from srrg.io import write_text
    from srrg.rank_correlation import agreement_markdown, ranking_agreement

    out = Path(out_dir)
    write_text(out / "unmatched.csv", unmatched.write_csv())
    write_text(out / "compare.csv", pl.DataFrame(to_records(rows)).write_csv())
    write_text(out / "compare.md", to_markdown(rows, level) + signature_lines(rows))
    agreement = ranking_agreement(system_values(rows), lower_is_better=())  # raw values, higher first
    caption = (
        "System-ranking agreement: Kendall tau-b between the system rankings two metrics induce (raw values, higher "
        "first; needs three or more systems)."
    )
    write_text(out / "ranking_agreement.csv", agreement.write_csv())
    write_text(out / "ranking_agreement.md", agreement_markdown(agreement, caption))


def signature_lines(rows: Sequence[Comparison]) -> str:
    """The signature of every compared metric, under the tables (docs/metrics.md, "Signatures")."""
    sigs = dict.fromkeys((r.key, r.signature) for r in rows if r.signature)
    return ("\nSignatures:\n\n" + "".join(f"- {k}: `{s}`\n" for k, s in sigs)) if sigs else ""


TEXT_COLUMNS = ("study_id", "reference", "hypothesis")


def run_compare_tables(
    paths: Mapping[str, str], out_dir: str, cfg: CompareConfig = CompareConfig(), allow_mixed: bool = False
) -> list[Comparison]:
    """Compare per_report.parquet tables that `srrg score` already wrote (joined on study_id), so
    judges are not paid for twice. Tables hold no n-gram statistics, so BLEU here is the mean of
    sentence BLEU (the table says so); rescore with run_compare for corpus BLEU. The signatures.csv
    beside each table must agree per column (else a UserError, unless allow_mixed)."""
    import polars as pl

    from srrg.io import read_table
    from srrg.metrics.signature_files import read_signatures

    frames = {name: read_table(path) for name, path in paths.items()}
    for name, frame in frames.items():
        if "study_id" not in frame.columns:
            raise UserError(
                f"compare: {paths[name]} has no study_id column; give per_report tables written by srrg score"
            )
    ids = [{str(s) for s in f["study_id"]} for f in frames.values()]
    first = next(iter(frames.values()))
    common = [str(s) for s in first["study_id"] if all(str(s) in i for i in ids)]
    if not common:
        raise UserError("compare: the per-report tables share no study id")
    unmatched = pl.DataFrame(
        [
            {"study_id": s, "side": "per_report", "system": name}
            for name, i in zip(frames, ids)
            for s in sorted(i - set(common))
        ],
        schema={"study_id": pl.String, "side": pl.String, "system": pl.String},
    )
    tables = {}
    for name, frame in frames.items():
        frame = frame.with_columns(pl.col("study_id").cast(pl.String))
        aligned = pl.DataFrame({"study_id": common}).join(frame, on="study_id", how="left", maintain_order="left")
        tables[name] = {
            c: aligned[c].cast(pl.Float64).fill_null(math.nan).to_list()
            for c in aligned.columns
            if c not in TEXT_COLUMNS and aligned[c].dtype.is_numeric()
        }
    rows = compare_tables(tables, cfg, {name: read_signatures(path) for name, path in paths.items()}, allow_mixed)
    write_outputs(rows, unmatched, out_dir, cfg.ci_level)
    return rows
