"""Every config key is documented: each init field of each settings class carries a description
(srrg.settings.fields.doc / hook), so the generated schema describes every key."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from collections.abc import Iterator
from typing import Any

import srrg.settings
from srrg.config import SCHEMA_PATH


def settings_classes() -> Iterator[type]:
    """Every dataclass defined in a module of the srrg.settings package."""
    for info in pkgutil.iter_modules(srrg.settings.__path__):
        module = importlib.import_module(f"srrg.settings.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__:
                yield obj


def test_the_walk_finds_the_settings_classes():
    names = {cls.__name__ for cls in settings_classes()}
    assert {"LLMConfig", "MetaevalConfig", "JudgeTrainConfig", "TrainerConfig", "VertConfig", "RunSpec"} <= names


def test_every_settings_field_has_a_description():
    missing = [
        f"{cls.__module__}.{cls.__name__}.{f.name}"
        for cls in settings_classes()
        for f in dataclasses.fields(cls)
        if f.init and not str(f.metadata.get("doc") or "").strip()
    ]
    assert not missing, f"fields without a description (metadata=doc(...) or hook(name, text)): {missing}"


def _undescribed(node: Any, path: str) -> Iterator[str]:
    """Dotted paths of the properties under any "properties" of the schema that lack a
    description. Skipped: the `if` of a conditional (a test on a value, not a key)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _undescribed(item, f"{path}[{i}]")
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "if":
            continue
        if key == "properties" and isinstance(value, dict):
            for name, prop in value.items():
                where = f"{path}.{name}" if path else name
                if isinstance(prop, dict) and not prop.get("description"):
                    yield where
                yield from _undescribed(prop, where)
        else:
            yield from _undescribed(value, f"{path}/{key}")


def test_every_schema_property_has_a_description():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    missing = list(_undescribed(schema, ""))
    assert not missing, f"schema properties without a description (run `srrg config-schema`): {missing}"
    # every section and a deep key are reached by the walk
    assert schema["properties"]["metaeval"]["properties"]["correlate"]["properties"]["n_boot"]["description"]
    run = schema["properties"]["train"]["properties"]["runs"]["items"]["properties"]
    assert run["overrides"]["properties"]["trainer"]["properties"]["seed"]["description"]
