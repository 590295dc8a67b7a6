"""srrg.settings.fields, the one way a settings class is written (docs/config.md, "Settings
classes"): each field's Literal type and schema keywords are checked whenever the class is built,
build() names the dotted key of every refusal (nested classes, unknown and missing keys, rules
across fields, a class built inside another's checks), and every class of the package follows it."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

import srrg.settings
from srrg.settings.fields import Settings, SettingsError, build, doc


@dataclass(frozen=True)
class Inner(Settings):
    size: int = field(default=3, metadata=doc("a count", minimum=1))
    kind: Literal["a", "b"] = "a"
    kinds: tuple[Literal["x", "y"], ...] = ("x",)
    name: str = field(default="n", metadata=doc("a name", pattern=r"^[a-z]+$"))
    share: float = field(default=0.5, metadata=doc("a share", exclusiveMinimum=0, maximum=1))
    items: tuple[str, ...] = field(default=("p",), metadata=doc("a list", minItems=1, uniqueItems=True))


@dataclass(frozen=True)
class Pair(Inner):
    low: int = 0
    high: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.low >= self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")


@dataclass(frozen=True)
class Wrapper(Settings):
    """Builds a Pair from a plain mapping inside its own checks (as RatingsSource builds its
    adapter's options)."""

    raw: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        build(Pair, self.raw, "raw")


@dataclass(frozen=True)
class Outer(Settings):
    inner: Inner = field(default_factory=Inner)
    pairs: dict[str, Pair] = field(default_factory=dict)
    wrapped: Wrapper = field(default_factory=Wrapper)
    needed: int | None = None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"inner": {"size": 0}}, "top.inner.size must be >= 1, got 0"),
        ({"inner": {"kind": "c"}}, "top.inner.kind must be one of a, b, got 'c'"),
        ({"inner": {"kinds": ["x", "z"]}}, "top.inner.kinds item 'z' must be one of x, y"),
        ({"inner": {"name": "A1"}}, "top.inner.name must match ^[a-z]+$, got 'A1'"),
        ({"inner": {"share": 0}}, "top.inner.share must be > 0, got 0"),
        ({"inner": {"share": 1.5}}, "top.inner.share must be <= 1, got 1.5"),
        ({"inner": {"items": []}}, "top.inner.items must list at least 1 item(s), got 0"),
        ({"inner": {"items": ["p", "p"]}}, "top.inner.items must not repeat an item, got ['p', 'p']"),
        ({"pairs": {"p1": {"low": 2}}}, "top.pairs.p1: low (2) must be below high (1)"),
        ({"pairs": {"p1": {"size": -1}}}, "top.pairs.p1.size must be >= 1, got -1"),
        ({"inner": {"sise": 2}}, "unknown key(s) top.inner.sise (allowed: items, kind, kinds, name, share, size)"),
        ({"wrapped": {"raw": {"low": 5}}}, "top.wrapped.raw: low (5) must be below high (1)"),
        ({"wrapped": {"raw": {"kind": "q"}}}, "top.wrapped.raw.kind must be one of a, b, got 'q'"),
        ({"wrapped": {"raw": {"hi": 1}}}, "unknown key(s) top.wrapped.raw.hi (allowed: high, items, kind, kinds,"),
    ],
)
def test_a_refusal_names_its_dotted_key(data, message) -> None:
    with pytest.raises(SettingsError) as err:
        build(Outer, data, "top")
    assert str(err.value).startswith(message) and err.value.located


def test_a_valid_mapping_builds_nested_settings_and_none_passes_the_keywords() -> None:
    built = build(Outer, {"inner": {"size": 2, "kinds": ["y"]}, "pairs": {"p": {"high": 3}}}, "top")
    assert built.inner == Inner(size=2, kinds=("y",)) and built.pairs == {"p": Pair(high=3)}
    assert built.needed is None


def test_building_in_python_checks_the_same_rules() -> None:
    with pytest.raises(SettingsError, match=r"^size must be >= 1, got 0$"):
        Inner(size=0)
    with pytest.raises(ValueError, match=r"low \(1\) must be below high \(1\)"):
        Pair(low=1)


def test_a_keyword_the_checker_does_not_know_is_refused_when_the_class_is_written() -> None:
    with pytest.raises(TypeError, match="not checked"):
        doc("a field", multipleOf=2)


def _settings_classes() -> list[type]:
    classes = []
    for info in pkgutil.iter_modules(srrg.settings.__path__):
        module = importlib.import_module(f"srrg.settings.{info.name}")
        classes += [
            c
            for c in vars(module).values()
            if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == module.__name__
        ]
    return classes


def test_every_settings_class_is_a_frozen_settings_dataclass() -> None:
    classes = _settings_classes()
    assert len(classes) > 30
    assert [c.__name__ for c in classes if not issubclass(c, Settings)] == []
    assert [c.__name__ for c in classes if not c.__dataclass_params__.frozen] == []
    for cls in classes:  # every default passes the class's own rules
        if all(
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            for f in dataclasses.fields(cls)
        ):
            cls()


def test_every_post_init_of_the_package_calls_the_base_first() -> None:
    """Else a class's own rules would skip the field checks."""
    skipping = []
    for path in sorted(Path(srrg.settings.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__post_init__" and node.name != "Settings":
                        first = ast.unparse(item.body[0]) if item.body else ""
                        if first != "super().__post_init__()":
                            skipping.append(f"{path.name}:{node.name}")
    assert skipping == []
