"""Decoding config values: JSON and YAML that refuse duplicate keys (docs/config.md).

A YAML file with a section written twice silently keeps the last one in PyYAML and Snakemake;
here it is a user error naming the key and the line, like any other typo.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from srrg.errors import UserError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader whose mappings reject a key that appears twice."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise UserError(
                f"{node.start_mark.name}: duplicate key {key!r} at line {key_node.start_mark.line + 1} "
                f"(first at line {seen[key] + 1}); each key may appear once"
            )
        seen[key] = key_node.start_mark.line
    return dict(loader.construct_pairs(node, deep=deep))


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str, source: str = "<config>") -> Any:
    """YAML (a superset of JSON) with duplicate keys refused; syntax errors are user errors."""
    loader = _StrictLoader(text)
    loader.name = source
    try:
        return loader.get_single_data()
    except yaml.YAMLError as err:
        raise UserError(f"{source}: not valid YAML/JSON ({' '.join(str(err).split())})") from None
    except RecursionError:
        raise UserError(f"{source}: nested deeper than the YAML/JSON reader allows") from None
    finally:
        loader.dispose()


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise UserError(f"duplicate key(s) {', '.join(dupes)} in JSON; each key may appear once")
    return dict(pairs)


def load_json(text: str, source: str = "<json>") -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        raise UserError(f"{source}: not valid JSON ({err})") from None
    except RecursionError:
        raise UserError(f"{source}: nested deeper than the JSON reader allows") from None


def read_utf8(path: str | Path) -> str:
    """UTF-8 text (a leading byte-order mark is dropped); other encodings are refused with the line."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise UserError(
            f"{path}: line {line} is not UTF-8 text (byte 0x{raw[err.start]:02x}); save the file as UTF-8"
        ) from None


def read_mapping_file(path: str | Path) -> dict[str, Any]:
    """A .json/.yaml file that must hold a mapping (an empty file is an empty mapping)."""
    text = read_utf8(path)
    data = load_json(text, str(path)) if str(path).endswith(".json") else load_yaml(text, str(path))
    return _mapping(data or {}, str(path))


def config_value(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A `--config` value: inline JSON, a path to a .json/.yaml file, a mapping, or nothing ({})."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if value.lstrip().startswith("{"):
        return _mapping(load_json(value, "--config"), "--config")
    return read_mapping_file(value)


def _mapping(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise UserError(
            f"{source}: expected a mapping of settings (JSON object / YAML keys), got {type(data).__name__}"
        )
    return dict(data)
