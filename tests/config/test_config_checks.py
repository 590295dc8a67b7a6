"""Config mistakes that passed `snakemake -n` and failed only in their job (issue 25 items 4 and 5):
each is now refused by the workflow's config check (srrg.config_tree.check_workflow_config, what
workflow/rules/common.smk runs when Snakemake parses the workflow), one line naming the key."""

from __future__ import annotations

import pytest

from srrg.config import ConfigError
from srrg.config_tree import check_workflow_config
from srrg.text.decode import read_mapping_file

OPENAI = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
RUN = {
    "name": "r",
    "label": "R",
    "arch": "baseline",
    "target": "json",
    "overrides": {"model": {"max_target_tokens": 128}},
}

MISTAKES = [
    # a remote endpoint without allow_remote, for normalization and for the judges
    ({"normalize": {"method": "llm"}, "llm": {**OPENAI, "base_url": "https://api.example.com/v1"}}, "allow_remote"),
    ({"judge": {"llm": {**OPENAI, "base_url": "https://api.example.com/v1"}}}, "allow_remote"),
    ({"judge": {"llm": {"backend": "rules"}}}, r"LLM judges .*needs an LLM"),
    ({"llm": {"backend": "openai"}}, "llm.model is required"),
    ({"llm": {**OPENAI, "base_url": "http//localhost:8000/v1"}}, "not an http"),
    ({"llm": {**OPENAI, "base_url": "http://localhost:99999/v1"}}, "not a URL"),
    ({"normalize": {"method": "llm"}}, r"normalize\.method llm needs an LLM"),
    ({"extract": {"spacy_model": "en_core_no_such_model_sm"}}, "neither an installed package"),
    ({"train": {"optim": {"lr": -0.001}}}, r"train.optim.lr: -0.001 is less than or equal to the minimum of 0"),
    ({"infer": {"num_beams": 2, "num_return_sequences": 3}}, "more than infer.num_beams"),
    ({"score": {"metrics": []}}, r"score.metrics"),
    # item 4: a decoding budget below the run's target length cut 12.5 % of the demo's outputs
    (
        {"train": {"runs": [RUN]}, "infer": {"max_new_tokens": 64}},
        r"max_new_tokens 64 is below model.max_target_tokens 128",
    ),
    ({"train": {"runs": [{**RUN, "infer": {"max_new_tokens": 100}}]}}, r"max_new_tokens 100 is below"),
    ({"train": {"runs": [RUN, RUN]}}, r"train.runs names must be unique"),
    ({"results_dir": ""}, "results_dir is empty"),
    (
        {"stats": {"dpi": 100000}},
        r"stats.dpi: 100000 is greater than the maximum of 600",
    ),  # (Low) 100000 exhausted memory
    ({"dataset": {"compression_level": 50}}, r"dataset\.compression_level 50 is out of range for zstd \(1-22\)"),
    ({"dataset": {"compression": "gzip", "compression_level": 10}}, r"out of range for gzip \(1-9\)"),
]


@pytest.mark.parametrize(("override", "message"), MISTAKES, ids=[m for _, m in MISTAKES])
def test_mistake_is_refused_before_the_first_job(override, message):
    base = read_mapping_file("config.yaml")
    cfg = {**base, **override}
    with pytest.raises(ConfigError, match=message) as err:
        check_workflow_config(cfg)
    assert "\n" not in str(err.value)


def test_results_dir_that_is_a_file_is_refused(tmp_path):
    taken = tmp_path / "config.yaml"
    taken.write_text("x: 1\n")
    with pytest.raises(ConfigError, match="is an existing file"):
        check_workflow_config({"results_dir": str(taken)})


def test_the_embedded_default_and_a_loopback_judge_pass():
    base = read_mapping_file("config.yaml")
    check_workflow_config(base)
    check_workflow_config({**base, "judge": {"llm": OPENAI}, "normalize": {"method": "llm"}, "llm": OPENAI})
    check_workflow_config(
        {**base, "train": {"runs": [RUN]}, "infer": {"max_new_tokens": 128, "num_beams": 2, "num_return_sequences": 2}}
    )


@pytest.mark.parametrize(
    "compression, level", [("zstd", 1), ("zstd", 22), ("gzip", 1), ("gzip", 9), ("zstd", None), ("snappy", 50)]
)
def test_compression_levels_at_the_edges_of_their_range_pass(compression, level):
    # the other side of each edge is in MISTAKES; snappy takes no level, so any is ignored
    base = read_mapping_file("config.yaml")
    check_workflow_config({**base, "dataset": {"compression": compression, "compression_level": level}})


@pytest.mark.slow
def test_unknown_encoder_name_is_one_line_before_training(tmp_path, capsys):
    """issue 25 item 5: an encoder name timm does not know failed with a traceback inside the train
    job. Checking it needs timm (tens of seconds to import under load), so the train command checks
    it first, before reading data; `snakemake -n` does not."""
    from srrg.cli import main

    (tmp_path / "ds").mkdir()
    rc = main(
        [
            "train",
            "--dataset",
            str(tmp_path / "ds"),
            "--out",
            str(tmp_path / "m.pt"),
            "--config",
            '{"model": {"encoder": {"name": "resnet_eighteen"}}}',
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "model.encoder.name 'resnet_eighteen' is not a timm model" in err and "\n" not in err
