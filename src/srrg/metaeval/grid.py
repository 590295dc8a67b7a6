"""VERT's grid: judge models (rows) x prompts (columns: GREEN's score, error count and F1 from the
GREEN prompt, and the score the judge writes under each VERT prompt variant), correlated with a
rating set's human scores (docs/judges.md, "VERT's grid")."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from srrg.errors import UserError
from srrg.io import read_table, write_parquet, write_text
from srrg.metaeval import tables
from srrg.metaeval.ensembles import complete_rows, evaluate_ensemble, evaluate_mean_ensemble, first_n, split_mask
from srrg.metaeval.over_under import over_under_markdown, over_under_rows, over_under_table
from srrg.metaeval.readers.common import ERRORS, human_scores
from srrg.metaeval.run import ID, MetaevalResult, resolve_human, run_metaeval_correlate
from srrg.settings.llm import REASONING_MODEL
from srrg.settings.metaeval import MetaevalConfig

VERT_VARIANTS = ("direct", "formula", "rubric")
# (grid column, per-report score column) of the GREEN prompt's answers
GREEN_COLUMNS = (("GREEN", "green"), ("GREEN-EC", "green_ec"), ("GREEN-F1", "green_f1"))
LOWER_IS_BETTER = ("GREEN-EC",)  # a count of significant errors: fewer is better


GEMA_PROMPT = "gema"  # the GEMA backbone grid's one prompt (docs/metaeval.md, "GEMA's backbone grid")


def prompt_columns(prompt: str) -> tuple[tuple[str, str], ...]:
    """The grid columns one prompt's answers give: GREEN's three, a VERT variant's score, or GEMA's."""
    if prompt == "green":
        return GREEN_COLUMNS
    if prompt in VERT_VARIANTS:
        return ((prompt, "vert"),)
    if prompt == GEMA_PROMPT:
        return (("GEMA", "gema"),)
    raise UserError(f"unknown grid prompt {prompt!r}; use green, gema or a VERT variant {', '.join(VERT_VARIANTS)}")


def prompt_metric(prompt: str) -> str:
    """The registered metric that asks a grid prompt (VERT variants: vert with that variant)."""
    prompt_columns(prompt)  # an unknown prompt is an error
    return prompt if prompt in ("green", GEMA_PROMPT) else "vert"


def model_llm(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    """A grid model's llm settings: the judges' llm slice (top-level llm, then judge.llm, as the
    judge stage gets it) with the model's settings (metaeval.grid.models) merged over it, and the
    judges' cache_dir (an answer the judge stages already have is reused)."""
    return {
        "cache_dir": str(Path(config["cache_dir"], "llm")),
        **config.get("llm", {}),
        **config["judge"]["llm"],
        **config["metaeval"]["grid"]["models"][model],
    }


def takes_reasoning_effort(llm: Mapping[str, Any]) -> bool:
    """Whether requests with these llm settings carry reasoning_effort: a reasoning model by
    `reasoning: true`, or by its name when `reasoning` is auto (srrg.settings.llm.LLMConfig)."""
    reasoning = llm.get("reasoning", "auto")
    return bool(REASONING_MODEL.search(str(llm.get("model", "")))) if reasoning == "auto" else bool(reasoning)


def grid_rows(config: Mapping[str, Any]) -> dict[str, tuple[str, str | None]]:
    """VERT's grid rows: row name -> (model, reasoning_effort level or None). With
    metaeval.grid.thinking, a model that takes reasoning_effort is one row per level, named
    `<model>.<level>`; every other model is one row under its own name. A row name that is also a
    configured model's name is an error (two rows would share a folder)."""
    grid = config["metaeval"]["grid"]
    rows: dict[str, tuple[str, str | None]] = {}
    for model in grid["models"]:
        levels = tuple(grid.get("thinking", ())) if takes_reasoning_effort(model_llm(config, model)) else ()
        for level in levels or (None,):
            name = model if level is None else f"{model}.{level}"
            if name in rows or (level is not None and name in grid["models"]):
                raise UserError(f"metaeval.grid: the thinking row {name!r} is also a model's name; rename the model")
            rows[name] = (model, level)
    return rows


def grid_cell_options(config: Mapping[str, Any], row: str, prompt: str) -> dict[str, Any]:
    """The per-metric options of one grid cell from the validated workflow config: the row's
    model_llm (with its reasoning_effort level, grid_rows; a model's own name is its default
    level), judge.options and judge.max_tokens of that metric, and the VERT variant."""
    judge = config["judge"]
    metric = prompt_metric(prompt)
    model, level = grid_rows(config).get(row, (row, None))
    llm = model_llm(config, model)
    if level is not None:
        llm["reasoning_effort"] = level
    cell = {**judge["options"].get(metric, {}), "llm": llm}
    if judge["max_tokens"] is not None:  # null: each judge's own default
        cell.setdefault("max_tokens", judge["max_tokens"])
    if metric == "vert":
        cell["variant"] = prompt
    return {metric: cell}


def model_scores(cells: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """One judge model's grid columns, from the per_report.parquet of each of its prompts
    ((prompt, path) pairs), joined on the pair id; a prompt's file without its column is an error."""
    frame: pl.DataFrame | None = None
    for prompt, path in cells:
        table = read_table(path)
        wanted = prompt_columns(prompt)
        missing = [c for c in (ID, *(col for _, col in wanted)) if c not in table.columns]
        if missing:
            raise UserError(
                f"{path}: lacks column(s) {missing}; expected the per_report.parquet of the {prompt} prompt"
            )
        part = table.select(pl.col(ID).cast(pl.String), *(pl.col(col).cast(pl.Float64).alias(g) for g, col in wanted))
        if frame is None:
            frame = part
        else:
            if set(part[ID]) != set(frame[ID]):
                raise UserError(f"{path}: scores other pairs than the model's other prompts (same rating set?)")
            frame = frame.join(part, on=ID, how="inner")
    if frame is None:
        raise UserError("no grid cell: give at least one --cell MODEL PROMPT PER_REPORT")
    return frame


def grid_frame(results: Sequence[tuple[str, MetaevalResult]], columns: Sequence[str]) -> pl.DataFrame:
    """Long frame of every (model, column, method) correlation of the grid (rows of the
    correlation tables that are not grid columns, such as a human ceiling, stay in the model's
    own tables)."""
    return pl.concat(
        [
            r.correlations.filter(pl.col("metric").is_in(list(columns)))
            .rename({"metric": "column"})
            .select(pl.lit(model).alias("model"), pl.all())
            for model, r in results
        ]
    )


ENSEMBLE_ROWS = ("ensemble (mean)", "ensemble (least squares)")


def ensemble_split(
    ids: Sequence[str], published: Mapping[str, str], cfg: MetaevalConfig
) -> tuple[np.ndarray, np.ndarray, str]:
    """(test mask, training pool, where they come from): the rating set's published split where its
    pairs.parquet has one with both sides (VERT: evaluated on RaTE-Eval's official test split),
    else the hash-ranked held-out share (metaeval.correlate test_fraction, ensemble_seed)."""
    sides = [published.get(i, "") for i in ids]
    if "train" in sides and "test" in sides:
        return np.array([s == "test" for s in sides]), np.array([s == "train" for s in sides]), "published"
    mask = split_mask(ids, cfg.test_fraction, cfg.ensemble_seed)
    return mask, ~mask, "held_out"


def cross_model_ensembles(
    frames: Sequence[tuple[str, pl.DataFrame]],
    columns: Sequence[str],
    ratings: pl.DataFrame,
    cfg: MetaevalConfig,
    published: Mapping[str, str] | None = None,
    n_train: int | None = None,
) -> tuple[pl.DataFrame, str]:
    """VERT's cross-model ensembles: per grid column, the models' scores of that column combined as
    the mean of their z-scores and as a least-squares fit (srrg.metaeval.ensembles) on n_train
    training pairs (the first complete ones in hash order; None = all), both correlated with the
    human target on the test pairs only (ensemble_split: the published split, else the held-out
    share). Columns and the human target are oriented as in the grid (GREEN-EC and error counts
    negated). A column fewer than two models have is left out. Returns the rows and the split's
    source."""
    human, _, lower = resolve_human(pl.DataFrame(), ratings, dataclasses.replace(cfg, human_column=None))
    truth = dict(zip(human[ID].cast(pl.String).to_list(), human["human"].to_list()))
    ids = sorted(set.intersection(*(set(f[ID].to_list()) for _, f in frames)) & set(truth))
    y = [(-1.0 if lower else 1.0) * (math.nan if truth[i] is None else truth[i]) for i in ids]
    mask, pool, source = ensemble_split(ids, published or {}, cfg) if ids else (None, None, "held_out")
    rows = []
    for column in columns:
        members = {m: f for m, f in frames if column in f.columns}
        if len(members) < 2 or mask is None:
            continue
        sign = -1.0 if column in LOWER_IS_BETTER else 1.0
        features = {}
        for model, frame in members.items():
            values = dict(zip(frame[ID].to_list(), frame[column].to_list()))
            features[model] = [math.nan if values[i] is None else sign * values[i] for i in ids]
        usable = pool & complete_rows(features, y)
        train = first_n(ids, usable, n_train, cfg.ensemble_seed) if n_train is not None else usable
        for name, fit in zip(ENSEMBLE_ROWS, (evaluate_mean_ensemble, evaluate_ensemble)):
            res = fit(name, features, y, mask, train)
            for method, value, p_value in (("kendall", res.kendall, res.kendall_p),
                                           ("spearman", res.spearman, res.spearman_p)):  # fmt: skip
                rows.append({"model": name, "column": column, "method": method, "value": value, "p_value": p_value,
                             "n": res.n_test, "n_train": res.n_train})  # fmt: skip
    schema = {"model": pl.String, "column": pl.String, "method": pl.String, "value": pl.Float64,
              "p_value": pl.Float64, "n": pl.Int64, "n_train": pl.Int64}  # fmt: skip
    return (pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)), source


def grid_markdown(grid: pl.DataFrame, columns: Sequence[str], caption: str) -> str:
    """Kendall tau-b, then Spearman rho: one row per judge model, one column per grid column
    (dash where a model's column was not measured)."""
    cells = {(r["model"], r["column"], r["method"]): r["value"] for r in grid.iter_rows(named=True)}
    models = grid["model"].unique(maintain_order=True).to_list()
    parts = [caption, ""]
    for method, title in (("kendall", "Kendall τb"), ("spearman", "Spearman ρ")):
        rows = [[m, *(_cell(cells.get((m, c, method))) for c in columns)] for m in models]
        parts.append(tables.markdown((f"Judge model ({title})", *columns), rows, "").lstrip("\n"))
    return "\n".join(parts)


def _cell(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


def published_split(pairs: str | None) -> dict[str, str]:
    """pair_id -> train/test from the `split` column metaeval-prepare writes into pairs.parquet
    (empty where the set publishes no split, or without the file)."""
    if not pairs:
        return {}
    frame = read_table(pairs)
    if "split" not in frame.columns:
        return {}
    return {str(p): s for p, s in zip(frame["pair_id"], frame["split"]) if s}


def ensemble_caption(extra: pl.DataFrame, source: str, asked: int | None, test_fraction: float) -> str:
    """What the ensemble rows were fitted on and scored on: the least-squares fit's training pairs
    (and, where fewer than the stated number existed, that it is fewer) and the test pairs."""
    fitted = extra.filter(pl.col("model") == ENSEMBLE_ROWS[1])
    n_train = fitted["n_train"].max() if fitted.height else 0
    n_test = extra["n"].max() if extra.height else 0
    if source == "published":
        train_from, test_on = "the rating set's published training split", f"{n_test} pairs of its published test split"
    else:
        train_from = "the pairs outside the held-out share"
        test_on = f"{n_test} held-out pairs only (test_fraction {test_fraction})"
    text = (
        "Ensemble rows: the models' scores of each column combined (mean of z-scores; least squares fitted on "
        f"{n_train} training instances of {train_from}), correlated on {test_on}."
    )
    if asked is not None and n_train < asked:
        text += f" Fewer training instances than the {asked} asked (metaeval.grid.ensemble_train): all there were."
    return text


def run_vert_grid(
    cells: Sequence[tuple[str, str, str]],
    ratings: str,
    pairs: str | None,
    cfg: MetaevalConfig,
    out_dir: str | Path,
    ensembles: bool | None = None,
    ensemble_train: int | None = None,
) -> pl.DataFrame:
    """cells: (model, prompt, per_report.parquet). Per model its grid columns are correlated with
    the human scores as `metaeval-correlate` does (every table under out_dir/<model>/, paired tests
    between its prompts included), then vert_grid.{csv,md} gather them; with ensembles, the
    cross-model ensemble rows follow (cross_model_ensembles, on the held-out pairs). Returns the
    long frame."""
    by_model: dict[str, list[tuple[str, str]]] = {}
    for model, prompt, path in cells:
        by_model.setdefault(model, []).append((prompt, path))
    columns = list(dict.fromkeys(g for _, prompt, _ in cells for g, _ in prompt_columns(prompt)))
    out = Path(out_dir)
    per_model_cfg = dataclasses.replace(
        cfg, metrics=(), lower_is_better=LOWER_IS_BETTER, ensembles={}, paired_reference=None, human_column=None
    )
    results, judged, frames = [], [], []
    for model, model_cells in by_model.items():
        frame = model_scores(model_cells)
        frames.append((model, frame))
        write_parquet(frame, out / model / "scores.parquet")
        if "GREEN-EC" in frame.columns:
            judged.append((model, dict(zip(frame[ID].to_list(), frame["GREEN-EC"].to_list()))))
        metrics = [c for c in columns if c in frame.columns]
        lower = tuple(c for c in LOWER_IS_BETTER if c in metrics)  # GREEN-EC only where the green prompt ran
        model_cfg = dataclasses.replace(per_model_cfg, metrics=metrics, lower_is_better=lower)
        results.append(
            (model, run_metaeval_correlate(str(out / model / "scores.parquet"), ratings, pairs, model_cfg, out / model))
        )
    grid = grid_frame(results, columns)
    info = results[0][1].info
    caption = (
        f"VERT's grid: correlation of each judge model's scores with human {info['human_target']} "
        f"({info['sign_convention']}; GREEN-EC negated); n = {info['n_with_human']} rated pairs. "
        "Per model CIs and paired tests in <model>/table_gema.md and paired_tests.csv."
    )
    if ensembles:
        extra, source = cross_model_ensembles(
            frames, columns, read_table(ratings), cfg, published_split(pairs), ensemble_train
        )
        grid = pl.concat([grid, extra], how="diagonal_relaxed")
        caption += " " + ensemble_caption(extra, source, ensemble_train, cfg.test_fraction)
    if cfg.caveat:
        caption = f"{cfg.caveat}\n\n{caption}"
    write_text(out / "vert_grid.csv", grid.write_csv())
    write_text(out / "vert_grid.md", grid_markdown(grid, columns, caption))
    write_over_under(judged, read_table(ratings), cfg.caveat, out)
    return grid


def write_over_under(judged: Sequence[tuple[str, Mapping[str, float]]], ratings: pl.DataFrame, caveat: str,
                     out: Path) -> None:  # fmt: skip
    """over_under.{csv,md}: each model's GREEN-EC (its count of clinically significant errors) minus
    the radiologists' mean count, by their count (srrg.metaeval.over_under); empty, with the
    reason in the caption, where the set counts no errors or the GREEN prompt did not run."""
    has_counts = "kind" in ratings.columns and (ratings["kind"] == ERRORS).any()
    rows = []
    if has_counts:
        human, _ = human_scores(ratings, "errors_significant")
        counts = dict(zip(human["pair_id"].to_list(), human["human"].to_list()))
        rows = [row for model, values in judged for row in over_under_rows(model, values, counts)]
    table = over_under_table(rows)
    if not has_counts:
        caption = "No over/under-estimation table: this rating set counts no errors (it gives scores)."
    elif not judged:
        caption = "No over/under-estimation table: the grid ran no GREEN prompt (GREEN-EC is the judge's count)."
    else:
        caption = (
            "Over/under-estimation: each judge model's count of clinically significant errors (GREEN-EC) minus the "
            "radiologists' mean count, by the radiologists' count (rounded half up; 4+ pooled); Over / Exact / Under: "
            "shares of the pairs where the judge counts more, as many, fewer."
        )
    note = f"{caveat}\n\n" if caveat else ""
    write_text(out / "over_under.csv", table.write_csv())
    write_text(out / "over_under.md", note + over_under_markdown(table, caption))
