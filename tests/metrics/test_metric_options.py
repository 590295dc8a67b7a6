"""METRIC_OPTIONS (srrg.settings.metrics) is the one link from a metric to its options class: every
registered metric has an entry, and each metric class's `config_class` is that entry."""

from __future__ import annotations

import importlib
import typing

import pytest

from srrg.metrics import base
from srrg.settings.fields import SettingsError, build
from srrg.settings.metrics import (
    METRIC_OPTIONS,
    VERT_VARIANTS,
    GemaObjective,
    GreenConfig,
    SScoreConfig,
    VertConfig,
)


def test_every_registered_metric_has_its_options_entry():
    assert set(METRIC_OPTIONS) == set(base.METRIC_MODULES)


@pytest.mark.parametrize("name", sorted(base.METRIC_MODULES))
def test_a_metric_class_takes_its_options_from_metric_options(name: str):
    importlib.import_module(base.METRIC_MODULES[name])
    assert base._REGISTRY[name].config_class is METRIC_OPTIONS[name]


def test_a_metric_without_an_entry_is_refused_when_defined():
    with pytest.raises(TypeError, match="METRIC_OPTIONS"):
        type("Unlisted", (base.Metric,), {"name": "no_such_metric", "compute": lambda self, r, h: None})


def test_choices_written_once_agree_with_the_code_that_uses_them():
    from srrg.metrics.judges.gema import OBJECTIVES
    from srrg.metrics.judges.vert import VARIANTS

    assert tuple(VARIANTS) == VERT_VARIANTS
    assert set(OBJECTIVES) == set(typing.get_args(GemaObjective))


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (GreenConfig, {"max_tokens": 0}, "judge.options.green.max_tokens must be >= 1"),
        (GreenConfig, {"max_failure_fraction": 1.5}, "judge.options.green.max_failure_fraction must be <= 1"),
        (GreenConfig, {"modality": "CT\n"}, "judge.options.green.modality must match"),
        (GreenConfig, {"modality": "{x}"}, "judge.options.green.modality must match"),
        (VertConfig, {"variant": "fancy"}, "judge.options.green.variant must be one of direct, formula, rubric"),
        (VertConfig, {"few_shot": {"k": -1}}, "judge.options.green.few_shot.k must be >= 0"),
        (VertConfig, {"few_shot": {"k": 2}}, "judge.options.green.few_shot: few_shot.k > 0 needs few_shot.source"),
        (SScoreConfig, {"w_prob": 0.5}, "judge.options.green: S-Score weights w_prob, w_level, w_loc must sum to 1"),
    ],
)
def test_a_refused_option_names_its_dotted_key(cls: type, data: dict, message: str):
    with pytest.raises(SettingsError) as err:
        build(cls, data, "judge.options.green")
    assert str(err.value).startswith(message)


def test_a_modality_name_is_accepted():
    assert build(GreenConfig, {"modality": "brain MRI"}).modality == "brain MRI"
