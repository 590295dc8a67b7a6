"""Meta-evaluation of one scored ratings dataset: correlations, paired tests, count-level P/R/F1
and ensembles, written as tables. Pure functions over Polars frames plus one writer."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_text
from srrg.metaeval import tables
from srrg.metaeval.between import better_than, metric_tests
from srrg.metaeval.ceiling import (
    CEILING,
    MATRIX_METHODS,
    ONE_RATER,
    category_rater_matrices,
    category_rows,
    ceiling,
    inter_rater_table,
    leave_one_out,
    pooled_ceiling,
    rater_matrix,
    rater_rows,
)
from srrg.metaeval.ceiling_tables import (
    SUMMARY_HEADER,
    better_than_markdown,
    ceiling_figure,
    per_category_markdown,
    per_rater_markdown,
    summary_rows,
)
from srrg.metaeval.correlation import Correlation, correlate, paired_test
from srrg.metaeval.counts import category_prf
from srrg.metaeval.ensembles import evaluate_ensemble, evaluate_mean_ensemble, split_mask
from srrg.metaeval.preference import preference_agreement
from srrg.metaeval.readers.common import (
    RATINGS_SCHEMA,
    human_category_counts,
    human_scores,
    pair_clusters,
    refuse_repeats,
)
from srrg.metaeval.tie_accuracy import calibrated, tie_calibrated_accuracy
from srrg.metrics.judges.common import CATEGORIES
from srrg.rank_correlation import ALL_METHODS, METHODS, agreement_markdown, orient, ranking_agreement, system_means
from srrg.settings.fields import SettingsError
from srrg.settings.metaeval import MetaevalConfig, check_metric_names

ID = "study_id"  # the per_report.parquet key written by `srrg score` (= pair_id of the ratings)
# headline score columns correlated by default (per-category counts and statuses are not)
HEADLINE = (
    "bleu_1", "bleu_4", "meteor", "rouge_l", "cider", "s_score", "s_score_text", "ce_f1", "green", "vert",
    "green_formula", "f1_formula", "weighted_formula", "gema", "proxy_rating",
)  # fmt: skip


@dataclass
class MetaevalResult:
    correlations: pl.DataFrame
    paired: pl.DataFrame
    category_prf: pl.DataFrame
    ensembles: pl.DataFrame
    info: dict[str, Any]
    preference: pl.DataFrame = field(default_factory=pl.DataFrame)
    systems: pl.DataFrame = field(default_factory=pl.DataFrame)
    summary: pl.DataFrame = field(default_factory=pl.DataFrame)
    per_rater: pl.DataFrame = field(default_factory=pl.DataFrame)
    inter_rater: pl.DataFrame = field(default_factory=pl.DataFrame)
    per_category: pl.DataFrame = field(default_factory=pl.DataFrame)
    metric_tests: pl.DataFrame = field(default_factory=pl.DataFrame)
    better_than: pl.DataFrame = field(default_factory=pl.DataFrame)


def resolve_human(
    scores: pl.DataFrame, ratings: pl.DataFrame | None, cfg: MetaevalConfig
) -> tuple[pl.DataFrame, str, bool]:
    """(frame with ID and `human`, target description, lower_is_better)."""
    if cfg.human_column:
        if cfg.human_column not in scores.columns:
            raise UserError(f"human_column {cfg.human_column!r} is not a score column; have {scores.columns}")
        return (
            scores.select(ID, pl.col(cfg.human_column).cast(pl.Float64).alias("human")),
            f"proxy:{cfg.human_column}",
            False,
        )
    if ratings is None:
        raise UserError("no human ratings: pass --ratings, or set metaeval.human_column to a proxy score column")
    target = cfg.human_target
    if target == "auto":
        target = "rating" if (ratings["kind"] == "rating").any() else "errors_significant"
    human, lower = human_scores(ratings, target)
    return human.rename({"pair_id": ID}), target, lower


def metric_columns(scores: pl.DataFrame, cfg: MetaevalConfig, exclude: Sequence[str]) -> list[str]:
    if cfg.metrics:
        missing = [m for m in cfg.metrics if m not in scores.columns]
        if missing:
            raise UserError(f"metric column(s) {missing} not in the scores table; have {scores.columns}")
        return list(cfg.metrics)
    numeric = [c for c, t in scores.schema.items() if t.is_numeric() and c not in exclude]
    headline = [c for c in HEADLINE if c in numeric]
    return headline or numeric


def measured_metrics(joined: pl.DataFrame, metrics: Sequence[str], drop: bool) -> tuple[list[str], list[str]]:
    """Nothing measured is an error: some scored pair must have a human score, and every metric
    column a finite value on a rated pair; with `drop` such columns are left out instead (named in
    the caption), unless none is left. Returns (measured, left out)."""
    rated = joined.filter(pl.col("human").is_not_null())
    if rated.is_empty():
        raise UserError(
            f"no scored pair has a human score: none of the {joined.height} {ID}s of the scores is a rated pair_id "
            "(wrong ratings file, or ratings without a value)"
        )
    empty = [m for m in metrics if not rated[m].cast(pl.Float64).fill_null(math.nan).is_finite().any()]
    if empty and (not drop or len(empty) == len(metrics)):
        which = f"metric column {empty[0]!r} has" if len(empty) == 1 else f"metric columns {empty} have"
        raise UserError(f"{which} no finite value on the {rated.height} rated pairs (failed or unscored metric)")
    return [m for m in metrics if m not in empty], empty


def cluster_ids(ids: Sequence[str], pairs: pl.DataFrame | None) -> list[str] | None:
    """The cluster of every scored pair from the pairs table of `srrg metaeval-prepare`."""
    if pairs is None:
        return None
    mapping = pair_clusters(pairs)
    missing = [i for i in ids if i not in mapping]
    if missing:
        raise UserError(
            f"{len(missing)} scored pair(s) (e.g. {missing[0]!r}) are not in the pairs table; "
            "pass the pairs.parquet of the same dataset"
        )
    return [mapping[i] for i in ids]


def preference_frame(xs: Mapping[str, Any], y: Any, clusters: Sequence[str] | None) -> pl.DataFrame:
    """Within-case preference agreement of every metric (empty when no case has two rated pairs)."""
    if clusters is None:
        return pl.DataFrame()
    rows = [{"metric": m, **asdict(preference_agreement(x, y, clusters))} for m, x in xs.items()]
    return pl.DataFrame(rows) if rows and rows[0]["n_cases"] else pl.DataFrame()


def systems_frame(xs: Mapping[str, Any], y: Any, ids: Sequence[str], pairs: pl.DataFrame | None) -> pl.DataFrame:
    """Kendall tau between the system rankings of the human score and of every metric (per-system
    means of the oriented values over the rated pairs); empty without a system column."""
    if pairs is None or "system" not in pairs.columns:
        return pl.DataFrame()
    system = dict(zip(pairs["pair_id"], pairs["system"]))
    frame = pl.DataFrame({"system": [system.get(i) or "" for i in ids], "human": y, **dict(xs)}).filter(
        pl.col("system") != "", pl.col("human").is_not_nan()
    )
    if frame["system"].n_unique() < 2:
        return pl.DataFrame()
    return ranking_agreement(system_means(frame, "system", ["human", *xs]), lower_is_better=())  # oriented above


def few_cases_note(rows: Sequence[Correlation], min_cases: int) -> str:
    """The caption's reason for CIs left out because too few cases were resampled ("" when none was)."""
    few = [c.n_clusters for c in rows if c.ci_status == "too_few_cases"]
    if not few:
        return ""
    return (
        f"No CI or paired test (–) where only {max(few)} or fewer cases were resampled: a case-clustered bootstrap "
        f"needs at least {min_cases} cases (metaeval.correlate.min_cases)."
    )


def run_metaeval(
    scores: pl.DataFrame, ratings: pl.DataFrame | None, cfg: MetaevalConfig, pairs: pl.DataFrame | None = None
) -> MetaevalResult:
    """Everything of docs/metaeval.md for one dataset; every scored pair is accounted for in
    `info`. pairs: the pairs table of `srrg metaeval-prepare` (cluster ids for the bootstrap and
    the within-case agreement, systems for the system-ranking agreement)."""
    human, target, human_lower = resolve_human(scores, ratings, cfg)
    joined = scores.join(human, on=ID, how="left")
    columns = metric_columns(scores, cfg, exclude=[cfg.human_column or ""])
    try:  # with `metrics` unset the correlated columns are known only here (docs/metaeval.md)
        check_metric_names(cfg, columns, "the scores table's")
    except SettingsError as err:
        raise UserError(f"metaeval.correlate.{err}") from None
    metrics, unmeasured = measured_metrics(joined, columns, cfg.drop_unmeasured)
    ids = joined[ID].cast(pl.String).to_list()
    clusters = cluster_ids(ids, pairs)
    boot_clusters = clusters if cfg.resample == "cluster" else None
    y = orient(joined["human"].to_list(), human_lower)
    xs = {m: orient(joined[m].cast(pl.Float64).to_list(), m in cfg.lower_is_better) for m in metrics}
    boot: dict[str, Any] = {"n_boot": cfg.n_boot, "seed": cfg.seed, "level": cfg.ci_level}
    boot |= {"clusters": boot_clusters, "min_clusters": cfg.min_cases}
    rows: list[tuple[str, Correlation]] = [
        (m, correlate(xs[m], y, method, **boot)) for m in metrics for method in METHODS
    ]
    raters = rater_matrix(ratings, target, ids, human_lower) if ratings is not None and not cfg.human_column else {}
    sides = leave_one_out(raters)
    top = {method: ceiling(sides, method, boot) for method in ALL_METHODS} if len(raters) > 1 else {}
    corr = tables.correlation_frame([(CEILING, top[m]) for m in METHODS if top] + rows)

    paired_rows = []
    kendall = {m: c.value for m, c in rows if c.method == "kendall" and not math.isnan(c.value)}
    reference = cfg.paired_reference or (max(kendall, key=kendall.get) if kendall else None)
    if reference is not None:
        if reference not in xs:
            raise UserError(f"paired_reference {reference!r} is not among the metrics {metrics}")
        for m in metrics:
            if m != reference:
                for method in METHODS:
                    test = paired_test(xs[reference], xs[m], y, method, (reference, m), **boot)
                    paired_rows.append(asdict(test))
    paired = pl.DataFrame(paired_rows) if paired_rows else pl.DataFrame()

    prf_rows = []
    if ratings is not None and not cfg.human_column:
        counts = human_category_counts(ratings).rename({"pair_id": ID})
        if counts.width > 1:
            with_counts = scores.join(counts, on=ID, how="left")
            for judge in cfg.count_judges:
                cols = {
                    c: f"{judge}_sig_{c}"
                    for c in CATEGORIES
                    if f"{judge}_sig_{c}" in scores.columns and c in counts.columns
                }
                if not cols:
                    continue
                judged = {c: with_counts[col].cast(pl.Float64).fill_null(math.nan).to_list() for c, col in cols.items()}
                humans = {c: with_counts[c].cast(pl.Float64).fill_null(math.nan).to_list() for c in cols}
                for category, prf in category_prf(judged, humans).items():
                    prf_rows.append({"judge": judge, "category": category, **prf})
    prf_frame = pl.DataFrame(prf_rows) if prf_rows else pl.DataFrame()

    ens_rows = []
    if cfg.ensembles:
        mask = split_mask(joined[ID].to_list(), cfg.test_fraction, cfg.ensemble_seed)
        for name, feats in cfg.ensembles.items():
            unknown = [f for f in feats if f not in xs]
            if unknown:
                raise UserError(f"ensemble {name!r}: feature(s) {unknown} are not among the metrics {metrics}")
            res = evaluate_ensemble(name, {f: xs[f] for f in feats}, y, mask)
            ens_rows.append({**asdict(res), "features": ",".join(res.features), "weights": json.dumps(res.weights)})
            mean = evaluate_mean_ensemble(f"{name}:mean", {f: xs[f] for f in feats}, y, mask)  # beside least squares
            ens_rows.append({**asdict(mean), "features": ",".join(mean.features), "weights": json.dumps(mean.weights)})
            for f in feats:  # each member alone on the same held-out pairs, for comparison
                single = evaluate_ensemble(f"{name}:{f}", {f: xs[f]}, y, mask)
                ens_rows.append({**asdict(single), "features": f, "weights": json.dumps(single.weights)})
    ens = pl.DataFrame(ens_rows) if ens_rows else pl.DataFrame()

    kendall_rows = {m: c for m, c in rows if c.method == "kendall"}
    human_parts = human_frames(raters, sides, top, xs, y, boot, ratings if raters else None, ids, kendall_rows)
    tests = metric_tests(xs, y, boot, n_permutations=cfg.n_permutations, correction=cfg.correction)
    matrix = better_than(tests, metrics)

    n_rated = int(joined["human"].is_not_null().sum())
    info = {
        "n_scored_pairs": scores.height,
        "n_with_human": n_rated,
        "n_without_human": scores.height - n_rated,
        "resampling": f"cases ({len(set(boot_clusters))} clusters)" if boot_clusters is not None else "pairs",
        "human_target": target,
        "human_lower_is_better": human_lower,
        "sign_convention": "both sides oriented higher-is-better before correlating"
        + (" (human error counts negated)" if human_lower else ""),
        "metrics": metrics,
        "metrics_without_value": unmeasured,
        "paired_reference": reference,
        "n_boot": cfg.n_boot,
        "seed": cfg.seed,
        "min_cases": cfg.min_cases,
        "ci_note": few_cases_note([c for _, c in rows], cfg.min_cases),
        "caveat": cfg.caveat,
        "raters": list(raters),
        "ceiling_note": ceiling_note(raters, cfg.human_column),
        "n_permutations": cfg.n_permutations,
        "correction": cfg.correction,
    }
    preference, systems = preference_frame(xs, y, clusters), systems_frame(xs, y, ids, pairs)
    better = pl.DataFrame({"metric": metrics, **{m: [row[k] for row in matrix] for k, m in enumerate(metrics)}})
    return MetaevalResult(
        corr, paired, prf_frame, ens, info, preference, systems, **human_parts,
        metric_tests=pl.DataFrame(tests, infer_schema_length=None) if tests else pl.DataFrame(), better_than=better,
    )  # fmt: skip


def printed_summary(result: MetaevalResult) -> str:
    """What `srrg metaeval-correlate` prints besides its counts: the human ceiling row (or why there
    is none) and the metric x metric "better than" matrix."""
    info, lines = result.info, []
    top = result.summary.filter(pl.col("metric") == CEILING) if not result.summary.is_empty() else result.summary
    if top.height:
        lines.append(
            tables.markdown(
                SUMMARY_HEADER,
                summary_rows(top),
                f"Human ceiling ({len(info['raters'])} raters: {', '.join(info['raters'])}):",
            )
        )
    else:
        lines.append(info["ceiling_note"])
    caption = (
        f"Better than (row over column; {info['correction']}-adjusted permutation p of the Kendall τb difference):"
    )
    lines.append(better_than_markdown(result.better_than, caption))
    return "\n".join(lines)


def ceiling_note(raters: Mapping[str, Any], human_column: str | None) -> str:
    """Why there is no human ceiling row ("" when there is one)."""
    if human_column:
        return f"No human ceiling: the human score is the score column {human_column!r}, not raters' judgements."
    return ONE_RATER if len(raters) < 2 else ""


def human_frames(
    raters: Mapping[str, Any],
    sides: Mapping[str, Any],
    top: Mapping[str, Correlation | None],
    xs: Mapping[str, Any],
    y: Any,
    boot: Mapping[str, Any],
    ratings: pl.DataFrame | None,
    ids: Sequence[str],
    kendall_rows: Mapping[str, Correlation],
) -> dict[str, pl.DataFrame]:
    """The summary (Kendall, Pearson and tie-calibrated accuracy of every metric, the ceiling row
    first), the per-rater and inter-rater tables and the per-category table (docs/metaeval.md)."""
    summary = []
    if top:
        accuracy = pooled_ceiling(sides, lambda a, b, origin: calibrated(a, b, origin)[0], "accuracy", boot)
        summary.append(_summary_row(CEILING, top["kendall"], top["pearson"], accuracy.value, accuracy.ci_low,
                                    accuracy.ci_high, math.nan, math.nan))  # fmt: skip
    for m, x in xs.items():
        acc = tie_calibrated_accuracy(x, y, boot)
        kendall, pearson = kendall_rows[m], correlate(x, y, "pearson", **boot)
        summary.append(
            _summary_row(m, kendall, pearson, acc.accuracy, acc.ci_low, acc.ci_high, acc.epsilon, acc.accuracy_untuned)
        )
    out = {"summary": pl.DataFrame(summary)}
    if raters:
        out["per_rater"] = pl.DataFrame(rater_rows(raters, xs, ALL_METHODS, boot))
        out["inter_rater"] = pl.DataFrame(inter_rater_table(raters, boot)) if len(raters) > 1 else pl.DataFrame()
    if ratings is not None:
        by_category = category_rater_matrices(ratings, ids)
        if by_category:
            rows = [row for method in MATRIX_METHODS for row in category_rows(by_category, xs, method, boot)]
            out["per_category"] = pl.DataFrame(rows)
    return out


def _summary_row(
    metric: str,
    kendall: Correlation,
    pearson: Correlation,
    acc: float,
    low: float,
    high: float,
    eps: float,
    untuned: float,
) -> dict[str, Any]:
    return {
        "metric": metric, "kendall": kendall.value, "kendall_low": kendall.ci_low, "kendall_high": kendall.ci_high,
        "pearson": pearson.value, "pearson_low": pearson.ci_low, "pearson_high": pearson.ci_high, "accuracy": acc,
        "accuracy_low": low, "accuracy_high": high, "epsilon": eps, "accuracy_untuned": untuned,
    }  # fmt: skip


def write_result(result: MetaevalResult, out_dir: str | Path) -> None:
    """correlations.csv, table_gema.{md,csv,tex}, table_srrg.{md,tex}, paired_tests.csv,
    category_prf.csv, ensembles.csv and info.json, each written atomically."""
    out = Path(out_dir)
    info = result.info
    note = f"{info['caveat']}\n\n" if info["caveat"] else ""
    what = (
        f"Correlation with human {info['human_target']} ({info['sign_convention']}); "
        f"n = {info['n_with_human']} rated pairs "
        f"({info['n_without_human']} scored pairs without rating left out), {info['n_boot']} bootstrap resamples of "
        f"{info['resampling']} (seed {info['seed']})."
    )
    if info["metrics_without_value"]:
        what += f" Left out, no finite value on a rated pair: {', '.join(info['metrics_without_value'])}."
    if info["ci_note"]:
        what += f" {info['ci_note']}"
    if info["ceiling_note"]:
        what += f" {info['ceiling_note']}"
    write_text(out / "correlations.csv", result.correlations.write_csv())
    header, rows = tables.gema_table(result.correlations)
    write_text(out / "table_gema.md", note + tables.markdown(header, rows, what))
    write_text(
        out / "table_gema.csv", pl.DataFrame(rows, schema=list(tables.GEMA_CSV_COLUMNS), orient="row").write_csv()
    )
    write_text(out / "table_gema.tex", tables.latex(header, rows, what))
    header, rows = tables.srrg_table(result.correlations)
    write_text(out / "table_srrg.md", note + tables.markdown(header, rows, what))
    write_text(out / "table_srrg.tex", tables.latex(header, rows, what))
    frames = (
        ("paired_tests", result.paired), ("category_prf", result.category_prf), ("ensembles", result.ensembles),
        ("preference_agreement", result.preference), ("system_agreement", result.systems),
    )  # fmt: skip
    for name, frame in frames:
        write_text(out / f"{name}.csv", frame.write_csv())
    if not result.preference.is_empty():
        caption = (
            "Within-case preference agreement: share of within-case candidate pairs the metric orders as the mean "
            f"human {info['human_target']} does (a metric tie counts as disagreement; human ties left out)."
        )
        write_text(out / "preference_agreement.md", note + tables.preference_markdown(result.preference, caption))
    if not result.systems.is_empty():
        caption = "System-ranking agreement: Kendall tau-b between the system rankings (per-system means, rated pairs)."
        write_text(out / "system_agreement.md", note + agreement_markdown(result.systems, caption))
    write_human(result, out, note, what)
    write_text(out / "info.json", json.dumps(info, indent=2) + "\n")


def write_human(result: MetaevalResult, out: Path, note: str, what: str) -> None:
    """human_ceiling.{md,csv}, ceiling.png, per_rater.csv + table_raters.md, per_category.csv +
    table_categories.md, metric_tests.csv and better_than.md (docs/metaeval.md)."""
    info = result.info
    loo = (
        f"{CEILING}: each rater against the mean of the other raters, averaged over the raters, resampled like the "
        "metrics."
    )
    accuracy = (
        "Pairwise accuracy: share of all item pairs ordered as the human score orders them, metric differences up to "
        "ε counting as ties, ε chosen to maximise it (again in every resample)."
    )
    ceiling_what = f"{loo} {accuracy}"
    write_text(out / "human_ceiling.csv", result.summary.write_csv())
    write_text(
        out / "human_ceiling.md",
        note + tables.markdown(SUMMARY_HEADER, summary_rows(result.summary), f"{what} {ceiling_what}"),
    )
    title = f"Kendall τb with the human {info['human_target']}" + (
        f" ({info['ceiling_note']})" if info["ceiling_note"] else ""
    )
    ceiling_figure(result.summary, title, out / "ceiling.png")
    for name, frame in (("per_rater", result.per_rater), ("inter_rater", result.inter_rater),
                        ("per_category", result.per_category), ("metric_tests", result.metric_tests)):  # fmt: skip
        write_text(out / f"{name}.csv", frame.write_csv())
    if not result.per_rater.is_empty():
        caption = f"Per rater: every metric against each rater's own {info['human_target']}. {what} {loo}"
        write_text(out / "table_raters.md", note + per_rater_markdown(result.per_rater, result.inter_rater, caption))
    if not result.per_category.is_empty():
        caption = (
            "Kendall τb and Pearson r of every metric against the raters' mean count of clinically significant errors "
            f"of each category (fewer is better; {info['n_boot']} bootstrap resamples of {info['resampling']}). {loo}"
        )
        write_text(out / "table_categories.md", note + per_category_markdown(result.per_category, caption))
    caption = (
        "Metric (row) better than metric (column): the permutation test's p-value for the difference in Kendall τb, "
        f"{info['n_permutations']} rounds of case-wise swaps, {info['correction']}-adjusted over all metric pairs, "
        "where the row's τb is the higher (metric_tests.csv: also the paired bootstrap and, for Pearson, the Williams "
        "test)."
    )
    write_text(out / "better_than.md", note + better_than_markdown(result.better_than, caption))


def run_metaeval_correlate(
    scores: str, ratings: str | None, pairs: str | None, cfg: MetaevalConfig, out_dir: str | Path
) -> MetaevalResult:
    """The metaeval-correlate stage: the score, rating and pair tables read and checked
    (read_inputs), correlated (run_metaeval) and written to out_dir (write_result)."""
    score_rows, rating_rows, pair_rows = read_inputs(scores, ratings, pairs)
    result = run_metaeval(score_rows, rating_rows, cfg, pair_rows)
    write_result(result, out_dir)
    return result


def read_inputs(
    scores: str, ratings: str | None, pairs: str | None
) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """The score, rating and pair tables of a correlation command, each checked for the columns the
    correlation reads and for a pair (or judgement) on two rows."""
    rating_rows = checked_table(ratings, RATINGS_SCHEMA, "ratings.parquet of `srrg metaeval-prepare`")
    if rating_rows is not None and rating_rows.is_empty():
        raise UserError(f"{ratings}: no rating rows; nothing to correlate")
    pair_rows = checked_table(pairs, ["pair_id"], "pairs.parquet of `srrg metaeval-prepare`")
    score_rows = checked_table(scores, [ID], "per_report.parquet of `srrg score`")
    if score_rows.is_empty():
        raise UserError(f"{scores}: no scored pair; nothing to correlate")
    refuse_repeats(score_rows, [ID], scores, ID)  # a pair on two rows would weigh twice in every correlation
    if rating_rows is not None:
        refuse_repeats(rating_rows, list(RATINGS_SCHEMA)[:5], ratings, "judgement (pair, rater, kind, category, level)")
    if pair_rows is not None:
        refuse_repeats(pair_rows, ["pair_id"], pairs, "pair_id")
    return score_rows, rating_rows, pair_rows


def checked_table(path: str | None, columns: Iterable[str], expected: str) -> pl.DataFrame | None:
    """The table at path (None when not given); a table without the columns the caller
    reads is one line naming the file (docs/cli.md), not a traceback from the join."""
    if not path:
        return None
    table = read_table(path)
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise UserError(f"{path}: lacks column(s) {missing}; expected the {expected}")
    return table
