"""Location normalization (DESIGN §5.3): raw anatomical phrases -> standardized clinician-friendly phrases.

Two normalizers share one stage. The rules normalizer is deterministic and the offline default: it
reads laterality, lobes, zones and structures from the raw phrase and renders one canonical phrase
("lung right lower" -> "in the lower zone of the right lung"). The LLM path sends each unique phrase
once through srrg.llm (only the phrase, never report text), validates the answer and falls back to
the rules phrase when the answer is not a short anatomical phrase with the same laterality.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Literal, Mapping, Sequence

import polars as pl

from srrg.config import doc, from_dict
from srrg.errors import UserError
from srrg.llm import LLMClient, LLMConfig, LLMResponse, PromptTemplate
from srrg.report import StructuredReport, from_obj, normalize_text


# ---- rules normalizer vocabulary (written for this project) ----------------------------------------
LEFT, RIGHT, BOTH = "left", "right", "bilateral"
_SIDE_WORDS = {
    "left": LEFT, "lt": LEFT, "right": RIGHT, "rt": RIGHT,
    "bilateral": BOTH, "bilaterally": BOTH, "both": BOTH, "bibasilar": BOTH, "bibasal": BOTH, "biapical": BOTH,
    "bihilar": BOTH, "bibasally": BOTH,
}
_LEVELS = {"upper": "upper", "mid": "mid", "middle": "mid", "lower": "lower"}
_LOBE_ABBREV = {
    "rul": (RIGHT, "upper"), "rml": (RIGHT, "mid"), "rll": (RIGHT, "lower"),
    "lul": (LEFT, "upper"), "lll": (LEFT, "lower"),
}
# word -> site; a site is rendered by _SITE_FORMS below
_SITES = {
    "lung": "lung", "lungs": "lung", "pulmonary": "lung", "midlung": "lung", "field": "lung", "fields": "lung",
    "zone": "lung", "zones": "lung",
    "base": "base", "bases": "base", "basilar": "base", "basal": "base", "basally": "base", "bibasilar": "base", "bibasal": "base",
    "bibasally": "base",
    "apex": "apex", "apices": "apex", "apical": "apex", "apically": "apex", "biapical": "apex",
    "perihilar": "perihilar", "parahilar": "perihilar",
    "retrocardiac": "retrocardiac", "infrahilar": "infrahilar", "suprahilar": "suprahilar", "paratracheal": "paratracheal",
    "hilum": "hilum", "hila": "hilum", "hilar": "hilum", "bihilar": "hilum",
    "costophrenic": "cp_angle", "cp": "cp_angle", "cardiophrenic": "cardiophrenic", "fissure": "fissure",
    "azygos": "azygos", "pericardial": "pericardium", "pericardium": "pericardium",
    "pleura": "pleura", "pleural": "pleura",
    "hemithorax": "hemithorax", "hemithoraces": "hemithorax",
    "hemidiaphragm": "hemidiaphragm", "hemidiaphragms": "hemidiaphragm", "diaphragm": "hemidiaphragm", "diaphragmatic": "hemidiaphragm",
    "lingula": "lingula", "lingular": "lingula",
    "mediastinum": "mediastinum", "mediastinal": "mediastinum",
    "heart": "heart", "cardiac": "heart",
    "aorta": "aorta", "aortic": "aorta", "knob": "aorta",
    "spine": "spine", "spinal": "spine", "vertebral": "spine", "vertebra": "spine", "vertebrae": "spine",
    "rib": "rib", "ribs": "rib", "costal": "rib",
    "clavicle": "clavicle", "clavicles": "clavicle", "clavicular": "clavicle",
    "trachea": "trachea", "tracheal": "trachea",
    "abdomen": "abdomen", "abdominal": "abdomen",
    "sternum": "sternum", "sternal": "sternum", "manubrium": "sternum", "scapula": "scapula", "scapular": "scapula",
    "humerus": "humerus", "humeral": "humerus", "breast": "breast", "carina": "carina", "bronchus": "bronchus",
    "bronchi": "bronchus", "esophagus": "esophagus", "stomach": "stomach", "neck": "neck",
    "atrium": "atrium", "atrial": "atrium", "ventricle": "ventricle", "ventricular": "ventricle",
    "subdiaphragmatic": "subdiaphragmatic", "coronary": "coronary", "vascular": "vasculature", "vasculature": "vasculature", "node": "lymph_node",
    "nodes": "lymph_node", "acromioclavicular": "ac_joint", "glenohumeral": "gh_joint", "junction": "ge_junction",
    "gastroesophageal": "ge_junction", "tissue": "soft_tissue", "tissues": "soft_tissue", "recess": "cp_angle",
    "sulcus": "cp_angle", "sulci": "cp_angle",
    "wall": "chest_wall", "axilla": "axilla", "axillary": "axilla", "shoulder": "shoulder", "shoulders": "shoulder",
}
_PLURAL = {"lungs", "bases", "apices", "lobes", "zones", "fields", "hila", "angles", "hemidiaphragms", "hemithoraces",
           "ribs", "clavicles", "shoulders"}
_MODIFIERS = ("hilar", "lateral", "medial", "anterior", "posterior", "peripheral", "central", "superior", "inferior",
              "subpleural", "subsegmental", "segmental", "distal", "proximal", "diffuse", "multifocal", "scattered",
              "widespread", "multilobar", "minor", "major", "descending", "ascending", "thoracic", "lumbar",
              "cervical", "thoracolumbar")
_DISTRIBUTION = {"diffuse": "diffusely", "widespread": "diffusely", "multifocal": "multifocally", "scattered": "multifocally",
                 "multilobar": "multifocally"}
_ADVERBS = {"posteriorly": "posterior", "anteriorly": "anterior", "laterally": "lateral", "medially": "medial",
            "diffusely": "diffuse", "peripherally": "peripheral", "centrally": "central"}
_FILLER = {"the", "of", "in", "at", "on", "and", "within", "along", "side", "sided", "sides", "region", "regions",
           "area", "areas", "portion", "angle", "angles", "lobe", "lobes", "chest", "arch", "to", "a", "aspect",
           "aspects", "segment", "segments", "involving", "overlying", "projecting", "over", "near", "level", "levels",
           "thorax", "unilateral", "ipsilateral", "contralateral", "greater", "more", "less", "than", "lobar",
           "anteroposterior", "body", "bodies", "contour", "contours", "margin", "margins", "border", "borders", "lymph",
           "soft"}
# site -> (preposition, one-side form, both-sides form, no-side form); {s} is the side word
_SITE_FORMS = {
    "base": ("at", "the {s} lung base", "both lung bases", "the lung base"),
    "apex": ("at", "the {s} lung apex", "both lung apices", "the lung apex"),
    "perihilar": ("in", "the {s} perihilar region", "both perihilar regions", "the perihilar region"),
    "retrocardiac": ("in", "the {s} retrocardiac region", "the retrocardiac region", "the retrocardiac region"),
    "cardiophrenic": ("in", "the {s} cardiophrenic angle", "both cardiophrenic angles", "the cardiophrenic angle"),
    "fissure": ("along", "the {s} fissure", "the fissures", "the fissure"),
    "azygos": ("in", "the azygos lobe", "the azygos lobe", "the azygos lobe"),
    "azygos_fissure": ("along", "the azygos fissure", "the azygos fissure", "the azygos fissure"),
    "pericardium": ("in", "the pericardium", "the pericardium", "the pericardium"),
    "infrahilar": ("in", "the {s} infrahilar region", "both infrahilar regions", "the infrahilar region"),
    "suprahilar": ("in", "the {s} suprahilar region", "both suprahilar regions", "the suprahilar region"),
    "paratracheal": ("in", "the {s} paratracheal region", "both paratracheal regions", "the paratracheal region"),
    "hilum": ("at", "the {s} hilum", "both hila", "the hilum"),
    "cp_angle": ("in", "the {s} costophrenic angle", "both costophrenic angles", "the costophrenic angle"),
    "pleura": ("in", "the {s} pleural space", "both pleural spaces", "the pleural space"),
    "hemithorax": ("in", "the {s} hemithorax", "both hemithoraces", "the hemithorax"),
    "hemidiaphragm": ("at", "the {s} hemidiaphragm", "both hemidiaphragms", "the hemidiaphragm"),
    "lingula": ("in", "the lingula", "the lingula", "the lingula"),
    "mediastinum": ("in", "the mediastinum", "the mediastinum", "the mediastinum"),
    "heart": ("in", "the heart", "the heart", "the heart"),
    "aorta": ("in", "the aorta", "the aorta", "the aorta"),
    "aortic_arch": ("at", "the aortic arch", "the aortic arch", "the aortic arch"),
    "spine": ("in", "the spine", "the spine", "the spine"),
    "rib": ("in", "the {s} ribs", "the ribs on both sides", "the ribs"),
    "clavicle": ("in", "the {s} clavicle", "both clavicles", "the clavicle"),
    "sternum": ("in", "the sternum", "the sternum", "the sternum"),
    "scapula": ("in", "the {s} scapula", "both scapulae", "the scapula"),
    "humerus": ("in", "the {s} humerus", "both humeri", "the humerus"),
    "breast": ("in", "the {s} breast", "both breasts", "the breast"),
    "carina": ("at", "the carina", "the carina", "the carina"),
    "bronchus": ("in", "the {s} main bronchus", "both main bronchi", "the bronchi"),
    "esophagus": ("in", "the esophagus", "the esophagus", "the esophagus"),
    "stomach": ("in", "the stomach", "the stomach", "the stomach"),
    "neck": ("in", "the {s} neck", "the neck", "the neck"),
    "atrium": ("in", "the {s} atrium", "both atria", "the atria"),
    "ventricle": ("in", "the {s} ventricle", "both ventricles", "the ventricles"),
    "subdiaphragmatic": ("in", "the {s} subdiaphragmatic region", "both subdiaphragmatic regions", "the subdiaphragmatic region"),
    "coronary": ("in", "the {s} coronary arteries", "the coronary arteries", "the coronary arteries"),
    "vasculature": ("in", "the {s} pulmonary vasculature", "the pulmonary vasculature", "the pulmonary vasculature"),
    "lymph_node": ("in", "the {s} lymph nodes", "the lymph nodes on both sides", "the lymph nodes"),
    "ac_joint": ("at", "the {s} acromioclavicular joint", "both acromioclavicular joints", "the acromioclavicular joint"),
    "gh_joint": ("at", "the {s} glenohumeral joint", "both glenohumeral joints", "the glenohumeral joint"),
    "ge_junction": ("at", "the gastroesophageal junction", "the gastroesophageal junction", "the gastroesophageal junction"),
    "soft_tissue": ("in", "the {s} soft tissues", "the soft tissues on both sides", "the soft tissues"),
    "trachea": ("in", "the trachea", "the trachea", "the trachea"),
    "abdomen": ("in", "the abdomen", "the abdomen", "the abdomen"),
    "chest_wall": ("in", "the {s} chest wall", "both sides of the chest wall", "the chest wall"),
    "axilla": ("in", "the {s} axilla", "both axillae", "the axilla"),
    "shoulder": ("in", "the {s} shoulder", "both shoulders", "the shoulder"),
    "lung": ("in", "the {s} lung", "both lungs", "the lung"),
}
_SITE_ORDER = tuple(_SITE_FORMS)
# sites inside a lung: "right lung base" says "at the right lung base", not also "in the right lung"
_LUNG_PARTS = {"base", "apex", "perihilar", "infrahilar", "suprahilar", "retrocardiac", "hilum", "lingula", "cp_angle",
               "cardiophrenic", "fissure", "azygos", "azygos_fissure"}
# words an LLM answer may use: everything the rules vocabulary knows plus phrase glue
_ANATOMY = (set(_SITES) | set(_LEVELS) | set(_LOBE_ABBREV) | set(_SIDE_WORDS)
            | {"lobe", "lobes", "angle", "angles", "hemithorax", "segment", "segments", "region", "regions",
               "arch", "chest", "apices", "space", "spaces", "silhouette", "border", "margin", "fissure", "interstitium",
               "parenchyma", "parenchymal", "airspace", "hemidiaphragm", "upper", "lower", "zone", "zones", "axillae",
               "costophrenic", "cardiophrenic", "subdiaphragmatic", "soft", "tissue", "tissues", "bone", "bones",
               "vasculature", "vascular", "paratracheal", "paramediastinal", "infrahilar", "suprahilar"}
            | {w for forms in _SITE_FORMS.values() for form in forms[1:] for w in re.findall(r"[a-z]+", form)}
            ) - {"s", "the", "of", "on", "both", "side", "sides"}
_GLUE = {"in", "at", "of", "the", "and", "on", "both", "within", "along", "over", "near", "to", "from", "side",
         "sides", "aspect", "portion", "part", "area", "areas", "posterior", "anterior", "lateral", "medial",
         "peripheral", "central", "superior", "inferior", "subpleural", "mid", "basilar", "thoracic", "a", "with",
         "adjacent", "projecting", "overlying", "extending", "into", "involving", "bilaterally", "diffusely",
         "multifocally", "lungs", "head", "lymph", "node", "nodes"} | set(_MODIFIERS)
_REFUSAL = re.compile(r"\b(sorry|cannot|can't|unable|as an ai|language model|i am|i'm|please|note|here is|assistant)\b")
_PREPOSITIONS = ("in ", "at ", "on ", "along ", "within ", "over ", "near ", "adjacent ", "involving ", "of ",
                 "diffusely ", "multifocally ")


@dataclass
class _Parse:
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
    return re.findall(r"[a-z]+", normalize_text(phrase))


def _parse(phrase: str) -> _Parse:
    """One left-to-right pass: side words apply to the next level/site they precede (else to the phrase)."""
    p = _Parse()
    pending_side: set[str] = set()
    pending_levels: list[tuple[str, frozenset[str]]] = []
    last_site = ""
    words = tokens(phrase)
    for w in words:
        p.plural = p.plural or w in _PLURAL
        p.segment = p.segment or w in ("segment", "segments")
        if w in _SIDE_WORDS:
            pending_side.add(_SIDE_WORDS[w])
            p.sides.add(_SIDE_WORDS[w])
        if w in _LOBE_ABBREV:
            side, level = _LOBE_ABBREV[w]
            p.lobes.setdefault(side, set()).add(level)
            p.sides.add(side)
        elif w in _LEVELS:
            pending_levels.append((_LEVELS[w], frozenset(pending_side)))
            pending_side = set()
        elif w in ("lobe", "lobes"):
            for level, sides in pending_levels:
                p.lobes.setdefault(_one_side(sides), set()).add(level)
            pending_levels, pending_side = [], set()
        elif w in _SITES:
            site = _SITES[w]
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
        elif w in _MODIFIERS or w in _ADVERBS:
            mod = _ADVERBS.get(w, w)
            if mod not in p.modifiers:
                p.modifiers.append(mod)
        elif w not in _SIDE_WORDS and w not in _FILLER:
            p.unknown.append(w)
    if pending_side and last_site:  # "base left": a side after the structure still belongs to it
        p.sites[last_site].update(pending_side)
    p.zones.update(level for level, _ in pending_levels)
    if p.zones and not _has_site_needing_levels(p):
        p.sites.setdefault("lung", set())
    return p


def _has_site_needing_levels(p: _Parse) -> bool:
    """"upper abdomen", "lower thoracic spine", "mid clavicle": a level word that belongs to a structure
    outside the lung."""
    return any(s not in _LUNG_PARTS and s not in ("lung", "pleura") for s in p.sites)


def _one_side(sides: Iterable[str]) -> str | None:
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
    """"in the right upper and middle lobes", "in both lower lobes"; lobe sides override the phrase side."""
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
    prep, one, both, none = _SITE_FORMS[site]
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
    parts = [r for r in (_normalize_part(seg) for seg in _segments(phrase)) if r]
    return " and ".join(dict.fromkeys(parts)) or None


def _segments(phrase: str) -> list[str]:
    """Comma-separated parts; a part with only sides or modifiers ("bilateral, basilar") joins the next
    part that names a structure (or the previous one when it comes last)."""
    out: list[str] = []
    carry = ""
    for seg in re.split(r"[,;]", phrase):
        p = _parse(seg)
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
    p = _parse(phrase)
    side = _one_side(p.sides) or (BOTH if p.plural else None)
    parts = _render_lobes(p.lobes, side) if p.lobes else []
    extra = list(p.modifiers)
    if p.zones and "lung" in p.sites:
        zone_side = _one_side(p.sites.pop("lung")) or side
        zones = _join(_level_list(p.zones))
        plural = "zones" if len(p.zones) > 1 or zone_side == BOTH else "zone"
        lung = "both lungs" if zone_side == BOTH else f"the {zone_side} lung" if zone_side else ""
        parts.append(f"in the {zones} {plural} of {lung}" if lung else f"in the {zones} lung {plural}")
    elif p.zones:  # "lower thoracic spine", "upper abdomen": the level describes another structure
        extra = _level_list(p.zones) + extra
    specific = parts or set(p.sites) & _LUNG_PARTS
    for site in _SITE_ORDER:
        if site in p.sites and not (site == "lung" and specific):
            parts.append(_render_site(site, _one_side(p.sites[site]) or side))
    distribution = [m for m in extra if m in _DISTRIBUTION]
    extra = [m for m in extra if m not in _DISTRIBUTION]
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
    adverb = _DISTRIBUTION[distribution[0]] + " " if distribution else ""
    return adverb + " and ".join(parts)


# ---- LLM path ---------------------------------------------------------------------------------------
PROMPT = PromptTemplate(
    id="normalize_location",
    version="1",
    messages=(
        ("system",
         "You standardize anatomical location phrases from chest X-ray reports. Rewrite the raw location "
         "phrase as one short, standardized, clinician-friendly expression that keeps its laterality "
         "(left, right or both) and its zone, lobe or structure. Answer with the phrase only, starting "
         "with a preposition, no explanation.\n"
         "Examples:\nlung right lower -> in the lower zone of the right lung\n"
         "left base -> at the left lung base\nRUL -> in the right upper lobe\n"
         "bibasilar -> at both lung bases"),
        ("user", "{phrase}"),
    ),
    fields=("phrase",),
)


def clean_answer(text: str) -> str:
    """First line of the answer without quotes, arrows or a final period, in the shared spelling."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.split("->")[-1]
    return normalize_text(line.strip().strip("\"'`*").rstrip(".").strip("\"'`* "))


def validate_answer(raw: str, answer: str, max_words: int) -> str | None:
    """None when the answer is acceptable, else the reason it is rejected. max_words applies per
    comma-separated part of the raw phrase."""
    if not answer:
        return "empty"
    if _REFUSAL.search(answer):
        return "refusal or explanation"
    words = tokens(answer)
    limit = max_words * len(_segments(raw))
    if len(words) > limit:
        return f"longer than {limit} words"
    if re.search(r"[^a-z\s,'()-]", answer):
        return "characters outside a phrase"
    if not answer.startswith(_PREPOSITIONS):
        return "does not start with a preposition"
    unknown = [w for w in words if w not in _ANATOMY and w not in _GLUE]
    if unknown:
        return f"non-anatomical words {unknown[:3]}"
    raw_parse = _parse(raw)
    if (raw_parse.sites or raw_parse.lobes or raw_parse.zones) and not any(w in _ANATOMY and w not in _SIDE_WORDS for w in words):
        return "no anatomical structure"
    raw_side, ans_side = _one_side(raw_parse.sides), _one_side(_parse(answer).sides)
    if (raw_side is not None and ans_side != raw_side) or (raw_side is None and ans_side in (LEFT, RIGHT)):
        return f"laterality changed ({raw_side} -> {ans_side})"
    return None


@dataclass(frozen=True)
class NormalizeConfig:
    """method: rules (deterministic, offline default) | llm (through the `llm` client, rules fallback).
    max_words: longest accepted LLM answer; max_tokens: decoding budget per phrase."""

    method: Literal["rules", "llm"] = field(
        default="rules", metadata=doc("rules = deterministic, offline; llm = each unique phrase through the llm section, rules as fallback.")
    )
    max_words: int = field(default=12, metadata=doc("Longest accepted LLM answer (words).", minimum=1))
    max_tokens: int = field(default=24, metadata=doc("Decoding budget per phrase.", minimum=1))
    llm: LLMConfig = field(default_factory=LLMConfig)

    def __post_init__(self) -> None:
        if self.method not in ("rules", "llm"):
            raise UserError(f"normalize.method must be 'rules' or 'llm', got {self.method!r}")
        if self.max_words < 1 or self.max_tokens < 1:
            raise UserError("normalize.max_words and normalize.max_tokens must be >= 1")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> NormalizeConfig:
        """The normalize slice; its `llm` key holds the llm slice (the rule passes both)."""
        data = dict(data or {})
        llm = LLMConfig.from_dict(data.pop("llm", None))  # refuses inline secrets too
        return replace(from_dict(cls, data, "normalize"), llm=llm)


@dataclass(frozen=True)
class PhraseResult:
    """How one unique raw phrase was normalized; path: rules | llm | cache; reason: why rules were used."""

    raw: str
    normalized: str | None
    path: str
    llm_answer: str | None = None
    reason: str | None = None


def normalize_phrases(phrases: Sequence[str], cfg: NormalizeConfig, client: LLMClient | None = None) -> list[PhraseResult]:
    """Normalize each unique phrase once. With method llm, only the phrases are sent to the client."""
    rules = [rules_normalize(p) for p in phrases]
    if cfg.method == "rules":
        return [PhraseResult(p, r, "rules") for p, r in zip(phrases, rules)]
    client = client or LLMClient(cfg.llm)
    if not client.has_model:
        return [PhraseResult(p, r, "rules", reason="llm backend has no model") for p, r in zip(phrases, rules)]
    answers = client.complete([PROMPT.render("normalize", max_tokens=cfg.max_tokens, phrase=p) for p in phrases])
    return [_judge(p, r, a, cfg) for p, r, a in zip(phrases, rules, answers)]


def _judge(raw: str, rules: str | None, answer: LLMResponse, cfg: NormalizeConfig) -> PhraseResult:
    if not answer.ok:
        return PhraseResult(raw, rules, "rules", None, f"llm error: {answer.error}")
    cleaned = clean_answer(answer.text)
    reason = validate_answer(raw, cleaned, cfg.max_words)
    if reason:
        return PhraseResult(raw, rules, "rules", answer.text, f"invalid answer: {reason}")
    return PhraseResult(raw, cleaned, "cache" if answer.cached else "llm", answer.text)


# ---- the stage --------------------------------------------------------------------------------------
def _load_report(value: str | None) -> StructuredReport | None:
    if value is None:
        return None
    try:
        return from_obj(json.loads(value))[0]
    except (ValueError, TypeError, AttributeError):
        return None


def collect_phrases(reports: Iterable[StructuredReport | None]) -> Counter[str]:
    """Unique raw location phrases (shared spelling) with how many findings carry each."""
    counts: Counter[str] = Counter()
    for report in reports:
        for f in report.positive if report is not None else ():
            if f.location:
                counts[normalize_text(f.location)] += 1
    return counts


def apply_mapping(report: StructuredReport, mapping: Mapping[str, str | None]) -> StructuredReport:
    """The report with each finding's location replaced by its normalized phrase."""
    positive = tuple(
        replace(f, location=mapping.get(normalize_text(f.location), f.location)) if f.location else f for f in report.positive
    )
    return replace(report, positive=positive)


@dataclass
class StageSummary:
    rows: int
    statuses: dict[str, int]
    unique_phrases: int
    paths: dict[str, int]
    fallbacks: int
    usage: dict[str, Any]
    seconds: float

    def line(self) -> str:
        u = self.usage.get("total", {})
        return (
            f"normalize-locations: rows={self.rows} statuses={self.statuses} unique_phrases={self.unique_phrases} "
            f"paths={self.paths} requests_sent={u.get('sent', 0)} cache_hits={u.get('cache_hits', 0)} "
            f"fallbacks={self.fallbacks} errors={u.get('errors', 0)} prompt_tokens={u.get('prompt_tokens', 0)} "
            f"completion_tokens={u.get('completion_tokens', 0)} cost_usd={u.get('cost_usd', 0.0):.4f} "
            f"seconds={self.seconds:.2f}"
        )


def run(df: pl.DataFrame, cfg: NormalizeConfig, client: LLMClient | None = None) -> tuple[pl.DataFrame, pl.DataFrame, StageSummary]:
    """Normalize every row's locations: (rows with structured replaced and structured_raw kept,
    one row per unique raw phrase, summary). Rows without a report keep status and null output."""
    t0 = time.perf_counter()
    if "structured" not in df.columns:
        raise UserError(f"input has no 'structured' column (columns: {df.columns}); run srrg extract first")
    raw_json = df["structured"].cast(pl.String).to_list()
    reports = [_load_report(v) for v in raw_json]
    counts = collect_phrases(reports)
    phrases = sorted(counts)
    if cfg.method == "llm" and client is None:
        client = LLMClient(cfg.llm)
    results = normalize_phrases(phrases, cfg, client)
    mapping = {r.raw: r.normalized for r in results}
    out_json: list[str | None] = []
    statuses: list[str] = []
    for value, report in zip(raw_json, reports):
        if value is None:
            out_json.append(None)
            statuses.append("no_report")
        elif report is None:
            out_json.append(value)
            statuses.append("unparseable")
        else:
            out_json.append(apply_mapping(report, mapping).to_json())
            statuses.append("ok")
    out = df.with_columns(
        pl.Series("structured_raw", raw_json, dtype=pl.String),
        pl.Series("structured", out_json, dtype=pl.String),
        pl.Series("normalize_status", statuses, dtype=pl.String),
    )
    table = pl.DataFrame(
        {
            "raw": [r.raw for r in results],
            "normalized": [r.normalized for r in results],
            "path": [r.path for r in results],
            "count": [counts[r.raw] for r in results],
            "llm_answer": [r.llm_answer for r in results],
            "reason": [r.reason for r in results],
        },
        schema={"raw": pl.String, "normalized": pl.String, "path": pl.String, "count": pl.Int64,
                "llm_answer": pl.String, "reason": pl.String},
    )
    summary = StageSummary(
        rows=df.height,
        statuses=dict(sorted(Counter(statuses).items())),
        unique_phrases=len(phrases),
        paths=dict(sorted(Counter(r.path for r in results).items())),
        fallbacks=sum(r.llm_answer is not None or (r.reason or "").startswith("llm error") for r in results if r.path == "rules"),
        usage=client.usage.to_dict() if client is not None and cfg.method == "llm" else {},
        seconds=time.perf_counter() - t0,
    )
    return out, table, summary
