"""The generated config schema's hooks (srrg.config_tree): the pieces no settings class writes itself,
checked fast (the whole committed schema is compared by a slow test), and the schema refusing what
they refuse. Each test's docstring names the bug it catches (issue 53)."""

from __future__ import annotations

import typing

import jsonschema
import pytest

from srrg.config_tree import NOT_IN_SECTION, adapter_options_schema, config_schema, dataclass_schema
from srrg.settings.metaeval import ADAPTER_OPTIONS, Adapter
from srrg.settings.metrics import METRIC_OPTIONS

SCHEMA = config_schema()


def errors(config: dict) -> list[str]:
    """The schema's refusals of a config (no class check: only what the schema itself says)."""
    return [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(config)]


def test_metric_name_lists_are_an_enum_of_the_registered_metrics():
    """Bug: the metric-name hook writes its enum under another key ("items" / "enum" misspelt),
    so the schema (editor completion, `snakemake -n`'s schema check) accepts any metric name."""
    for section in ("score", "metaeval"):
        names = SCHEMA["properties"][section]["properties"]["metrics"]
        assert names["type"] == "array" and names["items"] == {"enum": sorted(METRIC_OPTIONS)}
    assert errors({"score": {"metrics": ["bleu"]}}) == []
    assert any("'blue' is not one of" in e for e in errors({"score": {"metrics": ["blue"]}}))


def test_each_ratings_adapter_checks_its_own_options():
    """Bug: the if/then of a ratings dataset keyed on another word than `const` (or the adapter's
    options schema taken from another adapter): any options pass, or the right ones are refused."""
    dataset = SCHEMA["properties"]["metaeval"]["properties"]["datasets"]["additionalProperties"]
    adapters = typing.get_args(Adapter)
    assert len(dataset["allOf"]) == len(adapters) == len(ADAPTER_OPTIONS)
    for adapter, rule in zip(adapters, dataset["allOf"]):
        assert rule["if"] == {"properties": {"adapter": {"const": adapter}}, "required": ["adapter"]}
        assert rule["then"]["properties"]["options"] == adapter_options_schema(adapter)
    good = {"adapter": "radpref", "path": "x"}
    assert errors({"metaeval": {"datasets": {"d": {**good, "options": {"no_such_option": 1}}}}})
    assert errors({"metaeval": {"datasets": {"d": good}}}) == []


def test_a_section_leaves_out_the_keys_it_does_not_own():
    """Bug: NOT_IN_SECTION ignored (its lookup's arguments swapped), so normalize's schema offers an
    `llm` key that the workflow never reads (normalize gets the top-level llm section)."""
    assert NOT_IN_SECTION == {"normalize": frozenset({"llm"})}
    assert "llm" not in SCHEMA["properties"]["normalize"]["properties"]
    assert errors({"normalize": {"llm": {}}})
    assert "method" in SCHEMA["properties"]["normalize"]["properties"]


def test_dataclass_schema_skips_and_marks_required_fields():
    """Bugs: the skip set ignored; a field without default not listed as required; defaults written
    when with_defaults is false."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Example:
        """An example."""

        need: int
        keep: str = "k"
        drop: int = 1

    out = dataclass_schema(Example, frozenset({"drop"}))
    assert list(out["properties"]) == ["need", "keep"] and out["required"] == ["need"]
    assert out["properties"]["keep"]["default"] == "k" and out["description"] == "An example."
    bare = dataclass_schema(Example, with_defaults=False)
    assert "default" not in bare["properties"]["keep"] and list(bare["properties"]) == ["need", "keep", "drop"]


@pytest.mark.parametrize(("name", "accepted"), [("ok_1", True), ("bad name", False), ("a/b", False)])
def test_run_names_follow_the_pattern(name, accepted):
    """Bug: the run-name pattern lost from the generated `runs` schema (a name with a space or a
    slash accepted, then breaking the run's output paths); the runs' overrides not train settings."""
    run = {"name": name, "label": "L"}
    assert (errors({"train": {"runs": [run]}}) == []) is accepted
    assert errors({"train": {"runs": [{"name": "x", "label": "L", "overrides": {"no_such_key": 1}}]}})
