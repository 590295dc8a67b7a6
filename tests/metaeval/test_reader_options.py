"""The options of every ratings reader live in one settings class each
(srrg.settings.metaeval.ADAPTER_OPTIONS): the reader takes it, load_dataset and a config's
metaeval.datasets.*.options build it, and the constants the settings hold agree with the readers'."""

from __future__ import annotations

import typing

import pytest

from srrg.errors import UserError
from srrg.metaeval.readers.common import TARGETS
from srrg.metaeval.readers.load import READERS, load_dataset
from srrg.settings.fields import build
from srrg.settings.metaeval import ADAPTER_OPTIONS, HUMAN_TARGETS, Adapter, HumanTarget, RatingsSource


def test_every_reader_takes_its_options_class():
    assert set(READERS) | {"radjudge"} == set(ADAPTER_OPTIONS) == set(typing.get_args(Adapter))
    for adapter, reader in READERS.items():
        assert typing.get_type_hints(reader)["options"] is ADAPTER_OPTIONS[adapter]


def test_human_targets_are_the_readers_targets():
    assert set(HUMAN_TARGETS) == set(TARGETS)
    assert set(typing.get_args(HumanTarget)) == {"auto", *TARGETS}


def test_a_misspelt_option_is_refused_by_the_entry_and_by_load_dataset(tmp_path):
    with pytest.raises(
        ValueError, match=r"^unknown key\(s\) metaeval\.datasets\.d\.options\.candidate \(allowed: candidates\)"
    ):
        build(RatingsSource, {"adapter": "rexval", "path": "x", "options": {"candidate": ["a"]}}, "metaeval.datasets.d")
    with pytest.raises(ValueError, match=r"^metaeval.datasets.d.options.raters must not repeat an item"):
        build(
            RatingsSource, {"adapter": "radpref", "path": "x", "options": {"raters": ["a", "a"]}}, "metaeval.datasets.d"
        )
    assert build(RatingsSource, {"adapter": "radjudge", "path": "x", "options": {"keys": {"bleu": "bleu_4"}}})
    with pytest.raises(UserError, match="unknown key"):
        load_dataset("rate_eval", tmp_path, score="S")
