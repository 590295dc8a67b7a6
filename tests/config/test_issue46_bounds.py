"""Settings that passed `snakemake -n` and failed (or were ignored) in their job are refused at the
pre-check with one line naming the key (issue 46: C1, C2, C3, C4, C5, C6); metric names the
pre-check cannot know are checked when the job reads the scores (C5)."""

from __future__ import annotations

import copy
from typing import Any

import polars as pl
import pytest

from srrg.config import ConfigError
from srrg.config_tree import check_workflow_config
from srrg.errors import UserError
from srrg.settings.metaeval import MetaevalConfig
from srrg.text.decode import read_mapping_file

BASE = read_mapping_file("config.yaml")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) and value else value
    return out


def _refusal(override: dict[str, Any]) -> str | None:
    try:
        check_workflow_config(_merge(BASE, override))
    except ConfigError as err:
        return str(err)
    return None


def _check(override: dict[str, Any], words: tuple[str, ...]) -> None:
    message = _refusal(override)
    assert message is not None, f"passed the pre-check: {override}"
    assert "\n" not in message and all(w in message for w in words), message


TRAIN = {"train": {"model": {}, "data": {}, "trainer": {}}}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (("model", "baseline", "heads"), 3),  # 3 does not divide d_model 512
        (("model", "baseline", "heads"), 0),
        (("model", "baseline", "d_model"), 0),
        (("model", "baseline", "layers"), 0),
        (("model", "baseline", "dropout"), 1.5),
        (("model", "baseline", "min_word_count"), 0),
        (("model", "projector_hidden"), 0),
        (("model", "max_target_tokens"), 0),
        (("data", "batch_size"), 0),
        (("data", "max_train_studies"), 0),
        (("data", "max_val_studies"), -1),
    ],
)
def test_c2_model_and_data_keys_have_bounds(key: tuple[str, ...], value: Any) -> None:
    """C2: 11 model/data keys without bounds passed `snakemake -n` and killed the train job (heads not
    dividing d_model, dropout 1.5, batch_size 0, ...)."""
    over: dict[str, Any] = {key[-1]: value}
    for part in reversed(key[:-1]):
        over = {part: over}
    _check({"train": over}, ("train", key[-1]))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_steps", -1),  # trained Lightning's 3,000 steps without a word
        ("max_steps", 0),
        ("devices", 0),
        ("devices", "two"),
        ("num_nodes", 0),
        ("seed", -1),
        ("checkpoint_every_n_steps", 0),
        ("val_check_interval", 0),
        ("limit_val_batches", -1),
        ("limit_val_batches", 1.5),
        ("accumulate_grad_batches", 0),
        ("gradient_clip_val", -1.0),
        ("log_every_n_steps", 0),
        ("precision", "bf17"),
        ("accelerator", "gpuu"),
    ],
)
def test_c1_trainer_keys_have_bounds(key: str, value: Any) -> None:
    """C1: 14 trainer keys without bounds (max_steps -1 silently trained 3,000 steps)."""
    _check({"train": {"trainer": {key: value}}}, ("train", key))


@pytest.mark.parametrize(
    "override",
    [
        {"metaeval": {"correlate": {"seed": -1}}},
        {"metaeval": {"correlate": {"ensemble_seed": -1}}},
        {"score": {"options": {"vert": {"few_shot": {"seed": -1}}}}},
        {"judge": {"options": {"vert": {"few_shot": {"seed": -1}}}}},
        {"ingest": {"split": {"seed": -1}}},
        {"judge_train": {"train": {"split_seed": -1}}},
    ],
)
def test_c4_a_negative_seed_is_refused_at_the_pre_check(override: dict[str, Any]) -> None:
    """C4: a negative seed (correlate, few-shot) passed the pre-check and failed in numpy."""
    _check(override, ("seed",))


@pytest.mark.parametrize(
    "llm", [{"no_such_key": 1}, {"backend": "nope"}, {"api_key": "sk-inline"}, {"max_new_tokens": 0}]
)
def test_c3_judge_llm_settings_under_score_options_are_built_at_the_pre_check(llm: dict[str, Any]) -> None:
    """C3: a judge's `llm` settings under score.options.<judge> were not checked by the dry run (the
    judge's client built them only in the job)."""
    _check({"score": {"options": {"green": {"llm": llm}}}}, ("score.options.green.llm",))
    _check({"judge": {"options": {"vert": {"llm": llm}}}}, ("judge.options.vert.llm",))


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ({"metaeval": {"correlate": {"count_judges": ["gren"]}}}, ("count_judges", "gren")),
        ({"metaeval": {"correlate": {"test_fraction": 1.0}}}, ("test_fraction",)),
        ({"metaeval": {"correlate": {"test_fraction": 0}}}, ("test_fraction",)),
        ({"metaeval": {"grid": {"variants": []}}}, ("variants",)),
        ({"score": {"options": {"vert": {"few_shot": {"split": "tst"}}}}}, ("few_shot", "split", "tst")),
        (
            {"metaeval": {"correlate": {"metrics": ["bleu_4", "green"], "paired_reference": "bleu4"}}},
            ("paired_reference", "bleu4"),
        ),
        (
            {"metaeval": {"correlate": {"metrics": ["bleu_4", "green"], "ensembles": {"e": ["green", "rogue_l"]}}}},
            ("ensembles.e", "rogue_l"),
        ),
    ],
)
def test_c6_metaeval_names_and_ranges_are_refused_at_the_pre_check(override, words) -> None:
    """C6: count_judges, paired_reference, test_fraction, grid.variants [] and few_shot.split were
    refused only at the job (or ignored: an unknown count judge was skipped)."""
    _check(override, words)


def test_c5_a_lower_is_better_typo_is_refused_at_the_pre_check() -> None:
    """C5: an unknown lower_is_better name passed the pre-check and the run, and the metric kept the
    wrong sign; with correlate.metrics set the names are known before the first job."""
    over = {"metaeval": {"correlate": {"metrics": ["bleu_4", "green_ec"], "lower_is_better": ["green_ecc"]}}}
    _check(over, ("metaeval.correlate.lower_is_better", "green_ecc"))
    ok = {"metaeval": {"correlate": {"metrics": ["bleu_4", "green_ec"], "lower_is_better": ["green_ec"]}}}
    assert _refusal(ok) is None


def test_c5_a_lower_is_better_typo_is_refused_by_the_job() -> None:
    """C5: with correlate.metrics unset the correlated columns are known only from the scores table;
    the job refuses a name that is none of them instead of correlating with the wrong sign."""
    from srrg.metaeval.run import run_metaeval

    scores = pl.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(12)],
            "bleu_4": [0.1 * i for i in range(12)],
            "green": [0.05 * (i % 5) for i in range(12)],
            "proxy_rating": [float(i % 4) for i in range(12)],
        }
    )
    cfg = MetaevalConfig(human_column="proxy_rating", lower_is_better=("bleu4",), n_boot=0, n_permutations=0)
    with pytest.raises(UserError, match=r"metaeval\.correlate\.lower_is_better 'bleu4' not among the correlated"):
        run_metaeval(scores, None, cfg)
    good = MetaevalConfig(human_column="proxy_rating", lower_is_better=("bleu_4",), n_boot=0, n_permutations=0)
    assert run_metaeval(scores, None, good).info["metrics"] == ["bleu_4", "green"]
