"""The rules normalizer: read side, levels, lobes and sites from a raw phrase and render one
canonical phrase (words: vocabulary.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from srrg.normalize.vocabulary import (
    ADVERBS,
    BOTH,
    DISTRIBUTION,
    FILLER,
    LEFT,
    LEVELS,
    LOBE_ABBREV,
    LUNG_PARTS,
    MODIFIERS,
    PLURAL,
    RIGHT,
    SIDE_WORDS,
    SITE_FORMS,
    SITE_ORDER,
    SITES,
)
from srrg.text.spelling import plain_spelling


@dataclass
class Parse:
    """What the rules normalizer read from a phrase: side per site, lobes per side, zones, modifiers."""

    sides: set[str] = field(default_factory=set)
    sites: dict[str, set[str]] = field(default_factory=dict)
    lobes: dict[str | None, set[str]] = field(default_factory=dict)
    zones: set[str] = field(default_factory=set)
    modifiers: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    plural: bool = False
    segment: bool = False


def tokens(phrase: str) -> list[str]:
    """Lower-case word tokens; hyphens and slashes separate words ("mid-lung" -> mid, lung)."""
    return re.findall(r"[a-z]+", plain_spelling(phrase))


def parse_phrase(phrase: str) -> Parse:
    """One left-to-right pass: side words apply to the next level/site they precede (else to the phrase)."""
    p = Parse()
    pending_side: set[str] = set()
    pending_levels: list[tuple[str, frozenset[str]]] = []
    last_site = ""
    words = tokens(phrase)
    for w in words:
        p.plural = p.plural or w in PLURAL
        p.segment = p.segment or w in ("segment", "segments")
        if w in SIDE_WORDS:
            pending_side.add(SIDE_WORDS[w])
            p.sides.add(SIDE_WORDS[w])
        if w in LOBE_ABBREV:
            side, level = LOBE_ABBREV[w]
            p.lobes.setdefault(side, set()).add(level)
            p.sides.add(side)
        elif w in LEVELS:
            pending_levels.append((LEVELS[w], frozenset(pending_side)))
            pending_side = set()
        elif w in ("lobe", "lobes"):
            for level, sides in pending_levels:
                p.lobes.setdefault(one_side(sides), set()).add(level)
            pending_levels, pending_side = [], set()
        elif w in SITES:
            site = SITES[w]
            if site == "aorta" and ("arch" in words or "knob" in words):
                site = "aortic_arch"
            elif site == "azygos" and "fissure" in words:
                site = "azygos_fissure"
            elif site == "fissure" and "azygos" in words:
                continue
            elif site == "hilum" and ("node" in words or "nodes" in words):
                p.modifiers.append("hilar")
                continue
            if w == "midlung":
                p.zones.add("mid")
            p.sites.setdefault(site, set()).update(pending_side)
            pending_side, last_site = set(), site
            if site == "lingula":  # the lingula is on the left by definition
                p.sides.add(LEFT)
        elif w in MODIFIERS or w in ADVERBS:
            mod = ADVERBS.get(w, w)
            if mod not in p.modifiers:
                p.modifiers.append(mod)
        elif w not in SIDE_WORDS and w not in FILLER:
            p.unknown.append(w)
    if pending_side and last_site:  # "base left": a side after the structure still belongs to it
        p.sites[last_site].update(pending_side)
    p.zones.update(level for level, _ in pending_levels)
    if p.zones and not _has_site_needing_levels(p):
        p.sites.setdefault("lung", set())
    return p


def _has_site_needing_levels(p: Parse) -> bool:
    """ "upper abdomen", "lower thoracic spine", "mid clavicle": a level word that belongs to a structure
    outside the lung."""
    return any(s not in LUNG_PARTS and s not in ("lung", "pleura") for s in p.sites)


def one_side(sides: Iterable[str]) -> str | None:
    """A set of side words as one side: left+right or 'both' -> bilateral; none -> None."""
    s = set(sides)
    if BOTH in s or {LEFT, RIGHT} <= s:
        return BOTH
    return next(iter(s)) if s else None


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _level_list(levels: Iterable[str]) -> list[str]:
    return [lv for lv in ("upper", "mid", "lower") if lv in levels]


def _render_lobes(lobes: Mapping[str | None, set[str]], default_side: str | None) -> list[str]:
    """ "in the right upper and middle lobes", "in both lower lobes"; lobe sides override the phrase side."""
    by_side: dict[str | None, set[str]] = {}
    for side, levels in lobes.items():
        by_side.setdefault(side if side is not None else default_side, set()).update(levels)
    if by_side.get(LEFT) and by_side.get(LEFT) == by_side.get(RIGHT):
        by_side.setdefault(BOTH, set()).update(by_side.pop(LEFT))
        by_side.pop(RIGHT)
    parts = []
    for side in (RIGHT, LEFT, BOTH, None):
        levels = _level_list(by_side.get(side, ()))
        lingula = side == LEFT and "mid" in levels  # the left lung's middle level is the lingula
        if lingula:
            levels.remove("mid")
        if levels:
            names = _join(["middle" if lv == "mid" else lv for lv in levels])
            plural = "lobes" if len(levels) > 1 or side == BOTH else "lobe"
            where = "both" if side == BOTH else f"the {side}" if side else "the"
            parts.append(f"in {where} {names} {plural}")
        if lingula:
            parts.append("in the lingula")
    return parts


def _render_site(site: str, side: str | None) -> str:
    prep, one, both, none = SITE_FORMS[site]
    if side == BOTH:
        return f"{prep} {both}"
    if side and "{s}" not in one and site != "lingula":  # midline structures: "on the right side of the trachea"
        return f"on the {side} side of {none}"
    return f"{prep} {one.format(s=side)}" if side else f"{prep} {none}"


def rules_normalize(phrase: str | None) -> str | None:
    """Deterministic canonical phrase: laterality + zone/lobe + structure, e.g. "left base" -> "at the
    left lung base", "RLL" -> "in the right lower lobe"; words it does not know are kept, not dropped.
    Comma-separated parts ("left chest wall, right ventricle") are normalized one by one."""
    if phrase is None:
        return None
    parts = [r for r in (_normalize_part(seg) for seg in segments(phrase)) if r]
    return " and ".join(dict.fromkeys(parts)) or None


def segments(phrase: str) -> list[str]:
    """Comma-separated parts; a part with only sides or modifiers ("bilateral, basilar") joins the next
    part that names a structure (or the previous one when it comes last)."""
    out: list[str] = []
    carry = ""
    for seg in re.split(r"[,;]", phrase):
        p = parse_phrase(seg)
        if p.sites or p.lobes or p.zones or p.unknown:
            out.append(f"{carry} {seg}".strip())
            carry = ""
        else:
            carry = f"{carry} {seg}".strip()
    if carry and out:
        out[-1] = f"{out[-1]} {carry}"
    elif carry:
        out.append(carry)
    return out


def _normalize_part(phrase: str) -> str | None:
    if not tokens(phrase):
        return None
    p = parse_phrase(phrase)
    side = one_side(p.sides) or (BOTH if p.plural else None)
    parts = _render_lobes(p.lobes, side) if p.lobes else []
    extra = list(p.modifiers)
    if p.zones and "lung" in p.sites:
        zone_side = one_side(p.sites.pop("lung")) or side
        zones = _join(_level_list(p.zones))
        plural = "zones" if len(p.zones) > 1 or zone_side == BOTH else "zone"
        lung = "both lungs" if zone_side == BOTH else f"the {zone_side} lung" if zone_side else ""
        parts.append(f"in the {zones} {plural} of {lung}" if lung else f"in the {zones} lung {plural}")
    elif p.zones:  # "lower thoracic spine", "upper abdomen": the level describes another structure
        extra = _level_list(p.zones) + extra
    specific = parts or set(p.sites) & LUNG_PARTS
    for site in SITE_ORDER:
        if site in p.sites and not (site == "lung" and specific):
            parts.append(_render_site(site, one_side(p.sites[site]) or side))
    distribution = [m for m in extra if m in DISTRIBUTION]
    extra = [m for m in extra if m not in DISTRIBUTION]
    if distribution and not parts and not p.sites:  # "diffuse bilateral" -> "diffusely in both lungs"
        parts.append(_render_site("lung", side))
    if not parts:
        if extra or p.unknown:
            where = {None: "", BOTH: "bilateral "}.get(side, f"{side} ")
            return f"in the {where}{' '.join(extra + p.unknown)}" + ("" if p.unknown else " region")
        return None if side is None else "on both sides" if side == BOTH else f"on the {side} side"
    if extra and p.segment and p.lobes:  # "left upper lobe lateral segment"
        parts[0] = f"in the {' '.join(extra)} segment of {parts[0].split(' ', 1)[1]}"
    elif extra:  # "lateral right lower lobe" -> "in the right lateral lower lobe"
        prep, rest = parts[0].split(" ", 1)
        det, noun = rest.split(" ", 1) if rest.startswith(("the ", "both ")) else ("", rest)
        if noun.startswith((f"{LEFT} ", f"{RIGHT} ")):
            side_word, noun = noun.split(" ", 1)
            det = f"{det} {side_word}".strip()
        parts[0] = " ".join(x for x in (prep, det, " ".join(extra), noun) if x)
    if p.unknown:  # kept after the first part: "in the right humerus head"
        parts[0] += " " + " ".join(p.unknown)
    adverb = DISTRIBUTION[distribution[0]] + " " if distribution else ""
    return adverb + " and ".join(parts)
