"""Config schema: defaults, clear errors for unknown or mistyped keys, typed slices."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
import yaml
from paths import REPO

from srrg import config as C
from srrg.settings.dataset import DatasetConfig
from srrg.settings.ingest import IngestConfig


def test_empty_config_gets_every_default():
    cfg = C.validate({})
    assert cfg["results_dir"] == "results"
    assert cfg["ingest"]["source"] == "iu_xray"
    assert cfg["ingest"]["split"] == {"fractions": {"train": 0.7, "validate": 0.1, "test": 0.2}, "seed": 13}
    assert cfg["dataset"]["rows_per_shard"] == 20000
    assert cfg["llm"]["backend"] == "rules" and cfg["llm"]["concurrency"] == 8
    assert cfg["normalize"]["method"] == "rules"


def test_repo_config_yaml_is_valid_and_keeps_the_data_defaults():
    """The embedded default changes no data setting except the worker count of ingest, which it
    raises to the two cores of `make demo` (like extract.n_process)."""
    loaded, defaults = C.load_config(REPO / "config.yaml"), C.validate({})
    assert loaded["ingest"]["n_process"] == 2
    for name in ("ingest", "dataset", "stats", "normalize"):
        assert {k: v for k, v in loaded[name].items() if k != "n_process"} == {
            k: v for k, v in defaults[name].items() if k != "n_process"
        }, name


def test_repo_config_yaml_says_llm_normalization_fails_without_fallback():
    """normalize.allow_fallback is false by default (a failed LLM request fails the stage): the
    config's comment must not promise a quiet rules fallback."""
    assert C.validate({})["normalize"]["allow_fallback"] is False
    text = (REPO / "config.yaml").read_text()
    normalize = re.search(r"^normalize:.*?(?=^\S)", text, flags=re.M | re.S).group(0)  # up to the next section
    assert "rules fallback" not in normalize and "allow_fallback" in normalize


def test_defaults_do_not_leak_between_calls():
    first = C.validate({})
    first["ingest"]["split"]["fractions"]["train"] = 0.0
    assert C.validate({})["ingest"]["split"]["fractions"]["train"] == 0.7


def test_input_is_not_mutated():
    data = {"ingest": {"limit": 5}}
    C.validate(data)
    assert data == {"ingest": {"limit": 5}}


def test_unknown_key_names_the_key_and_the_allowed_ones():
    with pytest.raises(C.ConfigError) as err:
        C.validate({"ingest": {"split": {"sed": 3}}})
    msg = str(err.value)
    assert "unknown key ingest.split.sed" in msg
    assert "allowed in ingest.split: fractions, seed" in msg


def test_top_level_typo():
    with pytest.raises(C.ConfigError, match="unknown key ingset"):
        C.validate({"ingset": {}})


def test_wrong_type_and_range_are_all_reported():
    with pytest.raises(C.ConfigError) as err:
        C.validate({"ingest": {"limit": "ten"}, "dataset": {"rows_per_shard": 0}, "llm": {"backend": "gpt"}})
    msg = str(err.value)
    assert "3 problem(s)" in msg
    assert "ingest.limit: 'ten' is not of type 'integer', 'null'" in msg
    assert "dataset.rows_per_shard: 0 is less than the minimum of 1" in msg
    assert "llm.backend" in msg


def test_a_section_is_read_from_json_yaml_or_a_mapping(tmp_path):
    assert C.stage_config('{"rows_per_shard": 7}', dict, "dataset")["rows_per_shard"] == 7
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump({"row_group_size": 9}))
    got = C.stage_config(str(f), DatasetConfig, "dataset")
    assert got.row_group_size == 9 and got.rows_per_shard == 20000
    assert C.stage_config({"compression": "snappy"}, DatasetConfig, "dataset").compression == "snappy"
    with pytest.raises(C.ConfigError, match="unknown key dataset.rows"):
        C.stage_config('{"rows": 1}', DatasetConfig, "dataset")
    with pytest.raises(C.ConfigError, match="no section"):
        C.section_schema("nope")


def test_config_hash_ignores_key_order():
    assert C.config_hash({"a": 1, "b": [1, 2]}) == C.config_hash({"b": [1, 2], "a": 1})
    assert C.config_hash({"a": 1}) != C.config_hash({"a": 2})


@dataclass(frozen=True)
class _Inner:
    x: int = 1


@dataclass(frozen=True)
class _Outer:
    inner: _Inner = field(default_factory=_Inner)
    maybe: _Inner | None = None
    items: tuple[_Inner, ...] = ()
    name: str = "a"


def test_from_dict_builds_nested_dataclasses():
    got = C.from_dict(_Outer, {"inner": {"x": 2}, "maybe": {"x": 3}, "items": [{"x": 4}], "name": "b"})
    assert got == _Outer(_Inner(2), _Inner(3), (_Inner(4),), "b")
    assert C.from_dict(_Outer, {}) == _Outer()
    with pytest.raises(C.ConfigError, match=r"unknown key\(s\) inner\.y \(allowed: x\)"):
        C.from_dict(_Outer, {"inner": {"y": 1}})


def test_typed_stage_slices():
    ingest = C.stage_config({"limit": 3, "split": {"seed": 1}}, IngestConfig, "ingest")
    assert ingest.limit == 3 and ingest.split.seed == 1
    assert ingest.split.fractions == {"train": 0.7, "validate": 0.1, "test": 0.2}
    assert ingest.mimic_cxr.reports is None
    assert C.stage_config(None, DatasetConfig, "dataset") == DatasetConfig()


def test_dataclass_defaults_mirror_the_schema():
    assert C.stage_config({}, DatasetConfig, "dataset") == DatasetConfig()
    assert C.stage_config({}, IngestConfig, "ingest") == IngestConfig()


def test_the_committed_schema_carries_every_section():
    schema = C.load_schema()
    assert set(schema["properties"]) >= {
        "ingest",
        "extract",
        "llm",
        "train",
        "score",
        "judge",
        "metaeval",
        "judge_train",
    }
    assert schema["properties"]["score"]["properties"]["options"]["additionalProperties"] is False


@pytest.mark.slow
def test_committed_schema_is_generated_from_the_dataclasses():
    """Fails when a config dataclass changed and `srrg config-schema` was not rerun."""
    from srrg.config_tree import config_schema, render

    assert C.SCHEMA_PATH.read_text(encoding="utf-8") == render(config_schema()), "run `srrg config-schema` and commit"


def test_option_typos_fail_before_the_first_job():
    from srrg.config_tree import check_workflow_config

    with pytest.raises(C.ConfigError, match=r"unknown key score\.options\.s_score\.d_ovr"):
        check_workflow_config({"score": {"options": {"s_score": {"d_ovr": "reference"}}}})
    with pytest.raises(C.ConfigError, match=r"unknown key score\.options\.bleuu"):
        check_workflow_config({"score": {"options": {"bleuu": {}}}})
    with pytest.raises(C.ConfigError, match=r"score\.metrics\.1"):
        check_workflow_config({"score": {"metrics": ["bleu", "blue"]}})
    with pytest.raises(C.ConfigError, match=r"unknown key judge\.options\.green\.max_wrds"):
        check_workflow_config({"judge": {"options": {"green": {"max_wrds": 3}}}})
    with pytest.raises(C.ConfigError, match=r"metaeval\.correlate\.n_boot: 'many'"):
        check_workflow_config({"metaeval": {"correlate": {"n_boot": "many"}}})
    with pytest.raises(C.ConfigError, match=r"train\.trainer\.max_steps: 'four'"):
        check_workflow_config({"train": {"trainer": {"max_steps": "four"}}})


def test_typed_section_checks_run_before_the_first_job():
    from srrg.config_tree import check_workflow_config

    with pytest.raises(C.ConfigError, match=r"s_score"):
        check_workflow_config({"score": {"options": {"s_score": {"w_prob": 0.9}}}})  # weights must sum to 1
    with pytest.raises(C.ConfigError, match=r"judge\.llm"):
        check_workflow_config({"judge": {"llm": {"api_key": "sk-123"}}})  # secrets never in config
    with pytest.raises(C.ConfigError, match=r"train \(run r1\): infer.max_new_tokens 512 is below"):
        check_workflow_config(  # a rule across sections: the run's model against the infer budget
            {"train": {"runs": [{"name": "r1", "label": "x", "overrides": {"model": {"max_target_tokens": 1024}}}]}}
        )


def test_packaged_schema_is_a_valid_json_schema():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(C.load_schema())
