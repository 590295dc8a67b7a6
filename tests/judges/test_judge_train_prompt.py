"""VERT's two-line fine-tuning prompt (judge_train.train.vert_variant: two_lines; the `vert`
metric's variant two_lines): the first two lines of our VERT prompt's instructions (the role, the
score instruction) then the pair; the default prompt stays the whole one."""

from __future__ import annotations

import json

import pytest
from judge_train_helpers import synthetic

from srrg.errors import UserError
from srrg.judge_train.dataset import build_examples
from srrg.metrics.judges.common import load_prompt
from srrg.metrics.judges.vert import Vert
from srrg.settings.judge_train import JudgeTrainConfig


def test_two_lines_are_the_vert_prompts_role_and_score_lines():
    """Bug caught: the two-line prompt drifting from the VERT prompt it abbreviates."""
    full, short = load_prompt("vert").splitlines(), load_prompt("vert_two_lines").splitlines()
    assert short[0] == full[0]
    assert f"Step 3. {short[1]}" in full
    assert short[2:] == ["", "Reference report:", "{reference}", "", "Candidate report:", "{candidate}"]


def test_training_prompts_default_whole_and_two_lines_when_asked():
    """Bugs caught: the default training prompt changed, the option ignored, the tuned judge scored
    with another prompt than the one it learned (examples' messages = the vert metric's requests)."""
    ds = synthetic(3, 1)
    refs, hyps = ds.pairs["reference"].to_list(), ds.pairs["candidate"].to_list()
    for variant in ("direct", "two_lines"):
        examples, summary = build_examples(ds, JudgeTrainConfig(vert_variant=variant))
        metric = Vert(variant=variant, max_words=300).requests(refs, hyps)
        assert examples["messages"].to_list() == [json.dumps(list(r.messages), ensure_ascii=False) for r in metric]
        content = json.loads(examples["messages"][0])[0]["content"]
        assert ("[Clinically Significant Errors]" in content) == (variant == "direct")
        assert summary["prompt"] == {"direct": "vert", "two_lines": "vert_two_lines"}[variant]
    assert len(content.splitlines()) == 8  # two lines, then the pair
    with pytest.raises(UserError, match="prompt of score targets"):
        build_examples(ds, JudgeTrainConfig(vert_variant="two_lines", target="analysis"), synthetic(3, 1).pairs)


def test_the_metric_names_the_variant_and_reads_text_answers():
    """Bugs caught: a two-line judge sharing the default's signature (its cached scores), a schema
    asked for that the prompt has no answer format for."""
    default, short = Vert(), Vert(variant="two_lines")
    assert "|variant:two_lines|" in short.signature("vert") and "|variant:direct|" in default.signature("vert")
    assert short.requests(["a"], ["b"], structured=True) == short.requests(["a"], ["b"])
    assert short.score(["[Score]:\n0.7"], structured=True).per_report["vert"] == [0.7]
