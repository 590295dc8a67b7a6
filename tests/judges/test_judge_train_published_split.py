"""Judge fine-tuning on a rating set's own published split (judge_train.split_by: published): on a
RaTE-Eval-layout folder with its own rate_train.csv and rate_test.csv, the test split is exactly
the published test file, validation is a share of the training file's cases, and no test case
reaches the training examples."""

from __future__ import annotations

import json

import polars as pl
import pytest
from judge_train_helpers import rate_eval_folder

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.judge_train.dataset import OK, TEST_CASE, build_examples, published_splits
from srrg.metaeval.readers.load import load_dataset
from srrg.settings.judge_train import JudgeTrainConfig


def test_the_reader_records_each_pairs_published_file(tmp_path):
    """Bug caught: the published split lost on the way (every pair re-split by case), or a pair
    labelled with the other file's split."""
    ds = load_dataset("rate_eval", rate_eval_folder(tmp_path))
    assert {p: s for p, s in ds.splits.items() if p.startswith("rate_test:")} == {
        f"rate_test:{i}": "test" for i in range(6)
    }
    assert sum(s == "train" for s in ds.splits.values()) == 21
    assert not load_dataset("rate_eval", tmp_path / "Task2_paragraph_rate" / "rate_train.csv").splits  # one file


def test_published_split_trains_on_train_only(tmp_path):
    """Bugs caught: a test-file pair in train or validate, a training case split across train and
    validate, a test case's reference trained on through a training-file pair, validation not
    drawn from the training file."""
    ds = load_dataset("rate_eval", rate_eval_folder(tmp_path))
    examples, summary = build_examples(ds, JudgeTrainConfig(validate_fraction=0.1))
    test = examples.filter(pl.col("split") == "test")
    assert sorted(test["pair_id"]) == sorted(p for p in ds.splits if p.startswith("rate_test:"))
    trained = examples.filter(pl.col("split").is_in(["train", "validate"]) & (pl.col("status") == OK))
    assert trained["pair_id"].str.starts_with("rate_train:").all()
    assert not set(trained["case_id"]) & set(test["case_id"])  # no test case id in the training examples
    leaked = examples.filter(pl.col("status") == TEST_CASE)
    assert leaked["pair_id"].to_list() == ["rate_train:20"] and leaked["split"].item() != "test"
    assert (
        examples.group_by("case_id")
        .agg(pl.col("split").n_unique())
        .filter(~pl.col("case_id").is_in(list(test["case_id"])))["split"]
        .max()
        == 1
    )
    assert summary["split_by"] == "published"
    assert summary["cases"]["validate"] == 1 and summary["cases"]["train"] == 10  # 10 % of 10 cases (+ leaked)


def test_cases_option_and_sets_without_a_published_split_split_by_case(tmp_path):
    """Bug caught: split_by: cases ignored on a set that publishes a split."""
    ds = load_dataset("rate_eval", rate_eval_folder(tmp_path, shared=False))
    examples, summary = build_examples(ds, JudgeTrainConfig(split_by="cases", test_fraction=0.25))
    assert summary["split_by"] == "cases"
    assert examples.filter(pl.col("split") == "test")["pair_id"].str.starts_with("rate_train:").any()


def test_published_splits_by_hand():
    """Bugs caught: validate cases taken from the test file, an empty side accepted."""
    ids = ["a:0", "a:1", "b:0", "c:0", "t:0"]
    cases = ["a", "a", "b", "c", "t"]
    published = {"a:0": "train", "a:1": "train", "b:0": "train", "c:0": "train", "t:0": "test"}
    splits, shared = published_splits(ids, cases, published, 0.34, 0)
    assert splits[4] == "test" and splits[0] == splits[1] and splits[:4].count("validate") in (1, 2)
    assert shared == set()
    with pytest.raises(UserError, match="no training or no test case"):
        published_splits(["t:0"], ["t"], {"t:0": "test"}, 0.1, 0)


def test_cli_prepare_on_the_published_split(tmp_path, capsys):
    """Bug caught: the held-out tables of the CLI not the published test file."""
    folder = rate_eval_folder(tmp_path / "data")
    argv = ["judge-train-prepare", "--adapter", "rate_eval", "--data", str(folder), "--out-dir", str(tmp_path / "o")]
    assert srrg_main(argv) == 0
    held = pl.read_parquet(tmp_path / "o" / "heldout" / "refs.parquet")
    assert sorted(held["study_id"]) == sorted(f"rate_test:{i}" for i in range(6))
    assert json.loads((tmp_path / "o" / "prepare.json").read_text())["split_by"] == "published"
