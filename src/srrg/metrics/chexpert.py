"""The CheXpert observations srrg labels (docs/metrics.md, "Clinical efficacy"): the packaged map
vocab/chexpert_map.yaml from srrg's findings to the 14 observations, and their hierarchy. Shared by
`ce` and `s_score_text` (which gives related findings part credit), below both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from srrg.errors import UserError
from srrg.report import default_synonyms

MAP_FILE = "chexpert_map.yaml"
NO_FINDING = "No Finding"
# The hierarchy of the CheXpert observations (docs/metrics.md, "Clinical efficacy"): a child is a
# more specific kind of its parent (pneumonia is a consolidation, which is a lung opacity).
OBSERVATION_PARENT = {
    "Cardiomegaly": "Enlarged Cardiomediastinum",
    "Lung Lesion": "Lung Opacity",
    "Edema": "Lung Opacity",
    "Consolidation": "Lung Opacity",
    "Atelectasis": "Lung Opacity",
    "Pneumonia": "Consolidation",
}


@dataclass(frozen=True)
class ChexpertMap:
    """The 14 observations in label-file order, finding -> observations, and the findings that do
    not rule out No Finding."""

    observations: tuple[str, ...]
    findings: Mapping[str, tuple[str, ...]]
    no_finding_ignores: frozenset[str]


def _names(value: object) -> bool:
    """A YAML list of strings (a bare string would be read as its characters)."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _read_map() -> dict[str, Any]:
    """The packaged map's YAML with its shape checked; a malformed file is one UserError naming it."""
    text = resources.files("srrg.vocab").joinpath(MAP_FILE).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"{MAP_FILE}: not valid YAML{f' (line {mark.line + 1})' if mark else ''}") from None
    if not (
        isinstance(data, dict)
        and _names(data.get("observations"))
        and isinstance(data.get("map"), dict)
        and all(_names(labels) for labels in data["map"].values())
        and _names(data.get("no_finding_ignores", []))
    ):
        raise UserError(
            f"{MAP_FILE}: expected observations (a list), map (finding -> a list of observations) "
            "and no_finding_ignores (a list of findings)"
        )
    return data


@lru_cache(maxsize=1)
def chexpert_map() -> ChexpertMap:
    """Load and check the packaged map: its shape, known observations, canonical vocabulary names."""
    data = _read_map()
    observations = tuple(data["observations"])
    canonical = set(default_synonyms().values())
    findings: dict[str, tuple[str, ...]] = {}
    for name, labels in data["map"].items():
        bad = [label for label in labels if label not in observations or label == NO_FINDING]
        if bad or name not in canonical:
            raise UserError(
                f"{MAP_FILE}: entry {name!r} -> {labels}: the name must be a canonical finding of "
                f"findings.yaml and each label one of the 13 observations other than {NO_FINDING}"
            )
        findings[name] = tuple(labels)
    return ChexpertMap(observations, findings, frozenset(data.get("no_finding_ignores", ())))
