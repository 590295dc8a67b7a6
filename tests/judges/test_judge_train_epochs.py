"""Tau per epoch (VERT: Kendall tau of the tuned judge on the test split after epochs 1, 2, 3, 5):
one row per configured epoch, the answers asked for are the test pairs only, and the tau is the
tau-b of the judge's scores with the human scores."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from judge_train_helpers import rate_eval_folder, save_tiny_base, tiny_cfg

from srrg.cli import main as srrg_main
from srrg.judge_train import epochs
from srrg.metrics.judges.common import Reply


def test_tau_row_by_hand():
    """Bugs caught: tau not tau-b (ties), error counts not negated, NaN scores counted as scored."""
    human = [0.0, 1.0, 0.5, 1.5, 1.0, 2.0]
    scores = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    row = epochs.tau_row(1, 3, scores, human, lower=False)
    # 12 concordant, 2 discordant, 1 pair tied in human of 15: 10 / sqrt(15 * 14)
    assert row["kendall"] == pytest.approx(10 / math.sqrt(210)) and row["status"] == "ok"
    assert epochs.tau_row(1, 3, scores, human, lower=True)["kendall"] == pytest.approx(-10 / math.sqrt(210))
    few = epochs.tau_row(2, 6, [0.1, math.nan, math.nan, math.nan, 0.2, 0.3], human, lower=False)
    assert few["n_scored"] == 3 and few["n_test"] == 6
    none = epochs.tau_row(2, 6, [math.nan] * 6, human, lower=False)
    assert math.isnan(none["kendall"]) and none["status"] == epochs.NO_TAU


def test_epoch_table_keeps_every_configured_epoch():
    """Bugs caught: an epoch never reached silently missing, a repeated evaluation (resume) twice."""
    history = [{"loss": 1.0}, {"test_epoch": 1, "test_step": 3, "test_kendall": 0.2, "test_n_test": 6,
               "test_n_scored": 6, "test_status": "ok"}]  # fmt: skip
    history.append({**history[1], "test_kendall": 0.3})
    table = epochs.epoch_table(history, (5, 1))
    assert table["epoch"].to_list() == [1, 5] and table["kendall"][0] == 0.3
    assert table["status"].to_list() == ["ok", epochs.NOT_REACHED]


def test_fit_writes_tau_per_epoch_on_the_test_split_only(tmp_path, monkeypatch):
    """Bugs caught: the per-epoch answers asked for training pairs, an evaluated epoch without a row,
    tau not computed from the answers, prepare.json's target ignored, the last epoch's tau lost on
    a rerun that resumes after it. The tiny model answers
    for real (its answers are recorded), then canned scores make the tau hand-computable."""
    from srrg.judge_train.train import run_judge_train_fit

    folder = rate_eval_folder(tmp_path / "data", n_train_cases=4, n_test_cases=3, shared=False)
    prepared = tmp_path / "prepared"
    argv = ["judge-train-prepare", "--adapter", "rate_eval", "--data", str(folder), "--out-dir", str(prepared)]
    assert srrg_main(argv) == 0
    asked: list[list[str]] = []
    real = epochs.answer_test

    def spy(model, tokenizer, test, **kw):
        asked.append(test["pair_id"].to_list())
        replies = real(model, tokenizer, test, **kw)
        assert len(replies) == test.height and {r.status for r in replies} <= {"ok", "truncated"}
        return [Reply(f"[Score]:\n{int(p.split(':')[1]) / 10:.1f}") for p in test["pair_id"]]

    monkeypatch.setattr(epochs, "answer_test", spy)
    base = save_tiny_base(tmp_path / "base")
    cfg = tiny_cfg(base, max_steps=0, epochs=2, eval_epochs=(1, 2, 5), merge=False, save_steps=100)
    summary = run_judge_train_fit(prepared, cfg, tmp_path / "out", tmp_path / "work")
    test_ids = sorted(f"rate_test:{i}" for i in range(6))
    assert [sorted(a) for a in asked] == [test_ids, test_ids]  # epochs 1 and 2, the test pairs only
    trained = pl.read_parquet(tmp_path / "out" / "encoded.parquet").filter(pl.col("split") != "test")
    assert not set(trained["pair_id"]) & set(test_ids)
    table = pl.read_csv(tmp_path / "out" / "epoch_tau.csv")
    assert table["epoch"].to_list() == [1, 2, 5]
    assert table["status"].to_list() == ["ok", "ok", "not_reached"]
    assert table["kendall"][0] == pytest.approx(10 / math.sqrt(210))  # the human scores of test_tau_row_by_hand
    assert table["step"].to_list()[:2] == [summary["steps"] // 2, summary["steps"]]
    assert json.loads((tmp_path / "out" / "fit.json").read_text())["epoch_tau"]["5"] is None
    assert (tmp_path / "out" / "epoch_tau.png").stat().st_size > 0
    assert "| 5 | - | - | - | not_reached |" in (tmp_path / "out" / "epoch_tau.md").read_text()
    # a rerun resumes from the checkpoint saved at the last step, before that epoch's end was evaluated
    again = run_judge_train_fit(prepared, cfg, tmp_path / "out", tmp_path / "work")
    assert again["resumed_from"].endswith(f"checkpoint-{summary['steps']}") and len(asked) == 3
    assert pl.read_csv(tmp_path / "out" / "epoch_tau.csv").equals(table)


def test_fit_refuses_examples_without_the_request_column(tmp_path, capsys):
    """Bug caught: an examples table prepared before GEMA targets (no `request` column) failing
    deep in training with a polars traceback instead of one line."""
    folder = rate_eval_folder(tmp_path / "data", n_train_cases=3, n_test_cases=3, shared=False)
    prepared = tmp_path / "prepared"
    argv = ["judge-train-prepare", "--adapter", "rate_eval", "--data", str(folder), "--out-dir", str(prepared)]
    assert srrg_main(argv) == 0
    examples = pl.read_parquet(prepared / "examples.parquet")
    examples.drop("request").write_parquet(prepared / "examples.parquet")
    argv = ["judge-train-fit", "--prepared", str(prepared), "--out-dir", str(tmp_path / "o"), "--work-dir",
            str(tmp_path / "w")]  # fmt: skip
    assert srrg_main(argv) == 2
    assert "lacks column(s) ['request']" in capsys.readouterr().err
