"""The rules of the ingest, extract, dataset, llm and normalize settings (srrg.settings): a value a
class refuses is a ValueError naming the dotted key, whether it comes through the door
(srrg.settings.fields.build) or is written in Python."""

from __future__ import annotations

import pytest

from srrg.settings.dataset import DatasetConfig
from srrg.settings.extract import ExtractConfig
from srrg.settings.fields import SettingsError, build
from srrg.settings.ingest import IngestConfig, SplitConfig
from srrg.settings.llm import LLMConfig
from srrg.settings.normalize import NormalizeConfig


@pytest.mark.parametrize(
    ("fractions", "message"),
    [
        ({"train": 1.0, "test": 0.0}, r"^ingest\.split\.fractions must give exactly the splits train, validate, test"),
        ({"train": 1.0, "validate": 0.0, "test": 0.0, "dev": 0.1}, r"^ingest\.split\.fractions must give exactly"),
        ({"train": 1.5, "validate": 0.0, "test": 0.0}, r"^ingest\.split\.fractions\.train must be a share"),
        ({"train": 0, "validate": 0, "test": 0}, r"^ingest\.split\.fractions must not all be zero$"),
    ],
)
def test_split_fractions_are_one_share_per_split(fractions, message) -> None:
    with pytest.raises(SettingsError, match=message):
        build(IngestConfig, {"split": {"fractions": fractions}}, "ingest")


def test_single_field_rules_name_the_key() -> None:
    with pytest.raises(SettingsError, match=r"^ingest\.source must be one of iu_xray, mimic_cxr, srrg, got 'dicom'$"):
        build(IngestConfig, {"source": "dicom"}, "ingest")
    with pytest.raises(SettingsError, match=r"^llm\.concurrency must be > 0, got 0$"):
        LLMConfig.from_dict({"concurrency": 0})
    with pytest.raises(SettingsError, match=r"^llm\.temperature must be >= 0, got -1$"):
        LLMConfig.from_dict({"temperature": -1})
    with pytest.raises(SettingsError, match=r"^extract\.sections item 'body' must be one of"):
        build(ExtractConfig, {"sections": ["body"]}, "extract")
    with pytest.raises(SettingsError, match=r"^normalize\.max_words must be >= 1, got 0$"):
        NormalizeConfig.from_dict({"max_words": 0})


def test_cross_field_rules_name_the_key() -> None:
    with pytest.raises(SettingsError, match=r"^dataset\.compression_level 10 is out of range for gzip \(1-9\)$"):
        build(DatasetConfig, {"compression": "gzip", "compression_level": 10}, "dataset")
    assert DatasetConfig(compression="snappy", compression_level=50).compression_level == 50  # ignored there
    with pytest.raises(SettingsError, match=r"^llm\.model is required for the openai backend"):
        LLMConfig.from_dict({"backend": "openai"})
    with pytest.raises(SettingsError, match=r"^llm\.base_url 'http//x' is not an http"):
        LLMConfig.from_dict({"base_url": "http//x"})
    with pytest.raises(SettingsError, match=r"^normalize\.method llm needs an LLM"):
        NormalizeConfig.from_dict({"method": "llm"})


def test_sections_written_as_a_list_are_a_tuple() -> None:
    """Extractors are cached per config: a list of sections would make it unhashable."""
    config = ExtractConfig(sections=["impression"])  # type: ignore[arg-type]
    assert config.sections == ("impression",) and hash(config) == hash(ExtractConfig(sections=("impression",)))
    assert SplitConfig().fractions == {"train": 0.7, "validate": 0.1, "test": 0.2}
