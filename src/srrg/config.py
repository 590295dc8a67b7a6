"""The workflow configuration: load, validate against the JSON Schema with its defaults, and turn a
section into a typed dataclass (docs/config.md); stage_config is every stage's one door from its
`--config` to its settings.

The schema ships inside the package (srrg/schemas/config.schema.json, generated: docs/config.md), so
an installed srrg validates configs without the repository; the Snakefile, the stage commands and
the tests agree on it. A typo, a wrong type or a duplicated key stops a run before any job starts,
with one line that names the key and what was allowed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import typing
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from srrg.errors import UserError, one_line
from srrg.settings.fields import build
from srrg.text.decode import config_value, read_mapping_file

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "config.schema.json"  # package data, generated

T = TypeVar("T")


class ConfigError(UserError):
    """The configuration does not match the schema; the message lists every offending key."""


@lru_cache(maxsize=1)
def _defaulting_validator() -> type:
    """A Draft 2020-12 validator that fills `default` values (deep copies, so the schema is never
    mutated). jsonschema is imported here, on first use: importing srrg.config stays cheap."""
    from jsonschema import Draft202012Validator, validators

    validator_class = Draft202012Validator
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Mapping[str, Any], instance: Any, schema: Any) -> Any:
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, Mapping) and "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": set_defaults})


@lru_cache(maxsize=4)
def _load_schema(path: str) -> dict[str, Any]:
    return read_mapping_file(path)  # a valid 2020-12 schema: tests/config/test_config.py checks the packaged one


def load_schema(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The config schema (a fresh copy: callers may not mutate the cached one)."""
    return copy.deepcopy(_load_schema(str(path or SCHEMA_PATH)))


def _key(path: typing.Iterable[Any], root: str) -> str:
    parts = [root, *(str(p) for p in path)]
    return ".".join(p for p in parts if p)


def _describe(error: Any, root: str) -> str:
    """One line per error that says which key and what to do about it."""
    where = _key(error.absolute_path, root) or "config"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        keys = ", ".join(_key([*error.absolute_path, k], root) for k in extra)
        return f"unknown key {keys} (allowed in {where}: {', '.join(allowed) or 'none'})"
    return f"{where}: {error.message}"


def validate(data: Mapping[str, Any] | None, schema: Mapping[str, Any] | None = None, root: str = "") -> dict[str, Any]:
    """Validate a copy of `data` and return it with every schema default filled in.

    Raises ConfigError listing all problems (unknown keys, wrong types, values out of range).
    """
    schema = dict(schema) if schema is not None else load_schema()
    instance = copy.deepcopy(dict(data or {}))
    errors = sorted(_defaulting_validator()(schema).iter_errors(instance), key=lambda e: list(map(str, e.path)))
    if errors:
        problems = "; ".join(_describe(e, root) for e in errors)
        raise ConfigError(f"invalid configuration ({len(errors)} problem(s)): {problems}")
    return instance


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a YAML/JSON config file (duplicate keys refused) and validate it (defaults filled)."""
    return validate(read_mapping_file(path))


def section_schema(key: str, schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The sub-schema at a dotted key of the config schema ("infer", "judge_train.train",
    "metaeval.correlate"), with the schema's $defs, so a stage validates only its own slice."""
    full = dict(schema) if schema is not None else load_schema()
    sub: Mapping[str, Any] = full
    for part in key.split("."):
        props = sub.get("properties", {})
        if part not in props:
            raise ConfigError(f"the config schema has no section {key!r}")
        sub = props[part]
    out = dict(sub)
    if "$defs" in full:
        out["$defs"] = full["$defs"]
    return out


def stage_config(
    value: str | Mapping[str, Any] | None,
    section: type[T],
    key: str,
    *,
    adjust: typing.Callable[[dict[str, Any]], Mapping[str, Any]] | None = None,
    with_sections: tuple[str, ...] = (),
) -> T:
    """The one door from a stage's `--config` to its settings (docs/config.md): the value (inline
    JSON, a .json/.yaml path, a mapping or nothing) is read, `adjust`ed (a command-line flag over a
    key, a run picked from `runs`), validated once against the schema at `key` with its defaults
    filled, and built into the settings class `section` (srrg.settings). `with_sections` names
    top-level sections the slice carries under their own key (normalize's `llm`). `section=dict`
    returns the validated mapping (per-metric options, whose classes each metric builds). A value
    the class refuses in its own checks, or that `adjust` refuses, is a ConfigError naming the key,
    like a schema error."""
    try:
        raw = config_value(value)
        if adjust is not None:
            raw = dict(adjust(raw))
        full = load_schema()
        schema = section_schema(key, full)
        if with_sections:
            schema["properties"] = {**schema["properties"], **{s: section_schema(s, full) for s in with_sections}}
        checked = validate(raw, schema, root=key)
        if section is dict:
            return typing.cast(T, checked)
        return build(section, checked, key)
    except UserError:
        raise
    except ValueError as err:  # a class's own check (llm.base_url, optim.lr, ...), a run --run does not name
        raise ConfigError(one_line(err)) from None


def config_hash(data: Any) -> str:
    """Stable short hash of a JSON-able value (key order does not matter): records which config
    produced a dataset."""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str = "") -> T:
    """A settings class built from a mapping (srrg.settings.fields.build) for code that is not a
    stage's door: a key or value the class refuses is a ConfigError, one line naming the key."""
    try:
        return build(cls, data, where)
    except ValueError as err:
        raise ConfigError(one_line(err)) from None


def check_installed(name: str | None, key: str) -> None:
    """A model named by an installed package (spaCy pipelines are packages: en_core_web_sm) or by
    a folder: checked when the workflow is parsed, not when the job that loads it starts."""
    if not name or Path(name).expanduser().is_dir():
        return
    import importlib.util

    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"{key} {name!r} is neither an installed package nor a folder (pip install it, or give its path)"
        )


def check_results_dir(value: str, key: str = "results_dir") -> None:
    """The folder every output goes under: not empty (that would write into the workflow root) and
    not an existing file."""
    if not value.strip():
        raise ConfigError(f"{key} is empty; name a folder (default: results)")
    if Path(value).expanduser().exists() and not Path(value).expanduser().is_dir():
        raise ConfigError(f"{key} {value!r} is an existing file; name a folder")
