"""How a settings class is written (docs/config.md, "Settings classes"): a frozen dataclass that
derives from Settings, its single-field rules (ranges, allowed values, lengths) as JSON Schema
keywords in the field's metadata (`doc(...)`) or as a Literal type, and `__post_init__` only for
rules across fields. The same metadata makes the generated config schema (srrg.config_tree) and
the checks that run when a class is built, so a rule is written once and holds on both paths.

Everything here imports only the standard library: the workflow checks every section before its
first job without loading torch, spaCy or polars.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar

T = TypeVar("T")

# the JSON Schema keywords a field's metadata may carry; each is checked when the class is built
CHECKED_KEYWORDS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "enum",
        "minItems",
        "uniqueItems",
        "items",
        "minLength",
        "pattern",
        "propertyNames",
    }
)


class SettingsError(ValueError):
    """A value a settings class refuses: `key` is the dotted key (as complete as the builder
    knows it), `problem` what is wrong with it, `unknown` the keys no field takes (with `allowed`,
    the keys there are). `located` once build has named the key from where it built; the door
    (srrg.config) turns it into one line."""

    def __init__(
        self,
        key: str,
        problem: str,
        located: bool = False,
        joiner: str = " ",
        unknown: tuple[str, ...] = (),
    ):
        if unknown:
            message = f"unknown key(s) {', '.join(_join(key, k) for k in unknown)} ({problem})"
        else:
            message = f"{key}{joiner}{problem}" if key else problem
        super().__init__(message)
        self.key, self.problem, self.located, self.joiner, self.unknown = key, problem, located, joiner, unknown

    def under(self, where: str) -> SettingsError:
        """The same refusal, its key under `where` (a class built inside another's checks)."""
        return SettingsError(_join(where, self.key), self.problem, True, self.joiner, self.unknown)


def doc(text: str, **schema: Any) -> dict[str, Any]:
    """Field metadata: the key's description and its JSON Schema keywords (minimum, enum, ...),
    which the generated schema carries and Settings checks."""
    unknown = set(schema) - CHECKED_KEYWORDS
    if unknown:
        raise TypeError(f"schema keywords {sorted(unknown)} are not checked by srrg.settings.fields")
    return {"doc": text, "schema": schema}


def hook(name: str, text: str | None = None) -> dict[str, Any]:
    """Field metadata for a key whose schema srrg.config_tree builds (metric names, per-metric
    options, ratings datasets, llm overrides, nested settings)."""
    return {"schema_hook": name, **({"doc": text} if text else {})}


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _choices(tp: Any) -> tuple[tuple[Any, ...] | None, bool]:
    """(the Literal values a hint allows or None, whether it is a sequence of them)."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return typing.get_args(tp), False
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            values, many = _choices(arg)
            if values is not None:
                return (*values, None) if type(None) in typing.get_args(tp) and not many else values, many
        return None, False
    if origin is tuple:
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        if args and typing.get_origin(args[0]) is Literal:
            return typing.get_args(args[0]), True
    return None, False


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with one value under a field's schema keywords (None: nothing)."""
    if value is None:
        return None
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}, got {value!r}"
    if _number(value):
        for key, fails, word in (
            ("minimum", lambda v, m: v < m, ">="),
            ("maximum", lambda v, m: v > m, "<="),
            ("exclusiveMinimum", lambda v, m: v <= m, ">"),
            ("exclusiveMaximum", lambda v, m: v >= m, "<"),
        ):
            if key in schema and fails(value, schema[key]):
                return f"must be {word} {schema[key]}, got {value!r}"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"must have at least {schema['minLength']} character(s), got {value!r}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"must match {schema['pattern']}, got {value!r}"
    if isinstance(value, (tuple, list)):
        if len(value) < schema.get("minItems", 0):
            return f"must list at least {schema['minItems']} item(s), got {len(value)}"
        if schema.get("uniqueItems") and len(set(map(repr, value))) < len(value):
            return f"must not repeat an item, got {list(value)}"
        for item in value:
            problem = _problem(item, schema.get("items", {}))
            if problem:
                return f"item {item!r} {problem.split(', got')[0]}"
    if isinstance(value, Mapping) and "propertyNames" in schema:
        for name in value:
            problem = _problem(name, schema["propertyNames"])
            if problem:
                return f"key {name!r} {problem.split(', got')[0]}"
    return None


def check_fields(obj: Any) -> None:
    """Every field of a settings instance against its Literal type and its schema keywords."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        choices, many = _choices(_hints(type(obj))[f.name])
        problem = None
        if choices is not None:
            problem = _problem(value, {"items": {"enum": list(choices)}} if many else {"enum": list(choices)})
        problem = problem or _problem(value, f.metadata.get("schema", {}))
        if problem:
            raise SettingsError(f.name, problem)


@dataclasses.dataclass(frozen=True)
class Settings:
    """The base of every settings class: building one checks each field (check_fields); a class
    that also has rules across fields defines `__post_init__` and calls this one first."""

    def __post_init__(self) -> None:
        check_fields(self)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where and key else where or key


def _convert(tp: Any, value: Any, where: str) -> Any:
    """Nested settings (and tuples of them) built from plain values; other values pass through."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) > 1:  # e.g. str | tuple[str, ...]: the member that fits a YAML list
            inner = [a for a in inner if typing.get_origin(a) is tuple] if isinstance(value, (list, tuple)) else []
        return _convert(inner[0], value, where) if inner else value
    if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
        return build(tp, value, where)
    if origin is tuple and isinstance(value, (list, tuple)):
        args = typing.get_args(tp)
        item = args[0] if args else Any
        return tuple(_convert(item, v, where) for v in value)
    if origin is dict and isinstance(value, Mapping):
        args = typing.get_args(tp)
        if len(args) == 2 and dataclasses.is_dataclass(args[1]):
            return {k: _convert(args[1], v, _join(where, str(k))) for k, v in value.items()}
        return dict(value)
    return value


def build(cls: type[T], data: Mapping[str, Any] | None, where: str = "") -> T:
    """A settings class from a mapping, nested settings included: an unknown key, or a value the
    class refuses, is a SettingsError naming the dotted key under `where`; a missing key takes
    the class's default."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    data = dict(data or {})
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - names)
    if unknown:
        raise SettingsError(where, f"allowed: {', '.join(sorted(names))}", True, unknown=tuple(unknown))
    missing = sorted(
        f.name
        for f in dataclasses.fields(cls)
        if f.init
        and f.name not in data
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    )
    if missing:
        raise SettingsError(where, f"needs the key(s) {', '.join(missing)}", located=True)
    kwargs = {k: _convert(hints[k], v, _join(where, k)) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except SettingsError as err:  # a field's rule, or a class its own checks build: named from here
        raise err.under(where) from None
    except ValueError as err:  # a rule across fields: "where: what is wrong"
        raise SettingsError(where, str(err), located=True, joiner=": ") from None
