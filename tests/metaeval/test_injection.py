"""Error injection (srrg.metaeval.injection, docs/metaeval.md "Error injection"): the perturbations,
their statuses and the detection counts, checked by hand."""

from __future__ import annotations

import json
import math
import random

import polars as pl
import pytest

from srrg.cli import main
from srrg.metaeval.injection import detection, drop_findings, findings, insert_findings, perturb
from srrg.settings.fields import SettingsError
from srrg.settings.metaeval import ErrorInjection

POOL = {"pneumothorax": "Right pneumothorax.", "edema": "Mild edema.", "nodule": "A nodule."}


def test_detection_counts_by_hand():
    """Bugs caught: a tie counted as detected, the control not counted as a false positive, a NaN
    score kept (or dropped without being counted), F1 from the wrong counts.
    Clean 1, 1, 1, 1, NaN; perturbed 0.5, 1, 0.9, 0.2, 0; control 1, 0.8, 1, 1, 1; tolerance 0.05:
    pairs 1-4 kept (one unscored); flagged perturbed (below 1 - 0.05 = 0.95): 0.5, 0.9, 0.2 -> TP 3,
    FN 1 (the tie 1 vs 1); flagged controls: 0.8 -> FP 1, TN 3. Precision 3/4, recall 3/4,
    F1 = 6 / (6 + 1 + 1) = 0.75; mean drop (0.5 + 0 + 0.1 + 0.8) / 4."""
    got = detection([1, 1, 1, 1, math.nan], [0.5, 1, 0.9, 0.2, 0], [1, 0.8, 1, 1, 1], 0.05)
    assert (got["n"], got["n_unscored"], got["tp"], got["fn"], got["fp"], got["tn"]) == (4, 1, 3, 1, 1, 3)
    assert got["precision"] == pytest.approx(0.75) and got["recall"] == pytest.approx(0.75)
    assert got["f1"] == pytest.approx(0.75) and got["mean_drop"] == pytest.approx(0.35)
    # a drop of exactly the tolerance is not a detection; nothing flagged: precision undefined, F1 0
    edge = detection([1.0], [0.95], [1.0], 0.05)
    assert (edge["tp"], edge["fp"], edge["f1"]) == (0, 0, 0.0) and math.isnan(edge["precision"])
    empty = detection([math.nan], [1.0], [1.0], 0.0)
    assert empty["n"] == 0 and empty["n_unscored"] == 1 and math.isnan(empty["f1"])


def test_findings_are_sentences_and_perturbations_keep_the_rest():
    """Bugs caught: a finding cut inside a sentence, more or fewer than k dropped or inserted, a
    pool finding inserted into a report that already names it, the last finding dropped."""
    text = "No effusion. Heart is normal! Lungs clear? Small nodule."
    assert findings(text) == ["No effusion.", "Heart is normal!", "Lungs clear?", "Small nodule."]
    assert findings("  ") == []
    kept = drop_findings(findings(text), 2, random.Random(0))
    assert len(kept) == 2 and set(kept) < set(findings(text))
    assert drop_findings(["One."], 1, random.Random(0)) is None  # nothing would be left
    grown = insert_findings(findings(text), 2, POOL, random.Random(0))
    added = [s for s in grown if s not in findings(text)]
    assert sorted(added) == sorted(["Right pneumothorax.", "Mild edema."])  # "nodule" is named: not eligible
    assert [s for s in grown if s in findings(text)] == findings(text)  # the rest in its order
    assert insert_findings(findings(text), 3, POOL, random.Random(0)) is None


def test_every_reference_row_has_a_status_and_the_seed_fixes_the_candidates():
    """Bugs caught: a duplicate, blank or too short reference silently lost, candidates that change
    with the other rows or between runs of one seed, the same candidate id twice."""
    cfg = ErrorInjection(k=(1, 2), false_findings=POOL)
    ids, texts = ["a", "b", "c", "d"], ["Effusion. Edema.", "Effusion. Edema.", "", "Pneumothorax."]
    frame = perturb(ids, texts, cfg)
    assert frame.height == 4 * (2 + 2 * 2) and frame["candidate_id"].n_unique() == frame.height
    status = {r["candidate_id"]: r["status"] for r in frame.iter_rows(named=True)}
    assert {status[f"b#{v}"] for v in ("clean", "control", "inserted1", "dropped2")} == {"duplicate"}
    assert frame.filter(pl.col("reference_id") == "b")["same_as"].unique().to_list() == ["a"]
    assert {s for c, s in status.items() if c.startswith("c#")} == {"no_finding"}
    assert status["a#dropped1"] == "ok" and status["a#dropped2"] == "too_few_findings"
    assert status["d#inserted2"] == "ok" and status["d#dropped1"] == "too_few_findings"
    alone = perturb(["a"], texts[:1], cfg)
    assert alone.equals(frame.filter(pl.col("reference_id") == "a"))  # no dependence on other rows
    assert not perturb(ids, texts, ErrorInjection(k=(1, 2), false_findings=POOL, seed=1)).equals(frame)


def test_settings_refuse_an_empty_pool_and_a_k_of_zero():
    """Bugs caught: inserting from an empty pool (every row too_few_false_findings without a word),
    k = 0 (an unperturbed 'perturbation')."""
    with pytest.raises(SettingsError):
        ErrorInjection(false_findings={})
    with pytest.raises(SettingsError):
        ErrorInjection(k=(0, 1))
    assert ErrorInjection(false_findings={}, categories=("dropped",)).categories == ("dropped",)


def test_command_writes_the_table_and_accounts_for_every_row(tmp_path, capsys):
    """Bugs caught: a metric column missing from the table, the identical candidate not scoring 1
    for BLEU-1 (the clean baseline wrong), the statuses not in info.json, a reference that cannot
    be perturbed stopping the run. BLEU-1 drops whenever a finding is inserted or dropped."""
    refs = tmp_path / "refs.jsonl"
    rows = [
        {"study_id": "s1", "report": "No pleural effusion. Heart size is normal. Lungs are clear."},
        {"study_id": "s2", "report": "Mild cardiomegaly. Small left effusion."},
        {"study_id": "s3", "report": "Lungs are clear."},
    ]
    refs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    main(["error-injection", "--refs", str(refs), "--metrics", "bleu,rouge_l", "--out", str(out),
          "--config", json.dumps({"k": [1, 2]})])  # fmt: skip
    table = pl.read_csv(out / "error_injection.csv")
    assert set(table["metric"]) == {"bleu_1", "bleu_4", "rouge_l"} and table.height == 3 * 2 * 2
    scores = pl.read_parquet(out / "scores" / "per_report.parquet")
    assert scores.filter(pl.col("study_id").str.ends_with("#clean"))["bleu_1"].to_list() == pytest.approx([1.0] * 3)
    bleu1 = table.filter(pl.col("metric") == "bleu_1")
    by_cell = {(r["category"], r["k"]): r for r in bleu1.iter_rows(named=True)}
    assert by_cell["inserted", 1]["n"] == 3 and by_cell["inserted", 1]["recall"] == 1.0
    assert by_cell["dropped", 2]["n"] == 1  # s1 only: s2 has 2 findings, s3 one
    info = json.loads((out / "info.json").read_text())
    assert info["statuses"] == {"ok": 15, "too_few_findings": 3} and info["candidates"] == 3 * 6
    assert "metric columns" in capsys.readouterr().out
