"""The project's vocabulary: findings with synonyms, severity, location, context triggers, sections.

The word lists are data files in this package (YAML), written for srrg, so a user can extend them
without touching code. Loaders validate the files once (a surface form that means two findings is
an error) and return immutable views; `synonym_map()` is what `srrg.report.canonical_name` uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import yaml

from srrg.text.spelling import plain_spelling


class VocabularyError(ValueError):
    """A vocabulary file is inconsistent; the message names the file and the phrase."""


@dataclass(frozen=True)
class Composition:
    """A finding stated as subject + state in one clause ("the heart is enlarged")."""

    finding: str
    subjects: tuple[str, ...]
    states: tuple[str, ...]
    standalone: bool = False


@dataclass(frozen=True)
class LocationWords:
    """Specific words form a location phrase; generic words only extend one; joiners may sit between."""

    specific: tuple[str, ...]
    generic: tuple[str, ...]
    joiners: frozenset[str]


@dataclass(frozen=True)
class ContextTriggers:
    """ConText trigger phrases; hedges carry their probability (2 probable, 1 uncertain)."""

    negation_pre: tuple[str, ...]
    negation_post: tuple[str, ...]
    hedge_pre: Mapping[str, int]
    hedge_post: Mapping[str, int]
    ignore_pre: tuple[str, ...]
    ignore_post: tuple[str, ...]
    pseudo: tuple[str, ...]
    termination: tuple[str, ...]
    separators: tuple[str, ...]
    links: frozenset[str]
    negated_hedges: frozenset[str]
    closing: tuple[str, ...] = ()  # end a trigger's scope only after a finding ("no effusion seen, ...")
    alternatives: tuple[str, ...] = ()  # "versus": hedges with the configured versus probability


@cache
def load_data(name: str) -> Any:
    """Parse one packaged YAML file (cached; callers must not mutate the result)."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _phrases(values: Any, where: str) -> tuple[str, ...]:
    """Normalized, de-duplicated phrases in file order; anything but a list of strings is an error."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        # YAML reads a bare no / yes / on as a boolean: such words must be quoted
        raise VocabularyError(f'{where}: expected a list of strings (quote words like "no")')
    return tuple(dict.fromkeys(plain_spelling(v) for v in values if v.strip()))


@lru_cache(maxsize=1)
def findings() -> Mapping[str, tuple[str, ...]]:
    """Canonical finding name -> its surface forms (the canonical name first)."""
    table: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for entry in load_data("findings.yaml")["findings"]:
        name = plain_spelling(entry["name"])
        if name in table:
            raise VocabularyError(f"findings.yaml: finding {name!r} is listed twice")
        forms = tuple(dict.fromkeys((name, *_phrases(entry.get("synonyms", []), f"findings.yaml:{name}"))))
        for form in forms:
            if owner.setdefault(form, name) != name:
                raise VocabularyError(f"findings.yaml: {form!r} means both {owner[form]!r} and {name!r}")
        table[name] = forms
    return table


def synonym_map() -> dict[str, str]:
    """Every lower-cased surface form (canonical names included) -> canonical finding name."""
    return {form: name for name, forms in findings().items() for form in forms}


@lru_cache(maxsize=1)
def compositions() -> tuple[Composition, ...]:
    known = findings()
    out = []
    for entry in load_data("findings.yaml").get("compositions", []):
        finding = plain_spelling(entry["finding"])
        if finding not in known:
            raise VocabularyError(f"findings.yaml: composition for unknown finding {finding!r}")
        where = f"findings.yaml:compositions:{finding}"
        out.append(
            Composition(
                finding,
                _phrases(entry["subjects"], where),
                _phrases(entry["states"], where),
                bool(entry.get("standalone", False)),
            )
        )
    return tuple(out)


@lru_cache(maxsize=1)
def descriptive() -> frozenset[str]:
    """Finding surface forms that only describe a finding following them in the same noun phrase."""
    forms = frozenset(_phrases(load_data("findings.yaml").get("descriptive", []), "findings.yaml:descriptive"))
    unknown = forms - set(synonym_map())
    if unknown:
        raise VocabularyError(f"findings.yaml: descriptive forms must be finding synonyms: {sorted(unknown)}")
    return forms


@lru_cache(maxsize=1)
def unmentions() -> tuple[str, ...]:
    return _phrases(load_data("findings.yaml").get("unmentions", []), "findings.yaml:unmentions")


@dataclass(frozen=True)
class Normals:
    """Normal statements: verdict words, and subject phrase -> the findings its normal verdict rules out."""

    verdicts: tuple[str, ...]
    subjects: Mapping[str, frozenset[str]]


def _known(names: Any, where: str) -> frozenset[str]:
    """Finding names that must all be vocabulary findings."""
    out = frozenset(_phrases(names, where))
    unknown = out - set(findings())
    if unknown:
        raise VocabularyError(f"{where}: unknown findings {sorted(unknown)}")
    return out


@lru_cache(maxsize=1)
def normals() -> Normals:
    raw = load_data("findings.yaml").get("normals", {"verdicts": [], "subjects": []})
    subjects: dict[str, frozenset[str]] = {}
    for k, entry in enumerate(raw["subjects"]):
        ruled = _known(entry["rules_out"], f"findings.yaml:normals.subjects[{k}]")
        for phrase in _phrases(entry["subjects"], f"findings.yaml:normals.subjects[{k}]"):
            subjects[phrase] = subjects.get(phrase, frozenset()) | ruled
    return Normals(_phrases(raw["verdicts"], "findings.yaml:normals.verdicts"), subjects)


@lru_cache(maxsize=1)
def compounds() -> Mapping[str, tuple[str, ...]]:
    """One surface form -> the several findings it reports ("fibronodular")."""
    raw = load_data("findings.yaml").get("compounds", {})
    return {plain_spelling(k): tuple(sorted(_known(v, f"findings.yaml:compounds:{k}"))) for k, v in raw.items()}


@dataclass(frozen=True)
class SizeWords:
    """Words of a measurement: units, the "x" between numbers, words between a finding and its size."""

    units: frozenset[str]
    by: frozenset[str]
    between: tuple[str, ...]


@lru_cache(maxsize=1)
def size_words() -> SizeWords:
    raw = load_data("attributes.yaml")["size"]
    where = "attributes.yaml:size"
    return SizeWords(
        frozenset(_phrases(raw["units"], where)), frozenset(_phrases(raw["by"], where)), _phrases(raw["between"], where)
    )


@lru_cache(maxsize=1)
def hedged_levels() -> frozenset[str]:
    """Levels whose stated finding gets the configured borderline probability ("borderline")."""
    levels = frozenset(_phrases(load_data("attributes.yaml").get("hedged_levels", []), "attributes.yaml:hedged_levels"))
    unknown = levels - set(severity_map().values())
    if unknown:
        raise VocabularyError(f"attributes.yaml: hedged_levels {sorted(unknown)} are no severity level")
    return levels


@lru_cache(maxsize=1)
def nodular_opacity_forms() -> frozenset[str]:
    """Surface forms of a nodular opacity or density: synonyms of `nodule` that the extractor
    reads as the finding its `nodular_opacity` option names (docs/extraction.md, "Conventions")."""
    forms = frozenset(_phrases(load_data("findings.yaml").get("nodular_opacity", []), "findings.yaml:nodular_opacity"))
    stray = forms - set(findings()["nodule"])
    if stray:
        raise VocabularyError(f"findings.yaml: nodular_opacity forms {sorted(stray)} are not synonyms of nodule")
    return forms


@lru_cache(maxsize=1)
def severity_map() -> Mapping[str, str]:
    """Severity surface form -> level written into the report."""
    raw = load_data("attributes.yaml")["severity"]
    return {plain_spelling(str(k)): plain_spelling(str(v)) for k, v in raw.items()}


@lru_cache(maxsize=1)
def location_words() -> LocationWords:
    raw = load_data("attributes.yaml")["location"]
    specific = _phrases(raw["specific"], "attributes.yaml:location.specific")
    generic = tuple(p for p in _phrases(raw["generic"], "attributes.yaml:location.generic") if p not in specific)
    return LocationWords(specific, generic, frozenset(_phrases(raw["joiners"], "attributes.yaml:location.joiners")))


def _hedges(raw: Mapping[Any, Any], where: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for prob, phrases in raw.items():
        if int(prob) not in (1, 2):
            raise VocabularyError(f"{where}: hedge probability must be 1 or 2, got {prob!r}")
        for phrase in _phrases(phrases, where):
            out[phrase] = int(prob)
    return out


@lru_cache(maxsize=1)
def context_triggers() -> ContextTriggers:
    raw = load_data("context.yaml")
    return ContextTriggers(
        negation_pre=_phrases(raw["negation"]["pre"], "context.yaml:negation.pre"),
        negation_post=_phrases(raw["negation"]["post"], "context.yaml:negation.post"),
        hedge_pre=_hedges(raw["hedge"]["pre"], "context.yaml:hedge.pre"),
        hedge_post=_hedges(raw["hedge"]["post"], "context.yaml:hedge.post"),
        ignore_pre=_phrases(raw["ignore"]["pre"], "context.yaml:ignore.pre"),
        ignore_post=_phrases(raw["ignore"]["post"], "context.yaml:ignore.post"),
        pseudo=_phrases(raw["pseudo"], "context.yaml:pseudo"),
        termination=_phrases(raw["termination"], "context.yaml:termination"),
        closing=_phrases(raw.get("closing", []), "context.yaml:closing"),
        alternatives=_phrases(raw.get("alternatives", []), "context.yaml:alternatives"),
        separators=_phrases(raw["separators"], "context.yaml:separators"),
        links=frozenset(_phrases(raw["links"], "context.yaml:links")),
        negated_hedges=frozenset(_phrases(raw["negated_hedges"], "context.yaml:negated_hedges")),
    )


@lru_cache(maxsize=1)
def section_headers() -> Mapping[str, str]:
    """Lower-cased header spelling -> canonical section name (findings, impression, ...)."""
    out: dict[str, str] = {}
    for section, spellings in load_data("sections.yaml").items():
        for header in _phrases(spellings, f"sections.yaml:{section}"):
            if out.setdefault(header, section) != section:
                raise VocabularyError(f"sections.yaml: header {header!r} is in {out[header]!r} and {section!r}")
    return out
