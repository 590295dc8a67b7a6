"""A distilled GEMA (GEMA-Score Table 6; judge_train.train.target: gema): the examples are GEMA's
agent requests as the `gema` metric sends them with a teacher judge's answers as targets, and a
student that answers exactly as the teacher reproduces the teacher's GEMA scores."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from judge_train_helpers import synthetic

from srrg.errors import UserError
from srrg.judge_train.dataset import (
    DUPLICATE,
    HYP_ENTITIES,
    NO_TARGET,
    OK,
    REF_ENTITIES,
    SUBJECTIVE,
    build_examples,
    gema_targets,
    teacher_explanation,
    write_prepared,
)  # fmt: skip
from srrg.judge_train.epochs import judge_scores
from srrg.metrics.judges.common import Reply
from srrg.metrics.judges.gema import gema_requests, parse_entities, parse_subjective, score_answers
from srrg.settings.judge_train import JudgeTrainConfig
from srrg.settings.metrics import GemaConfig

REF = '{"entities": [{"disease": "nodule", "location": "right lung", "severity": "small", "uncertainty": "certain"}]}'
HYP = '{"entities": [{"disease": "nodule", "location": "left lung", "severity": null, "uncertainty": "certain"}]}'


def sub(k: int) -> str:
    return json.dumps(
        {"fluency_errors": 0, "grammar_errors": 4 * k, "terminology_errors": 1, "explanation": f"{k} slips"}
    )


def teacher(ds, fail: str = "") -> pl.DataFrame:
    """The teacher's `srrg score --metrics gema` table for the pairs of ds (answers as above, the
    k-th pair with 4k grammar errors); `fail` makes pair 1:0's agent of that name fail."""
    pairs = ds.pairs
    refs, hyps = [REF] * pairs.height, [HYP] * pairs.height
    subs: list = [sub(k) for k in range(pairs.height)]
    if fail == "hyp_entities":
        hyps[pairs["pair_id"].to_list().index("1:0")] = Reply("{", "truncated")
    result = score_answers(refs, hyps, subs)
    return pl.DataFrame({"study_id": pairs["pair_id"], **result.per_report})


def test_teacher_answers_read_back_as_the_teacher_read_them():
    """Bugs caught: targets the gema parsers cannot read, counts or entities changed on the way,
    srrg's objective note taught as the agent's explanation, a failed agent's empty answer learned."""
    table = teacher(synthetic(2, 1), fail="hyp_entities")
    ok_row = table.row(0, named=True)
    assert gema_targets(table.row(1, named=True))[HYP_ENTITIES] is None  # 1:0's candidate agent failed
    targets = gema_targets(ok_row)
    assert parse_entities(targets[REF_ENTITIES])[0] == parse_entities(REF)[0]
    counts, explanation, status = parse_subjective(targets[SUBJECTIVE])
    assert counts == {"fluency": 0, "grammar": 0, "terminology": 1} and explanation == "0 slips" and status == OK
    assert teacher_explanation("matched: nodule; missing: -; extra: - | 2 slips") == "2 slips"
    assert teacher_explanation("matched: -; missing: a; extra: -") == "" and teacher_explanation("plain") == "plain"
    failed = gema_targets({**ok_row, "gema_status": "truncated:hyp_entities"})
    assert failed[HYP_ENTITIES] is None and failed[REF_ENTITIES] is not None and failed[SUBJECTIVE] is not None
    assert gema_targets({**ok_row, "gema_fluency_errors": math.nan})[SUBJECTIVE] is None


def test_gema_examples_are_the_metrics_requests(tmp_path):
    """Bugs caught: prompts other than the ones the `gema` metric sends, a report's entity request
    learned twice, a failed teacher agent trained on, the held-out tables with a row per request,
    auto not picking gema for a GEMA table."""
    ds = synthetic(4, 2)
    table = teacher(ds, fail="hyp_entities")
    cfg = JudgeTrainConfig(score_min=1, score_max=5, split_by="cases")
    examples, summary = build_examples(ds, cfg, table)
    assert summary["target"] == "gema" and summary["n_pairs"] == 8 and examples.height == 24
    refs, hyps = ds.pairs["reference"].to_list(), ds.pairs["candidate"].to_list()
    entity, texts, subjective = gema_requests(refs, hyps, GemaConfig(max_words=cfg.max_words))
    sent = {json.dumps(list(r.messages), ensure_ascii=False) for r in [*entity, *subjective]}
    assert set(examples["messages"]) == sent
    row = examples.filter((pl.col("pair_id") == "1:0") & (pl.col("request") == HYP_ENTITIES)).row(0, named=True)
    assert row["status"] == NO_TARGET and row["target"] is None  # the teacher's truncated answer is no target
    learned = examples.filter(pl.col("status") == OK)
    assert learned.select("split", "messages").is_duplicated().sum() == 0  # each request learned once per split
    # the candidates "candidate 0" / "candidate 1" recur in every case: their entity rows repeat
    assert (examples["status"] == DUPLICATE).sum() > 0
    write_prepared(examples, ds.ratings, summary, tmp_path)
    held = pl.read_parquet(tmp_path / "heldout" / "refs.parquet")
    assert held.height == examples.filter((pl.col("split") == "test") & (pl.col("request") == SUBJECTIVE)).height
    with pytest.raises(UserError, match="teacher's GEMA answers"):
        build_examples(ds, JudgeTrainConfig(target="gema"))
    with pytest.raises(UserError, match="missing column"):
        build_examples(ds, JudgeTrainConfig(target="gema"), table.drop("gema_status"))


def test_a_student_answering_as_the_teacher_scores_as_the_teacher():
    """Bug caught: the per-epoch GEMA of the student built from the wrong agent's answer (reference
    and candidate entities swapped, subjective answers of another pair)."""
    ds = synthetic(3, 2)
    table = teacher(ds)
    examples, _ = build_examples(ds, JudgeTrainConfig(score_min=1, score_max=5, split_by="cases"), table)
    student = {m: Reply(t) for m, t in examples.select("messages", "target").iter_rows() if t is not None}
    scores, human = judge_scores("gema", examples, student)
    by_pair = dict(zip(table["study_id"], table["gema"]))
    pairs = examples.filter(pl.col("request") == SUBJECTIVE)
    assert scores == pytest.approx([by_pair[p] for p in pairs["pair_id"]])
    assert human == pairs["human"].to_list()
    assert len(set(scores)) > 1  # the pairs differ (grammar errors): a swap would show


@pytest.mark.slow  # 12 CPU s: the GEMA prompts are ~2,000 characters of a character tokenizer
def test_a_gema_student_trains_and_is_evaluated_per_epoch(tmp_path):
    """Bug caught: GEMA examples (three requests a pair, duplicates) not trainable, or the per-epoch
    evaluation failing on a student's real (unparseable) answers instead of recording them."""
    from judge_train_helpers import save_tiny_base, tiny_cfg

    from srrg.judge_train.train import fit

    ds = synthetic(4, 2)
    cfg = tiny_cfg(save_tiny_base(tmp_path / "base"), max_steps=0, epochs=1, eval_epochs=(1,), merge=False,
                   score_min=1, score_max=5, split_by="cases", test_fraction=0.5, max_length=2048)  # fmt: skip
    examples, _ = build_examples(ds, cfg, teacher(ds))
    summary = fit(examples, cfg, tmp_path / "out", tmp_path / "work", mode="gema")
    assert summary["train_examples"] == int(((examples["split"] == "train") & (examples["status"] == OK)).sum())
    table = pl.read_csv(tmp_path / "out" / "epoch_tau.csv")
    assert table["epoch"].to_list() == [1] and table["n_test"].item() == 4  # the 2 test cases' 4 pairs
    assert table["status"].item() in ("ok", "too_few_scores")
