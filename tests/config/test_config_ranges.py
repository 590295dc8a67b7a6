"""Ranges, allowed values and per-run settings are refused at `snakemake -n`, before the first job
(docs/config.md: checks before the first job)."""

from __future__ import annotations

import pytest

from srrg.config import ConfigError, stage_config
from srrg.config_tree import check_workflow_config


def run(**fields):
    return {"train": {"runs": [{"name": "r1", "label": "R", **fields}]}}


@pytest.mark.parametrize(
    "cfg, message",
    [
        (run(overrides={"trainer": {"max_step": 3}}), r"unknown key train\.runs\.0\.overrides\.trainer\.max_step"),
        (run(overrides={"modle": {}}), r"unknown key train\.runs\.0\.overrides\.modle"),
        (run(overrides={"trainer": {"max_steps": "four"}}), r"train\.runs\.0\.overrides\.trainer\.max_steps: 'four'"),
        (run(overrides={"data": {"batch_size": [2]}}), r"train\.runs\.0\.overrides\.data\.batch_size"),
        (run(infer={"max_studes": 5}), r"unknown key train\.runs\.0\.infer\.max_studes"),
        (run(infer={"num_beams": 0}), r"train\.runs\.0\.infer\.num_beams: 0 is less than the minimum of 1"),
        (run(infer={"split": "tset"}), r"train\.runs\.0\.infer\.split: 'tset' is not one of"),
        ({"judge": {"options": {"gema": {"alpah": 0.5}}}}, r"unknown key judge\.options\.gema\.alpah"),
        ({"judge": {"options": {"gema": {"alpha": "high"}}}}, r"judge\.options\.gema\.alpha: 'high'"),
        ({"extract": {"sections": ["findngs"]}}, r"extract\.sections\.0: 'findngs' is not one of"),
        ({"extract": {"sections": []}}, r"extract\.sections"),
        ({"extract": {"sections": ["findings", "findings"]}}, r"extract\.sections"),
        ({"extract": {"batch_size": 0}}, r"extract\.batch_size: 0 is less than the minimum of 1"),
        ({"extract": {"n_process": 0}}, r"extract\.n_process: 0"),
        ({"extract": {"max_chars": -1}}, r"extract\.max_chars: -1"),
        ({"infer": {"num_beams": 0}}, r"infer\.num_beams: 0"),
        ({"infer": {"max_new_tokens": 0}}, r"infer\.max_new_tokens: 0"),
        ({"infer": {"max_studies": 0}}, r"infer\.max_studies: 0"),
        ({"infer": {"num_return_sequences": 0}}, r"infer\.num_return_sequences: 0"),
    ],
)
def test_refused_before_the_first_job(cfg, message):
    with pytest.raises(ConfigError, match=message):
        check_workflow_config(cfg)


def test_valid_values_pass_and_run_settings_get_no_defaults():
    checked = check_workflow_config(
        {
            **run(overrides={"trainer": {"max_steps": 3}}, infer={"max_studies": 5}),
            "judge": {"options": {"gema": {"alpha": 0.5}}},
            "extract": {"sections": ["impression", "wet_read", "preamble"]},
            "infer": {"max_studies": None},
        }
    )
    spec = checked["train"]["runs"][0]
    assert spec["overrides"] == {"trainer": {"max_steps": 3}} and spec["infer"] == {"max_studies": 5}
    assert checked["infer"]["max_studies"] is None


def test_a_stage_run_by_hand_refuses_the_same_values():
    with pytest.raises(ConfigError, match=r"extract\.sections\.0"):
        stage_config({"sections": ["summary"]}, dict, "extract")
    with pytest.raises(ConfigError, match=r"infer\.max_studies: 0"):
        stage_config({"max_studies": 0}, dict, "infer")
