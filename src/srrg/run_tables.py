"""`srrg tables`: result tables in the layouts of S-RRG Table 1 and Table 2 (CSV, Markdown, LaTeX).

Table 1: methods (Structured-First runs) x BLEU-1, BLEU-4, METEOR, ROUGE, P-, D-, S-Score.
Table 2: per method, Structured-First vs Sentence-Direct x BLEU-1..4, METEOR, ROUGE, and P-, D-,
S-Score of what each output is read into (structure_score_options).
Both add parse-rate columns (share of predictions that parsed, and that were valid without repair)
and the number of scored studies; values come from each run's `srrg score` summary.csv and
predictions Parquet. Missing values show as "-". Table 1 ends with the reference runs of
`srrg reference-runs`, scored by `srrg score` like the runs (docs/model.md): Constant (the most
frequent training report: what a model that ignores the image gets) and, when the runs saw phantom
images, Ceiling (each reference after the phantom render -> read round trip). This module only lays
out summaries. The captions say which images the runs saw and the signature of every metric column
(docs/metrics.md, "Signatures"); runs whose numbers in one column were made differently are refused
unless allow_mixed.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.io import load_config_arg, read_table, write_text
from srrg.metrics.signature import column_signatures
from srrg.metrics.signature_files import read_signatures
from srrg.reference_runs import CAPTION, base_run
from srrg.report import REPAIRED, VALID
from srrg.settings.metrics import SScoreTextConfig
from srrg.settings.model import SAMPLE_ID

TABLE1 = (
    ("BLEU-1", "bleu_1"),
    ("BLEU-4", "bleu_4"),
    ("METEOR", "meteor"),
    ("ROUGE", "rouge_l"),
    ("P-Score", "p_score"),
    ("D-Score", "d_score"),
    ("S-Score", "s_score"),
)
TABLE2 = (
    ("BLEU-1", "bleu_1"),
    ("BLEU-2", "bleu_2"),
    ("BLEU-3", "bleu_3"),
    ("BLEU-4", "bleu_4"),
    ("METEOR", "meteor"),
    ("ROUGE", "rouge_l"),
)
# Table 2's structured columns: each output read into a structured report (Structured-First
# parsed, Sentence-Direct through srrg's extractor) and scored against the structured reference
# at the S-Score's settings (structure_score_options; docs/model.md, "Table 2")
TABLE2_STRUCTURE = (("P-Score", "p_score_text"), ("D-Score", "d_score_text"), ("S-Score", "s_score_text"))
PARSE = (("Parsed", "parsed"), ("Valid", "valid"), ("Studies", "studies"))
# Table 1's temporal-claim columns, shown when a run was scored with temporal_claims (docs/metrics.md)
TEMPORAL = (
    ("Temporal (no prior)", "temporal_claim_rate_no_prior"),
    ("Temporal (prior)", "temporal_claim_rate_with_prior"),
)
IMAGES_SCORED = ("Images", "samples")  # the scored images, a column when a run predicts per image
PER_IMAGE_NOTE = (
    "Per image (infer.samples: image): each test image's prediction is scored against its study's "
    "reference; Images counts them, Studies the studies they belong to."
)
IMAGE_NOTES = {
    "real": "Images: real image files.",
    "phantom": "Images: PHANTOM radiographs rendered from each study's report (docs/phantom.md), not real images.",
    "placeholder": "Images: content-free PLACEHOLDERS; no score here can reflect image understanding.",
}
TARGET_LABEL = {"json": "Structured-First", "sentences": "Sentence-Direct"}


@dataclass(frozen=True)
class RunEntry:
    """One scored run: its method label, target, and the files its numbers come from."""

    name: str
    label: str
    target: str
    summary: str
    predictions: str
    rl_summary: str | None = None  # an RL run's model summary (srrg rl): its reward goes in the caption
    # the summary of Table 2's structured scoring of this run (structure_score_options), when compared
    structure_summary: str | None = None


def structure_score_options(extract: Mapping[str, Any]) -> dict[str, Any]:
    """`srrg score --config` of Table 2's structured columns: s_score_text at the S-Score's settings
    (SScoreTextConfig.s_rrg(): the S-Score of the two structured reports) with the run's `extract`
    options, so that a Structured-First output is parsed (its S-Score is Table 1's) and a
    Sentence-Direct output is read by the extractor that built the references (docs/model.md, "Table 2")."""
    return {"s_score_text": {**asdict(SScoreTextConfig.s_rrg()), "extract": dict(extract)}}


# how srrg rl drew each study's group (rl.sampler; summaries written before the setting: sample)
SAMPLED = {"sample": "sampled reports", "beam": "best beams"}


def rl_note(runs: Sequence[RunEntry]) -> str:
    """`RL: <label> = <run> fine-tuned from <base> with reward <signature> (...)` for every RL run
    (the reward's signature as srrg rl recorded it in the model file's summary)."""
    notes = []
    for run in runs:
        if run.rl_summary is None:
            continue
        try:
            rl = json.loads(Path(run.rl_summary).read_text(encoding="utf-8"))["rl"]
        except (OSError, ValueError, KeyError) as exc:
            raise UserError(f"{run.rl_summary}: not the summary of `srrg rl` ({exc})") from exc
        notes.append(
            f"{run.label} ({run.name}): reinforcement fine-tuning of {Path(rl['from']).parent.name} with reward "
            f"{rl['reward_signature']} (G {rl['group_size']} {SAMPLED[rl.get('sampler', 'sample')]}, {rl['baseline']} "
            f"baseline, KL coef {rl['kl_coef']:g})."
        )
    return " ".join(notes)


def parse_rates(statuses: Sequence[str | None]) -> dict[str, float]:
    """Shares of parsed (valid or repaired) and valid predictions; NaN when nothing was parsed
    (Sentence-Direct runs have no structure to parse)."""
    known = [s for s in statuses if s is not None]
    if not known:
        return {"parsed": math.nan, "valid": math.nan}
    return {
        "parsed": sum(s in (VALID, REPAIRED) for s in known) / len(known),
        "valid": sum(s == VALID for s in known) / len(known),
    }


def scored(preds: pl.DataFrame) -> pl.DataFrame:
    """The predictions that were scored (inside the view filter)."""
    return preds.filter(pl.col("infer_status") == "ok") if "infer_status" in preds.columns else preds


def summary_values(path: str) -> dict[str, float]:
    """The one row of a `srrg score` summary.csv: metric key -> value (NaN for text and empty cells)."""
    summary = read_table(path)
    if summary.height != 1:
        raise UserError(f"{path}: expected one summary row, found {summary.height}")
    return {
        k: (float(v) if isinstance(v, (int, float)) and v is not None else math.nan)
        for k, v in summary.row(0, named=True).items()
    }


def load_run(entry: RunEntry) -> dict[str, Any]:
    """The run's summary row (metric key -> value) plus its parse rates, scored studies and images;
    `structure`: the values of its Table 2 structured scoring ({} when it has none)."""
    values = summary_values(entry.summary)
    preds = read_table(entry.predictions)
    if "parse_status" not in preds.columns:
        raise UserError(
            f"{entry.predictions}: lacks column 'parse_status'; expected the predictions.parquet of `srrg infer`"
        )
    preds = scored(preds)
    images = preds["images"].drop_nulls().unique().sort().to_list() if "images" in preds.columns else []
    per_image = SAMPLE_ID in preds.columns
    return {
        **values,
        **parse_rates(preds["parse_status"].to_list()),
        "studies": preds["study_id"].n_unique() if per_image else preds.height,
        "samples": preds.height,
        "per_image": per_image,
        "images": ",".join(images) or None,
        "scored_ids": scored_ids(preds, SAMPLE_ID if per_image else "study_id"),
        "structure": summary_values(entry.structure_summary) if entry.structure_summary else {},
    }


def scored_ids(preds: pl.DataFrame, key: str) -> frozenset[str] | int:
    """The ids of the scored predictions; their number when the file has no id column."""
    return frozenset(preds[key].to_list()) if key in preds.columns else preds.height


def compared_methods(runs: Iterable[Any]) -> dict[str, list[Any]]:
    """Method label -> its Structured-First and Sentence-Direct runs, for the methods that have both:
    Table 2's comparisons. `runs`: anything with name, label and target (RunEntry, the workflow's
    RunSpec, which uses it to plan the structured scoring of these runs only)."""
    groups: dict[str, list[Any]] = {}
    for r in runs:
        if r.target in TARGET_LABEL:
            groups.setdefault(r.label, []).append(r)
    return {label: group for label, group in groups.items() if len({r.target for r in group}) > 1}


def check_same_studies(runs: Sequence[RunEntry], results: Mapping[str, Mapping[str, Any]]) -> None:
    """Table 2 compares a method's Structured-First and Sentence-Direct runs on the same test
    studies (docs/model.md, "Table 2"): a method with both targets whose runs were scored on
    different studies (another infer.max_studies, another view filter) is a UserError naming them,
    not a row pair that differs in its test set."""
    for label, group in compared_methods(runs).items():
        sets = {r.name: results[r.name]["scored_ids"] for r in group}
        if len(set(sets.values())) > 1:
            sizes = ", ".join(f"{name} {ids if isinstance(ids, int) else len(ids)}" for name, ids in sets.items())
            raise UserError(
                f"Table 2, method {label!r}: its runs were scored on different test studies ({sizes} studies); "
                "give them the same infer.max_studies and data.views so both targets are compared on the same studies"
            )


def count_columns(results: Mapping[str, Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """The parse-rate and count columns: PARSE, and Images when a run was scored per image."""
    return PARSE + ((IMAGES_SCORED,) if any(r.get("per_image") for r in results.values()) else ())


def requested_columns(results: Mapping[str, Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """Table 1's columns of metrics that only some configurations score: TEMPORAL when a run has them."""
    return TEMPORAL if any(TEMPORAL[0][1] in r for r in results.values()) else ()


def shown_references(
    runs: Sequence[RunEntry],
    results: Mapping[str, Mapping[str, Any]],
    references: Sequence[RunEntry],
    ref_results: Mapping[str, Mapping[str, Any]],
) -> list[RunEntry]:
    """The reference runs Table 1 shows: those whose predictions were made from no image or from
    the images of the run whose studies they were scored on (srrg.reference_runs.base_run):
    Ceiling, the phantom round trip, only beside phantom runs. References without a
    Structured-First run, or scored on another number of studies than that run, are a UserError."""
    if not references:
        return []
    json_runs = {r.name: int(results[r.name]["samples"]) for r in runs if r.target == "json"}
    if not json_runs:
        raise UserError("--references: no Structured-First run in --runs to end Table 1 after")
    base = base_run(json_runs)
    shown = []
    for ref in references:
        got = ref_results[ref.name]
        if got["samples"] != json_runs[base]:
            raise UserError(
                f"--references {ref.name}: scored on {got['samples']} {'images' if got['per_image'] else 'studies'},"
                f" the run {base} on "
                f"{json_runs[base]}; write the reference runs from the same runs (srrg reference-runs)"
            )
        if got["images"] in (None, results[base]["images"]):
            shown.append(ref)
    return shown


def table_signatures(
    signatures: Mapping[str, Mapping[str, str]], columns: Sequence[tuple[str, str]], allow_mixed: bool
) -> dict[str, str]:
    """Column name -> the one signature of its numbers over the given rows (srrg.metrics.signature);
    columns no row has a signature for (parse rates, counts) are left out."""
    keys = [key for _, key in columns if any(key in s for s in signatures.values())]
    by_key = column_signatures(signatures, keys, allow_mixed, "tables")
    return {name: by_key[key] for name, key in columns if key in by_key}


def signature_note(column_sigs: Mapping[str, str]) -> str:
    """`Signatures: <sig> (BLEU-1, BLEU-4); ...` for a caption: columns grouped by signature."""
    groups: dict[str, list[str]] = {}
    for name, sig in column_sigs.items():
        groups.setdefault(sig, []).append(name)
    return (
        ("Signatures: " + "; ".join(f"{sig} ({', '.join(names)})" for sig, names in groups.items()) + ".")
        if groups
        else ""
    )


def image_note(results: Mapping[str, Mapping[str, Any]]) -> str:
    """What the runs saw, for the captions (phantom and placeholder runs must say so)."""
    modes = sorted({m for r in results.values() for m in (r.get("images") or "").split(",") if m})
    return " ".join(IMAGE_NOTES.get(m, f"Images: {m}.") for m in modes)


def _row(label: str, values: Mapping[str, Any], columns: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {
        "Method": label,
        **{
            name: (int(values[key]) if key in ("studies", "samples") else float(values.get(key, math.nan)))
            for name, key in columns
        },
    }


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pl.DataFrame:
    types = {"Method": pl.String, "Target": pl.String, "Studies": pl.Int64, "Images": pl.Int64}
    return pl.DataFrame(rows, schema={c: types.get(c, pl.Float64) for c in columns})


def table1(
    runs: Sequence[RunEntry],
    results: Mapping[str, Mapping[str, Any]],
    references: Sequence[dict[str, Any]] = (),
    counts: Sequence[tuple[str, str]] = PARSE,
) -> pl.DataFrame:
    """Structured-First runs, then the reference rows; `counts`: the count columns (count_columns)."""
    rows = [_row(r.label, results[r.name], (*TABLE1, *counts)) for r in runs if r.target == "json"]
    return _frame([*rows, *references], ["Method", *(n for n, _ in (*TABLE1, *counts))])


def table2(
    runs: Sequence[RunEntry], results: Mapping[str, Mapping[str, float]], counts: Sequence[tuple[str, str]] = PARSE
) -> pl.DataFrame:
    """Methods in first-seen order, Structured-First before Sentence-Direct within a method; the
    structured columns (TABLE2_STRUCTURE) from each run's structured scoring, "-" without one."""
    order = {label: i for i, label in enumerate(dict.fromkeys(r.label for r in runs))}
    chosen = sorted((r for r in runs if r.target in TARGET_LABEL), key=lambda r: (order[r.label], r.target != "json"))
    columns = (*TABLE2, *TABLE2_STRUCTURE, *counts)
    rows = []
    for r in chosen:
        structure = results[r.name].get("structure", {})
        values = {**results[r.name], **{key: structure.get(key, math.nan) for _, key in TABLE2_STRUCTURE}}
        rows.append({**_row(r.label, values, columns), "Target": TARGET_LABEL[r.target]})
    return _frame(rows, ["Method", "Target", *(n for n, _ in columns)])


def fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def to_markdown(df: pl.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.iter_rows()]
    return "\n".join(lines) + "\n"


def latex_escape(text: str) -> str:
    for char, repl in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("_", r"\_"),
        ("#", r"\#"),
        ("$", r"\$"),
    ):
        text = text.replace(char, repl)
    return text


def to_latex(df: pl.DataFrame, caption: str, label: str) -> str:
    """A booktabs table; text columns left-aligned, numbers right-aligned."""
    align = "".join("l" if df[c].dtype == pl.String else "r" for c in df.columns)
    body = [" & ".join(latex_escape(fmt(v)) for v in row) + r" \\" for row in df.iter_rows()]
    return (
        "\n".join(
            [
                r"\begin{table}[t]",
                r"\centering",
                f"\\caption{{{latex_escape(caption)}}}",
                f"\\label{{{label}}}",
                f"\\begin{{tabular}}{{{align}}}",
                r"\toprule",
                " & ".join(latex_escape(c) for c in df.columns) + r" \\",
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
                r"\end{table}",
            ]
        )
        + "\n"
    )


def to_html(df: pl.DataFrame, caption: str) -> str:
    """A self-contained HTML table (rounded as Markdown): `snakemake --report` shows HTML inline,
    while CSV and Markdown are only offered as downloads."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in df.columns)
    rows = ["<tr>" + "".join(f"<td>{html.escape(fmt(v))}</td>" for v in row) + "</tr>" for row in df.iter_rows()]
    return (
        "\n".join(
            [
                (
                    '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>table{border-collapse:collapse}'
                    "th,td{border:1px solid #ccc;padding:2px 8px}td{text-align:right}"
                    "td:first-child{text-align:left}</style></head><body>"
                ),
                f"<table>\n<caption>{html.escape(caption)}</caption>",
                f"<thead><tr>{head}</tr></thead>",
                "<tbody>",
                *rows,
                "</tbody>\n</table>\n</body></html>",
            ]
        )
        + "\n"
    )


def write_table(df: pl.DataFrame, stem: Path, caption: str) -> None:
    """CSV at full precision (a missing metric is an empty cell, not "NaN"); Markdown with the
    caption under the table, LaTeX and HTML round to 3 digits."""
    write_text(stem.with_suffix(".csv"), df.with_columns(pl.col(pl.Float64).fill_nan(None)).write_csv())
    write_text(stem.with_suffix(".md"), f"{to_markdown(df)}\n{caption}\n")
    write_text(stem.with_suffix(".tex"), to_latex(df, caption, f"tab:{stem.name}"))
    write_text(stem.with_suffix(".html"), to_html(df, caption))


def captions(
    results: Mapping[str, Mapping[str, Any]], references: bool, signatures: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Caption per table; `signatures`: table name -> its signature note."""
    signatures = signatures or {}
    note = image_note(results)
    if any(r.get("per_image") for r in results.values()):
        note = f"{PER_IMAGE_NOTE} {note}".strip()
    refs = f" {CAPTION}" if references else ""
    return {
        "table1": " ".join(
            filter(
                None,
                (
                    "Structured report generation: methods (Structured-First), "
                    f"scored on the first Studies test studies.{refs}",
                    note,
                    signatures.get("table1"),
                ),
            )
        ),
        "table2": " ".join(
            filter(
                None,
                (
                    "Structured-First vs Sentence-Direct, both targets of a method scored on the same test "
                    "studies: NLG metrics on sentence renderings (a Structured-First output parsed into its "
                    "structured report and rendered as sentences, docs/report.md; a Sentence-Direct output as "
                    "written). P-, D- and S-Score: each output read into a structured report, a "
                    "Structured-First output parsed (its S-Score is Table 1's) and a Sentence-Direct output by "
                    "srrg's extractor (docs/extraction.md), then scored against the structured reference at the "
                    'S-Score\'s settings (s_score_text, SScoreTextConfig.s_rrg(); docs/model.md, "Table 2"); '
                    "- for a method without both targets.",
                    note,
                    signatures.get("table2"),
                ),
            )
        ),
    }


def run_tables(
    runs: Sequence[RunEntry], out_dir: str | Path, references: Sequence[RunEntry] = (), allow_mixed: bool = False
) -> dict[str, pl.DataFrame]:
    """Write table1.{csv,md,tex,html} and table2.{csv,md,tex,html}; returns both frames. Table 1 ends
    with the `references` it shows (shown_references), labelled and scored like runs. Each caption
    names the signatures of its columns; a column whose rows were made differently is a UserError
    naming both signatures unless allow_mixed."""
    results = {r.name: load_run(r) for r in runs}
    check_same_studies(runs, results)
    ref_results = {r.name: load_run(r) for r in references}
    shown = shown_references(runs, results, references, ref_results)
    row_sigs = {r.name: read_signatures(r.summary) for r in [*runs, *shown]}
    structure_sigs = {r.name: read_signatures(r.structure_summary) for r in runs if r.structure_summary}
    out = Path(out_dir)
    counts = count_columns(results)
    counts1 = (*requested_columns(results), *counts)
    ref_rows = [_row(r.label, ref_results[r.name], (*TABLE1, *counts1)) for r in shown]
    tables = {"table1": table1(runs, results, ref_rows, counts1), "table2": table2(runs, results, counts)}
    json_runs = {r.name: row_sigs[r.name] for r in [*(r for r in runs if r.target == "json"), *shown]}
    table_runs = {r.name: row_sigs[r.name] for r in runs if r.target in TARGET_LABEL}
    notes = {
        "table1": " ".join(
            filter(None, (rl_note(runs), signature_note(table_signatures(json_runs, TABLE1, allow_mixed))))
        ),
        "table2": signature_note(
            {
                **table_signatures(table_runs, TABLE2, allow_mixed),
                **table_signatures(structure_sigs, TABLE2_STRUCTURE, allow_mixed),
            }
        ),
    }
    text = captions(results, bool(shown), notes)
    for name, df in tables.items():
        write_table(df, out / name, text[name])
    return tables


def load_run_entries(value: str | None, option: str) -> list[RunEntry]:
    """`--runs` / `--references`: an inline JSON list, or a JSON/YAML file holding a list or
    {"runs": [...]}, of run entries; unset = none."""
    if value is None:
        return []
    if value.lstrip().startswith("["):
        data: Any = json.loads(value)
    else:
        data = load_config_arg(value).get("runs")
    if not isinstance(data, list):
        raise UserError(f"{option} must be a JSON list of run entries (or an object with a `runs` list)")
    return [from_dict(RunEntry, r, f"{option}[{i}]") for i, r in enumerate(data)]
