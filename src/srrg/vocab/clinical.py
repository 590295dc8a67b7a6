"""Clinical knowledge of the findings that the free-text S-Score weighs by (docs/metrics.md,
"Free-text S-Score", `variant: v2`): each finding's significance class (significance.yaml), its
vaguer names (hierarchy.yaml) and the findings expected in a patient's context (expected.yaml).
Each file cites its sources; the loaders check every name against findings.yaml."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from srrg.vocab import VocabularyError, findings, load_data

_AGE = re.compile(r"\d+(?:\.\d+)?")


def _known(names: object, where: str) -> tuple[str, ...]:
    """The names of a list, each a finding of findings.yaml."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise VocabularyError(f"{where}: expected a list of finding names")
    unknown = sorted(set(names) - set(findings()))
    if unknown:
        raise VocabularyError(f"{where}: not findings of findings.yaml: {unknown}")
    return tuple(names)


@lru_cache(maxsize=1)
def significance_classes() -> Mapping[str, str]:
    """Finding -> its class (urgent | actionable | incidental); every finding has one."""
    raw = load_data("significance.yaml")
    classes = set(raw["classes"])
    table = dict(raw["findings"])
    _known(list(table), "significance.yaml:findings")
    bad = {n: c for n, c in table.items() if c not in classes}
    if bad:
        raise VocabularyError(f"significance.yaml: classes outside {sorted(classes)}: {bad}")
    missing = sorted(set(findings()) - set(table))
    if missing:
        raise VocabularyError(f"significance.yaml: findings without a class: {missing}")
    return table


@lru_cache(maxsize=1)
def ancestors() -> Mapping[str, frozenset[str]]:
    """Finding -> its vaguer names: its parents in hierarchy.yaml and theirs (a cycle is an error)."""
    parents = {k: _known(v, f"hierarchy.yaml:parents:{k}") for k, v in load_data("hierarchy.yaml")["parents"].items()}
    _known(list(parents), "hierarchy.yaml:parents")

    def walk(name: str, path: tuple[str, ...]) -> frozenset[str]:
        out: set[str] = set()
        for parent in parents.get(name, ()):
            if parent in path:
                raise VocabularyError(f"hierarchy.yaml: cycle {' -> '.join((*path, parent))}")
            out |= {parent, *walk(parent, (*path, parent))}
        return frozenset(out)

    return {name: walk(name, (name,)) for name in findings()}


def is_vaguer(general: str, specific: str) -> bool:
    """Whether `general` is a vaguer name of `specific` (one of its ancestors in hierarchy.yaml)."""
    return general in ancestors().get(specific, ())


@dataclass(frozen=True)
class ExpectedRule:
    """Findings expected at or above an age, or when the indication matches a pattern."""

    name: str
    findings: frozenset[str]
    min_age: float | None = None
    indication: tuple[re.Pattern[str], ...] = ()

    def holds(self, context: Mapping[str, str]) -> bool:
        if self.min_age is not None:
            age = _AGE.search(context.get("age", ""))
            return age is not None and float(age.group()) >= self.min_age
        text = context.get("indication", "").lower()
        return any(p.search(text) for p in self.indication)


@lru_cache(maxsize=1)
def expected_rules() -> tuple[ExpectedRule, ...]:
    """The rules of expected.yaml, each with an age or an indication condition."""
    rules = []
    for k, raw in enumerate(load_data("expected.yaml")["rules"]):
        where = f"expected.yaml:rules[{k}]"
        if ("min_age" in raw) == ("indication" in raw):
            raise VocabularyError(f"{where}: give exactly one of min_age and indication")
        patterns = tuple(re.compile(p) for p in raw.get("indication", ()))
        min_age = float(raw["min_age"]) if "min_age" in raw else None
        rules.append(ExpectedRule(raw["name"], frozenset(_known(raw["findings"], where)), min_age, patterns))
    return tuple(rules)


def expected_findings(context: Mapping[str, str]) -> frozenset[str]:
    """The findings expected for one patient context ({} -> none)."""
    if not context:
        return frozenset()
    return frozenset().union(*(r.findings for r in expected_rules() if r.holds(context)))
