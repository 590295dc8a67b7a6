"""Table 2's structured columns (srrg.run_tables, docs/model.md "Table 2"): each output of a method
with both targets read into a structured report (Structured-First parsed, Sentence-Direct by the
extractor) and scored against the structured reference at the S-Score's settings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from srrg.extract import extract_detailed
from srrg.metrics import evaluate
from srrg.run_tables import (
    TABLE2_STRUCTURE,
    RunEntry,
    compared_methods,
    run_tables,
    structure_score_options,
)
from srrg.settings.extract import ExtractConfig

REF = json.dumps(
    {
        "positive": [
            {"name": "pleural effusion", "probability": 3, "level": "small", "location": "right"},
            {"name": "cardiomegaly", "probability": 3, "level": "mild", "location": None},
        ],
        "negative": ["pneumothorax"],
    }
)
HYP_JSON = json.dumps(
    {
        "positive": [
            {"name": "pleural effusion", "probability": 2, "level": "small", "location": "left"},
            {"name": "atelectasis", "probability": 3, "level": None, "location": "left lower lobe"},
        ],
        "negative": ["pneumothorax", "consolidation"],
    }
)
HYP_TEXT = "Small right pleural effusion. No pneumothorax. The heart size is normal."


def test_groups_only_methods_with_both_targets() -> None:
    """Fails if a method with one target (the Transformer's Structured-First run) were planned for
    Table 2's structured scoring, or a run of an SRRG-text target counted as one of its two sides."""
    runs = [
        RunEntry("q_json", "Qwen", "json", "", ""),
        RunEntry("base", "Transformer", "json", "", ""),
        RunEntry("q_sent", "Qwen", "sentences", "", ""),
        RunEntry("base_srrg", "Transformer", "srrg", "", ""),
    ]
    groups = compared_methods(runs)
    assert {label: [r.name for r in group] for label, group in groups.items()} == {"Qwen": ["q_json", "q_sent"]}


def test_a_structured_output_scores_its_s_score() -> None:
    """Fails if Table 2's S-Score of a Structured-First output were not its S-Score (Table 1's):
    the options must be the S-Score's (SScoreTextConfig.s_rrg()), the JSON output parsed, not extracted."""
    options = structure_score_options({})
    got = evaluate([REF], [HYP_JSON], ["s_score_text"], options=options)
    want = evaluate([REF], [HYP_JSON], ["s_score"])
    for key in ("s_score", "p_score", "d_score"):
        assert got[f"{key}_text"] == pytest.approx(want[key])
    assert 0 < want["s_score"] < 1  # a pair that agrees in part: the equality is not 0 = 0 or 1 = 1


def test_a_sentence_output_is_read_by_the_extractor_with_the_runs_options() -> None:
    """Fails if a Sentence-Direct output were scored as anything but the S-Score of its extracted
    report against the structured reference (the reference extracted too, or the run's extract
    options dropped)."""
    extract = {"n_process": 1}
    extracted = extract_detailed([HYP_TEXT], ExtractConfig(n_process=1))[0].report.to_json()
    assert "pleural effusion" in extracted  # the extractor read the text
    got = evaluate([REF], [HYP_TEXT], ["s_score_text"], options=structure_score_options(extract))
    want = evaluate([REF], [extracted], ["s_score"])
    assert got["s_score_text"] == pytest.approx(want["s_score"])
    assert got["s_score_text_hyp_free_text"] == 1.0


def _write_run(tmp: Path, name: str, label: str, target: str, values: dict[str, float]) -> RunEntry:
    """A scored run's files: a summary with signed NLG columns, predictions, and (for Table 2's
    structured columns) a structure summary holding `values`."""
    folder = tmp / name
    (folder / "structure").mkdir(parents=True)
    nlg = {"bleu_1": 0.5, "bleu_2": 0.4, "bleu_3": 0.3, "bleu_4": 0.2, "meteor": 0.25, "rouge_l": 0.45}
    # a user-configured s_score_text (other options) in the run's own summary must not reach Table 2
    main = {**nlg, "s_score_text": 0.99}
    signed = {f"signature_{k}": f"{k}|fixture" for k in main}
    pl.DataFrame([{"n_pairs": 2, **main, **signed}]).write_csv(folder / "summary.csv")
    pl.DataFrame([{"n_pairs": 2, **values, "signature_s_score_text": "s_score_text|s_rrg"}]).write_csv(
        folder / "structure" / "summary.csv"
    )
    statuses = ["valid", "valid"] if target == "json" else [None, None]
    pl.DataFrame(
        {"study_id": ["a", "b"], "parse_status": statuses}, schema={"study_id": pl.String, "parse_status": pl.String}
    ).write_parquet(folder / "p.parquet")
    return RunEntry(
        name,
        label,
        target,
        str(folder / "summary.csv"),
        str(folder / "p.parquet"),
        None,
        str(folder / "structure" / "summary.csv"),
    )


def test_table2_shows_the_structure_summaries_and_their_signature(tmp_path: Path) -> None:
    """Fails if Table 2's P/D/S-Score came from anywhere but each run's structure summary (the run's
    own s_score_text under other options is 0.99 here), if a run without one showed a number, or if
    the caption lost the columns' signature and how each target was read."""
    runs = [
        _write_run(tmp_path, "q_json", "Qwen", "json", {"p_score_text": 0.6, "d_score_text": 0.4, "s_score_text": 0.5}),
        _write_run(
            tmp_path, "q_sent", "Qwen", "sentences", {"p_score_text": 0.7, "d_score_text": 0.5, "s_score_text": 0.6}
        ),
    ]
    bare = _write_run(tmp_path, "base", "Transformer", "json", {})
    runs.append(RunEntry(bare.name, bare.label, bare.target, bare.summary, bare.predictions))
    t2 = run_tables(runs, tmp_path / "out")["table2"]
    names = [name for name, _ in TABLE2_STRUCTURE]
    assert t2.select("Method", "Target", *names).rows()[:2] == [
        ("Qwen", "Structured-First", 0.6, 0.4, 0.5),
        ("Qwen", "Sentence-Direct", 0.7, 0.5, 0.6),
    ]
    assert all(math.isnan(v) for v in t2.row(2)[t2.columns.index("P-Score") :][:3])
    caption = (tmp_path / "out" / "table2.md").read_text(encoding="utf-8")
    assert "s_score_text|s_rrg (P-Score, D-Score, S-Score)" in caption
    assert "extractor" in caption and "parsed" in caption
