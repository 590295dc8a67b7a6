"""VERT few-shot judging: shots drawn with a seed from the training part of judge-train-prepare's
examples table, shown before the scored pair, never one of the scored pairs, named in the signature."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from srrg.config import from_dict
from srrg.errors import UserError
from srrg.metrics.judges.common import load_prompt
from srrg.metrics.judges.few_shot import draw_shots
from srrg.metrics.judges.vert import Vert, vert_requests
from srrg.settings.fields import build
from srrg.settings.metrics import FewShotConfig, VertConfig

SPLITS = ["train", "train", "test", "train", "validate", "train", "train"]
STATUS = ["ok", "ok", "ok", "no_target", "ok", "ok", "ok"]


def vert_config(**few_shot) -> VertConfig:
    """A VertConfig as the config door builds it (the few_shot mapping becomes FewShotConfig)."""
    return from_dict(VertConfig, {"few_shot": few_shot})


def examples(tmp_path) -> str:
    """Seven pairs in judge-train-prepare's layout (rows out of pair-id order): train rows p0, p1,
    p5, p6 are usable (p3 has no target; p2 is test, p4 validate)."""
    ids = [f"p{i}" for i in range(7)]
    frame = pl.DataFrame(
        {
            "pair_id": ids,
            "case_id": ids,
            "split": SPLITS,
            "reference": [f"reference {i}" for i in range(7)],
            "candidate": [f"candidate {i}" for i in range(7)],
            "human": [float(i) for i in range(7)],
            "target": [None if s != "ok" else f"[Score]:\n{i / 10:.2f}" for i, s in enumerate(STATUS)],
            "messages": ["[]"] * 7,
            "status": STATUS,
        }
    ).reverse()
    path = tmp_path / "examples.parquet"
    frame.write_parquet(path)
    return str(path)


def test_shots_are_the_seeded_draw_of_the_training_rows(tmp_path):
    """The usable train rows sorted by id are p0, p1, p5, p6; seed 3 picks the rows of
    default_rng(3).permutation(4)[:2] (by hand from numpy, not from the code under test). Fails if
    test/validate rows or rows without a score could be drawn, or if file order mattered."""
    source = examples(tmp_path)
    usable = ["p0", "p1", "p5", "p6"]
    want = [usable[i] for i in np.random.default_rng(3).permutation(4)[:2]]
    shots = draw_shots(source, 2, 3, "train")
    assert [s.pair_id for s in shots] == want
    assert {s.pair_id: s.score for s in draw_shots(source, 4, 0, "train")} == {
        "p0": 0.0,
        "p1": 0.1,
        "p5": 0.5,
        "p6": 0.6,
    }
    assert draw_shots(source, 2, 3, "train") == shots  # the same seed, the same shots
    assert draw_shots(str(tmp_path), 2, 3, "train") == shots  # the folder names its examples.parquet


def test_shots_go_before_the_scored_pair_and_zero_shot_is_unchanged(tmp_path):
    """k = 2: the prompt shows both examples with their expert scores, then the pair; k = 0 keeps
    the packaged prompt (same template version as before few-shot existed)."""
    source = examples(tmp_path)
    cfg = vert_config(k=2, seed=3, source=source)
    content = vert_requests(["the ref"], ["the cand"], cfg)[0].messages[0]["content"]
    shots = draw_shots(source, 2, 3, "train")
    for n, shot in enumerate(shots, start=1):
        block = f"Example {n}.\nReference report:\n{shot.reference}\n\nCandidate report:\n{shot.candidate}"
        assert block + f"\n\nExpert score: {shot.score:.2f}" in content
    assert content.index("Example 2.") < content.index("Reference report:\nthe ref")
    zero = vert_requests(["the ref"], ["the cand"], VertConfig())[0]
    assert zero.messages[0]["content"] == load_prompt("vert").replace("{reference}", "the ref").replace(
        "{candidate}", "the cand"
    )
    structured = vert_requests(["the ref"], ["the cand"], cfg, structured=True)[0].messages[0]["content"]
    assert "Example 2." in structured and "[Score]:" not in structured.split("Now grade")[1].split("Reference")[0]


def test_a_scored_pair_among_the_shots_is_refused(tmp_path):
    """Scoring the pair of shot p1 (whitespace and case aside) with p1 in the prompt: UserError."""
    source = examples(tmp_path)
    cfg = vert_config(k=4, seed=0, source=source)
    with pytest.raises(UserError, match="is few-shot example p1"):
        vert_requests(["other", "Reference  1"], ["x", "candidate 1"], cfg)
    assert len(vert_requests(["reference 2"], ["candidate 2"], cfg)) == 1  # a test pair is fine


def test_the_signature_names_the_shots(tmp_path):
    """k > 0: `shots:<ids>` in the signature and another prompt hash; k = 0: the signature a VERT
    judge had before (no few_shot or shots part)."""
    source = examples(tmp_path)
    ids = [s.pair_id for s in draw_shots(source, 2, 3, "train")]
    few = Vert(few_shot={"k": 2, "seed": 3, "source": source}).signature("vert")
    plain = Vert().signature("vert")
    assert f"|shots:{'+'.join(ids)}|" in few
    assert "shots" not in plain and "few_shot" not in plain and "few_shot" not in few
    assert plain.split("|prompt:")[1] != few.split("|prompt:")[1]


@pytest.mark.parametrize(
    ("options", "message"),
    [({"k": 5, "source": "EX"}, r"few_shot.k is 5 but .* has 4 scored 'train' example"),
     ({"k": 1, "source": "NOWHERE"}, "no examples.parquet there"),
     ({"k": 1}, "needs few_shot.source")],
)  # fmt: skip
def test_bad_few_shot_settings_are_one_line_errors(tmp_path, options, message):
    options = {k: examples(tmp_path) if v == "EX" else str(tmp_path / v) if v == "NOWHERE" else v
               for k, v in options.items()}  # fmt: skip
    with pytest.raises((UserError, ValueError), match=message):
        vert_requests(["r"], ["h"], vert_config(**options))


def test_few_shot_config_rejects_negative_k():
    with pytest.raises(ValueError, match="^k must be >= 0"):
        FewShotConfig(k=-1)
    with pytest.raises(ValueError, match=r"^judge\.options\.vert\.few_shot\.k must be >= 0"):
        build(VertConfig, {"few_shot": {"k": -1}}, "judge.options.vert")
