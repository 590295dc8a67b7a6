"""Phantom radiographs: a grayscale chest-radiograph-like picture drawn from a structured report.

Collections without images (the embedded default's IU X-ray reports) still need an image that
carries the report's content, or no model can show that it learns to read one. The renderer turns a
report into a *scene* (one mark per drawable positive finding: side, zone, size from the level,
contrast from the probability) and paints it over a jittered anatomy seeded by the study id. What is
drawn, and what stays invisible, is defined in docs/phantom.md; `read_scene` is the exact inverse of
the scene step, so the score of `visible_report` against the reference is the ceiling a perfect
reader of phantoms could reach.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from srrg.dataset import read_split
from srrg.report import Finding, StructuredReport, from_obj

# Severity words from smallest to largest; None (no level stated) has its own size so that a
# perfect reader can tell it apart. Unknown level words draw like None.
LEVEL_SCALE: tuple[str | None, ...] = (
    "trace",
    "minimal",
    "tiny",
    "subtle",
    "slight",
    "minimal to mild",
    "mild",
    "minor",
    "borderline",
    "small",
    None,
    "mild to moderate",
    "small to moderate",
    "moderate",
    "moderate to large",
    "moderate to severe",
    "large",
    "marked",
    "severe",
    "extensive",
    "massive",
)
# diagnostic certainty -> contrast of the finding (faint findings are the hedged ones)
STRENGTH = {3: 1.0, 2: 0.7, 1: 0.45, None: 1.0}

# the findings the renderer draws (docs/phantom.md); all others are invisible
SIDED_LUNG = (
    "consolidation",
    "lung opacity",
    "atelectasis",
    "pneumonia",
    "infiltration",
    "nodule",
    "mass",
    "granuloma",
    "calcification",
    "scarring",
    "fibrosis",
    "pleural thickening",
    "pleural effusion",
    "blunting of the costophrenic angle",
    "pneumothorax",
    "elevated hemidiaphragm",
    "bulla",
)
GLOBAL = (
    "cardiomegaly",
    "enlarged cardiomediastinum",
    "edema",
    "pulmonary vascular congestion",
    "emphysema",
    "hyperinflation",
    "hypoinflation",
    "scoliosis",
    "degenerative changes",
    "tortuous aorta",
    "atherosclerosis",
    "hernia",
    "support devices",
    "prominent interstitial markings",
)
VISIBLE = frozenset(SIDED_LUNG + GLOBAL)
DEFAULT_ZONE = {
    "pleural effusion": "lower",
    "blunting of the costophrenic angle": "lower",
    "atelectasis": "lower",
    "elevated hemidiaphragm": "lower",
    "pneumothorax": "upper",
    "pleural thickening": "upper",
    "scarring": "upper",
    "bulla": "upper",
    "fibrosis": "lower",
    "pneumonia": "lower",
}
BOTH_SIDES_BY_DEFAULT = frozenset({"pleural effusion", "fibrosis", "blunting of the costophrenic angle"})

_SIDE_WORDS = {
    "right": "right",
    "left": "left",
    "bilateral": "both",
    "bilaterally": "both",
    "both": "both",
    "bibasilar": "both",
    "bibasal": "both",
    "bibasally": "both",
    "biapical": "both",
    "lungs": "both",
}
_ZONE_WORDS = {
    "upper": "upper",
    "apex": "upper",
    "apices": "upper",
    "apical": "upper",
    "apically": "upper",
    "biapical": "upper",
    "middle": "middle",
    "mid": "middle",
    "midlung": "middle",
    "lingula": "middle",
    "lingular": "middle",
    "perihilar": "middle",
    "hilar": "middle",
    "hilum": "middle",
    "hila": "middle",
    "lower": "lower",
    "base": "lower",
    "bases": "lower",
    "basilar": "lower",
    "basal": "lower",
    "bibasilar": "lower",
    "bibasal": "lower",
    "bibasally": "lower",
    "costophrenic": "lower",
    "retrocardiac": "lower",
    "infrahilar": "lower",
    "cardiophrenic": "lower",
}
ZONES = ("upper", "middle", "lower")
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Mark:
    """One drawn finding: where (side right/left/both or None, zone), how big (level) and how
    strong (probability); `located` says whether the report gave a location at all."""

    name: str
    probability: int | None
    level: str | None
    side: str | None
    zone: str | None
    located: bool


def location_parts(location: str | None) -> tuple[str | None, str | None]:
    """(side, zone) named by a location phrase; None where it names none."""
    if not location:
        return None, None
    words = _WORD.findall(location.lower())
    sides = {_SIDE_WORDS[w] for w in words if w in _SIDE_WORDS}
    zones = [_ZONE_WORDS[w] for w in words if w in _ZONE_WORDS]
    side = "both" if "both" in sides or {"right", "left"} <= sides else (sides.pop() if sides else None)
    return side, (zones[0] if zones else None)


def location_phrase(side: str | None, zone: str | None) -> str | None:
    """The location a reader writes for a drawn side and zone (the rules normalizer's phrasing)."""
    lung = {"right": "the right lung", "left": "the left lung", "both": "both lungs", None: "the lung"}[side]
    if zone is None:
        return None if side is None else f"in {lung}"
    zones = "zones" if side == "both" else "zone"
    return f"in the {zone} {zones} of {lung}"


def drawn_level(level: str | None) -> str | None:
    return level if level in LEVEL_SCALE else None


def scene(report: StructuredReport) -> tuple[Mark, ...]:
    """The drawable positive findings of a report, with what the picture shows of each."""
    marks = []
    for f in report.positive:
        if f.name not in VISIBLE:
            continue
        side, zone = location_parts(f.location) if f.name in SIDED_LUNG else (None, None)
        located = side is not None or zone is not None
        marks.append(
            Mark(
                f.name, f.probability if f.probability in STRENGTH else None, drawn_level(f.level), side, zone, located
            )
        )
    return tuple(marks)


def read_scene(marks: Iterable[Mark], negative: Iterable[str] = ()) -> StructuredReport:
    """The report a perfect reader of the picture writes: the drawn findings, their drawn level and
    location, plus `negative` (findings the picture cannot show as ruled out)."""
    positive = tuple(
        Finding(m.name, m.probability, m.level, location_phrase(m.side, m.zone) if m.located else None) for m in marks
    )
    names = {f.name for f in positive}
    return StructuredReport(positive, tuple(n for n in negative if n not in names))


def visible_report(report: StructuredReport) -> StructuredReport:
    """The render -> read round trip of a report, keeping its negatives: an upper bound (the
    ceiling) of any model trained on phantoms; what it loses is what the picture cannot show."""
    return read_scene(scene(report), report.negative)


def study_rng(study_id: str, salt: str = "phantom") -> np.random.Generator:
    """A generator seeded by the study id (stable across processes, platforms and ranks)."""
    digest = hashlib.sha256(f"{salt}:{study_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def magnitude(level: str | None) -> float:
    """Level -> size in [0.1, 1] along LEVEL_SCALE."""
    return 0.1 + 0.9 * LEVEL_SCALE.index(drawn_level(level)) / (len(LEVEL_SCALE) - 1)


@lru_cache(maxsize=8)
def _axes(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centres in unit coordinates as a row (x) and a column (y), read-only: an expression
    of both broadcasts to the full grid, one of y alone stays a column, so a drawing costs a few
    size-long operations besides its full-grid ones. Each pixel's value is the one the full grid
    gives (the same float32 operations on the same numbers)."""
    axis = (np.arange(size, dtype=np.float32) + 0.5) / size
    x, y = axis.reshape(1, size), axis.reshape(size, 1).copy()
    x.flags.writeable = y.flags.writeable = False
    return x, y


class Canvas:
    """Pixel grid in unit coordinates (x to the image right = patient's left, y down; `_axes`)
    plus the jittered anatomy every drawing refers to."""

    def __init__(self, size: int, rng: np.random.Generator) -> None:
        self.size, self.rng = size, rng
        self.x, self.y = _axes(size)
        self.img = np.zeros((size, size), dtype=np.float32)
        j = lambda s: float(rng.uniform(-s, s))  # noqa: E731 - a one-letter jitter helper
        self.cx, self.cy, self.scale = 0.5 + j(0.03), 0.5 + j(0.03), 1.0 + j(0.04)
        self.lung_w, self.lung_h = 0.17 * self.scale, 0.30 * self.scale
        self.heart_w = 0.15 * self.scale * (1.0 + j(0.04))
        self.heart_gain = 0.18
        self.medi_w = 0.045 * self.scale
        self.spine_bend = 0.0
        self.dia_lift = {"right": 0.0, "left": 0.0}

    def lung_center(self, side: str) -> tuple[float, float]:
        """Patient's right lung is on the image left."""
        dx = 0.2 * self.scale
        return (self.cx - dx if side == "right" else self.cx + dx), self.cy - 0.02

    def ellipse(self, cx: float, cy: float, rx: float, ry: float) -> np.ndarray:
        return ((self.x - cx) / rx) ** 2 + ((self.y - cy) / ry) ** 2

    def lung_mask(self, side: str) -> np.ndarray:
        cx, cy = self.lung_center(side)
        inside = self.ellipse(cx, cy, self.lung_w, self.lung_h) <= 1.0
        return inside & (self.y <= cy + self.lung_h - self.dia_lift[side])

    def zone_center(self, side: str, zone: str | None) -> tuple[float, float]:
        cx, cy = self.lung_center(side)
        row = {"upper": -0.6, "middle": 0.0, "lower": 0.55, None: 0.0}[zone]
        lateral = -1.0 if side == "right" else 1.0
        return cx + lateral * 0.25 * self.lung_w, cy + row * self.lung_h

    def blob(self, cx: float, cy: float, sigma: float, amp: float) -> None:
        self.img += amp * np.exp(-self.ellipse(cx, cy, sigma, sigma) / 2.0)

    def disc(self, cx: float, cy: float, r: float, amp: float) -> None:
        self.img += amp * np.clip(1.5 - self.ellipse(cx, cy, r, r) * 1.5, 0.0, 1.0)

    def hline(self, cx: float, cy: float, half: float, width: float, amp: float) -> None:
        band = np.exp(-(((self.y - cy) / width) ** 2)) * (np.abs(self.x - cx) <= half)
        self.img += amp * band


def _sides(mark: Mark, rng: np.random.Generator) -> list[str]:
    if mark.side == "both" or (mark.side is None and mark.name in BOTH_SIDES_BY_DEFAULT):
        return ["right", "left"]
    return [mark.side] if mark.side else [str(rng.choice(["right", "left"]))]


def _zone(mark: Mark, rng: np.random.Generator) -> str:
    return mark.zone or DEFAULT_ZONE.get(mark.name) or str(rng.choice(ZONES))


def draw_anatomy(c: Canvas) -> None:
    """Body, lungs with vessel texture and ribs, mediastinum, spine, heart, clavicles."""
    body = c.ellipse(c.cx, c.cy + 0.05, 0.46 * c.scale, 0.55 * c.scale) <= 1.0
    c.img += 0.55 * body
    texture = _smooth_noise(c.rng, c.size, 6) * 0.05
    for side in ("right", "left"):
        lung = c.lung_mask(side)
        ribs = 0.05 * (np.sin((c.y - c.cy) * 60.0 + c.rng.uniform(0, 6.28)) > 0.55)
        c.img -= lung * (0.33 - texture - ribs)
    spine_x = c.cx + c.spine_bend * np.sin(np.pi * np.clip(c.y, 0, 1))
    c.img += 0.2 * (np.abs(c.x - spine_x) <= c.medi_w)
    c.img += c.heart_gain * (c.ellipse(c.cx + 0.035, c.cy + 0.17 * c.scale, c.heart_w, 0.11 * c.scale) <= 1.0)
    for side in (-1.0, 1.0):
        clav = np.abs(c.y - (c.cy - 0.33 * c.scale + 0.05 * np.abs(c.x - c.cx))) <= 0.012
        c.img += 0.12 * clav * (np.abs(c.x - c.cx - side * 0.15) <= 0.13)


def _smooth_noise(rng: np.random.Generator, size: int, cells: int) -> np.ndarray:
    """Low-frequency texture: bilinear upsampling of a coarse random grid."""
    coarse = rng.random((cells + 1, cells + 1)).astype(np.float32)
    t = np.linspace(0, cells, size, dtype=np.float32)
    i = np.minimum(t.astype(int), cells - 1)
    f = t - i
    rows = coarse[i] * (1 - f)[:, None] + coarse[i + 1] * f[:, None]
    return rows[:, i] * (1 - f) + rows[:, i + 1] * f


def draw_mark(c: Canvas, m: Mark) -> None:
    """Paint one finding (docs/phantom.md lists what each looks like)."""
    s, size, rng = STRENGTH[m.probability], magnitude(m.level), c.rng
    name = m.name
    if name == "enlarged cardiomediastinum":
        c.img += 0.15 * s * (np.abs(c.x - c.cx) <= c.medi_w * (1.8 + 1.5 * size)) * (c.y < c.cy)
    elif name in ("edema", "pulmonary vascular congestion", "prominent interstitial markings"):
        lungs = c.lung_mask("right") | c.lung_mask("left")
        if name == "edema":
            hilum = np.exp(-(((c.x - c.cx) / 0.22) ** 2 + ((c.y - c.cy) / 0.2) ** 2))
            c.img += lungs * hilum * (0.15 + 0.15 * size) * s
        stripes = (
            (np.sin(c.x * 90.0) > 0.7)
            if name != "pulmonary vascular congestion"
            else (np.sin(c.y * 70.0 + c.x * 40.0) > 0.8)
        )
        c.img += lungs * stripes * (0.08 + 0.06 * size) * s
    elif name in ("cardiomegaly", "emphysema", "hyperinflation", "hypoinflation", "scoliosis"):
        pass  # drawn through the anatomy (prepare)
    elif name == "degenerative changes":
        for k in range(5):
            y = c.cy - 0.2 + 0.1 * k
            c.hline(c.cx - c.medi_w - 0.015, y, 0.02, 0.01, 0.4 * s)
            c.hline(c.cx + c.medi_w + 0.015, y + 0.03, 0.02, 0.01, 0.4 * s)
    elif name in ("tortuous aorta", "atherosclerosis"):
        knob = c.ellipse(c.cx + 0.07, c.cy - 0.22 * c.scale, 0.04 + 0.03 * size, 0.035)
        c.img += (0.2 * s * (knob <= 1.0)) if name == "tortuous aorta" else (0.4 * s * (np.abs(knob - 1.0) < 0.25))
    elif name == "hernia":
        bubble = c.ellipse(c.cx + 0.02, c.cy + 0.17, 0.05 + 0.03 * size, 0.04 + 0.02 * size)
        c.img -= 0.3 * s * ((bubble <= 1.0) & (c.y < c.cy + 0.17))
    elif name == "support devices":
        path = np.abs(c.x - (c.cx - 0.25 + 0.3 * (c.y - 0.1))) <= 0.006
        c.img += 0.6 * s * path * (c.y > 0.08) * (c.y < c.cy + 0.1)
        c.disc(c.cx - 0.28, 0.1, 0.04, 0.5 * s)
    else:
        for side in _sides(m, rng):
            draw_lung_mark(c, m, side, _zone(m, rng), s, size)


def draw_lung_mark(c: Canvas, m: Mark, side: str, zone: str, s: float, size: float) -> None:
    """Findings inside (or at the edge of) one lung."""
    name, rng = m.name, c.rng
    x, y = c.zone_center(side, zone)
    x, y = x + rng.uniform(-0.02, 0.02), y + rng.uniform(-0.02, 0.02)
    lung = c.lung_mask(side)
    cx, cy = c.lung_center(side)
    if name == "pleural effusion" or name == "blunting of the costophrenic angle":
        height = (0.1 + 0.8 * size) * c.lung_h if name == "pleural effusion" else 0.12 * c.lung_h
        lateral = np.abs(c.x - cx) / c.lung_w
        surface = cy + c.lung_h - c.dia_lift[side] - height - 0.25 * height * lateral
        fluid = lung & (c.y >= surface)
        if name != "pleural effusion":
            fluid &= lateral > 0.5
        c.img += 0.33 * s * fluid
    elif name == "pneumothorax":
        edge = c.ellipse(cx, cy, c.lung_w, c.lung_h)
        rim = lung & (edge >= (0.85 - 0.4 * size) ** 2) & (c.y < cy + 0.2 * c.lung_h)
        c.img = np.where(rim, c.img - 0.2 * s, c.img)
        c.img += 0.25 * s * (lung & (np.abs(edge - (0.85 - 0.4 * size) ** 2) < 0.04) & (c.y < cy + 0.2 * c.lung_h))
    elif name == "elevated hemidiaphragm":
        pass  # drawn through the anatomy (prepare)
    elif name == "consolidation":
        c.blob(x, y, 0.04 + 0.05 * size, 0.4 * s)
    elif name == "lung opacity":
        c.blob(x, y, 0.06 + 0.06 * size, 0.3 * s)
    elif name == "pneumonia":
        for _ in range(6):
            c.blob(x + rng.uniform(-0.06, 0.06), y + rng.uniform(-0.05, 0.05), 0.02 + 0.015 * size, 0.2 * s)
    elif name == "atelectasis":
        for k in range(2):
            c.hline(x, y + 0.03 * k, 0.05 + 0.06 * size, 0.012, 0.35 * s)
    elif name in ("infiltration", "scarring", "fibrosis"):
        period = {"infiltration": 120.0, "scarring": 200.0, "fibrosis": 160.0}[name]
        net = (np.sin(c.x * period) + np.sin(c.y * period)) > 1.2
        region = np.exp(-c.ellipse(x, y, 0.06 + 0.05 * size, 0.06 + 0.04 * size) / 2.0)
        c.img += lung * net * region * 0.25 * s
    elif name in ("nodule", "mass"):
        r = (0.012 + 0.02 * size) if name == "nodule" else (0.035 + 0.05 * size)
        c.disc(x, y, r, 0.35 * s)
    elif name == "granuloma":
        c.disc(x, y, 0.02, 0.6 * s)
    elif name == "calcification":
        for _ in range(3):
            c.disc(x + rng.uniform(-0.04, 0.04), y + rng.uniform(-0.04, 0.04), 0.012, 0.6 * s)
    elif name == "pleural thickening":
        edge = c.ellipse(cx, cy, c.lung_w, c.lung_h)
        near = np.exp(-c.ellipse(x, y, 0.08, 0.08) / 2.0)
        c.img += 0.3 * s * (lung & (edge >= (0.9 - 0.08 * size) ** 2)) * near
    elif name == "bulla":
        c.img -= 0.15 * s * (c.ellipse(x, y, 0.03 + 0.03 * size, 0.03 + 0.03 * size) <= 1.0) * lung


def prepare(c: Canvas, marks: Iterable[Mark]) -> None:
    """Findings that change the anatomy itself (lung volume, diaphragm, spine) before it is drawn."""
    for m in marks:
        size = magnitude(m.level)
        if m.name == "cardiomegaly":
            c.heart_w *= 1.15 + 0.7 * size
            c.heart_gain += 0.06 * STRENGTH[m.probability]
        elif m.name == "hyperinflation" or m.name == "emphysema":
            c.lung_h *= 1.08 + 0.05 * size
        elif m.name == "hypoinflation":
            c.lung_h *= 0.88 - 0.05 * size
        elif m.name == "scoliosis":
            c.spine_bend = (0.02 + 0.03 * size) * STRENGTH[m.probability]
        elif m.name == "elevated hemidiaphragm":
            for side in _sides(m, c.rng):
                c.dia_lift[side] = (0.08 + 0.12 * size) * c.lung_h


def render_scene(marks: tuple[Mark, ...], study_id: str, size: int) -> np.ndarray:
    """The picture of a scene as float32 (size, size) in [0, 1]."""
    rng = study_rng(study_id)
    c = Canvas(size, rng)
    prepare(c, marks)
    draw_anatomy(c)
    if any(m.name == "emphysema" for m in marks):
        c.img -= 0.08 * (c.lung_mask("right") | c.lung_mask("left"))
    for m in marks:
        draw_mark(c, m)
    gain, offset, gamma = rng.uniform(0.85, 1.15), rng.uniform(-0.05, 0.05), rng.uniform(0.85, 1.15)
    img = np.clip(c.img * gain + offset, 0.0, 1.0) ** gamma
    img += rng.normal(0.0, rng.uniform(0.01, 0.04), img.shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def render(report: StructuredReport, study_id: str, size: int = 128) -> np.ndarray:
    """The phantom of one study: deterministic for (report, study id, size)."""
    return render_scene(scene(report), study_id, size)


# Per-view phantoms (docs/phantom.md, "Views"): in a study with a lateral view, effusions up to
# this size are hidden on the frontal image and seen on the lateral (the posterior costophrenic
# angle fills first); a one-image study keeps the frontal drawing of render().
LATERAL_VIEWS = frozenset({"LATERAL", "LL", "RL"})
HIDDEN_ON_FRONTAL = frozenset({"pleural effusion", "blunting of the costophrenic angle"})
SMALL = magnitude("small")
LATERAL_FOCAL = frozenset({"consolidation", "lung opacity", "pneumonia", "atelectasis", "nodule", "mass"})


def is_lateral(view: str | None) -> bool:
    return (view or "").upper() in LATERAL_VIEWS


def frontal_marks(marks: tuple[Mark, ...]) -> tuple[Mark, ...]:
    """The marks the frontal image of a study with a lateral shows: small effusions left out."""
    return tuple(m for m in marks if not (m.name in HIDDEN_ON_FRONTAL and magnitude(m.level) <= SMALL))


def render_lateral(marks: tuple[Mark, ...], study_id: str, size: int) -> np.ndarray:
    """A lateral phantom as float32 (size, size) in [0, 1]: anterior to the image left, one lung
    field over the heart (anterior, low) and the spine (posterior); effusion fills the posterior
    costophrenic angle, visible from the smallest level; cardiomegaly widens the heart; focal lung
    findings are blobs at their zone's height (a lateral shows no side)."""
    rng = study_rng(study_id, "phantom-lateral")
    c = Canvas(size, rng)
    c.img += 0.55 * (c.ellipse(c.cx, c.cy + 0.05, 0.36 * c.scale, 0.55 * c.scale) <= 1.0)
    lung = c.ellipse(c.cx, c.cy - 0.02, 0.26 * c.scale, c.lung_h) <= 1.0
    c.img -= lung * (0.3 - _smooth_noise(rng, size, 6) * 0.05)
    c.img += 0.22 * (np.abs(c.x - (c.cx + 0.27 * c.scale)) <= 0.05 * c.scale)  # spine
    heart_w = 0.13 * c.scale
    for m in marks:
        if m.name == "cardiomegaly":
            heart_w *= 1.15 + 0.7 * magnitude(m.level)
    c.img += c.heart_gain * (c.ellipse(c.cx - 0.08, c.cy + 0.15 * c.scale, heart_w, 0.12 * c.scale) <= 1.0)
    bottom = c.cy - 0.02 + c.lung_h
    for m in marks:
        s, size_m = STRENGTH[m.probability], magnitude(m.level)
        if m.name in HIDDEN_ON_FRONTAL:
            height = (0.08 + 0.8 * size_m) * c.lung_h
            posterior = np.clip((c.x - c.cx) / (0.26 * c.scale), 0.0, 1.0)
            c.img += 0.35 * s * (lung & (c.y >= bottom - height * (0.4 + 0.6 * posterior)) & (c.x > c.cx))
        elif m.name in LATERAL_FOCAL:
            row = {"upper": -0.6, "middle": 0.0, "lower": 0.55, None: 0.0}[m.zone or DEFAULT_ZONE.get(m.name)]
            c.blob(c.cx + rng.uniform(-0.08, 0.08), c.cy + row * c.lung_h, 0.04 + 0.05 * size_m, 0.3 * s)
    gain, offset = rng.uniform(0.85, 1.15), rng.uniform(-0.05, 0.05)
    img = np.clip(c.img * gain + offset, 0.0, 1.0)
    img += rng.normal(0.0, rng.uniform(0.01, 0.04), img.shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def render_views(
    report: StructuredReport, study_id: str, views: list[str | None], size: int = 128, first: int | None = None
) -> list[np.ndarray]:
    """One phantom per view of a study, frontal first (docs/phantom.md, "Views"), for its `first`
    views (all when None). A study of one image gets render()'s phantom, whatever its view
    (single-view phantoms are unchanged); with a lateral among several views, the frontal images
    leave out effusions up to `small`, which the lateral shows. Each image depends on the study's
    whole set of views, never on how many a model reads: the frontal a one-view model reads is the
    frontal a two-view model reads. The first frontal is seeded by the study id (render()'s anatomy)."""
    if len(views) <= 1:
        return [render(report, study_id, size)]
    marks = scene(report)
    shown = frontal_marks(marks) if any(is_lateral(v) for v in views) else marks
    return [
        render_lateral(marks, study_id, size)
        if is_lateral(v)
        else render_scene(shown, study_id if k == 0 else f"{study_id}/{k}", size)
        for k, v in enumerate(views[:first])
    ]


def figure(studies: list[tuple[str, StructuredReport]], path: str, size: int = 128) -> None:
    """A PNG of phantoms next to their reports (positive findings with level and location) for the
    workflow report; invisible findings are marked as such."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from srrg.io import atomic_path

    fig, axes = plt.subplots(
        len(studies), 2, figsize=(9, 2.3 * len(studies)), dpi=100, gridspec_kw={"width_ratios": [1, 2.6]}, squeeze=False
    )
    for (study_id, report), (ax_img, ax_txt) in zip(studies, axes):
        ax_img.imshow(render(report, study_id, size), cmap="gray", vmin=0, vmax=1)
        ax_img.set_title(study_id, fontsize=8)
        lines = [
            f"{'+' if f.name in VISIBLE else '(invisible)'} {f.name}, "
            f"p={f.probability}, {f.level or '-'}, {f.location or '-'}"
            for f in report.positive
        ] or ["no positive finding"]
        if report.negative:
            lines.append("negative: " + ", ".join(report.negative))
        ax_txt.text(0, 1, "\n".join(textwrap.fill(x, 70) for x in lines), va="top", fontsize=7, family="monospace")
        for ax in (ax_img, ax_txt):
            ax.axis("off")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def run_phantoms(dataset_dir: str, out: str, n: int) -> None:
    """The phantoms stage: the figure of the n training studies with the most positive findings
    (ties by id), so that it shows something."""
    df = read_split(dataset_dir, "train", ["structured"]).drop_nulls()  # sorted by study_id, shards checked
    reports = [(sid, from_obj(json.loads(s))[0]) for sid, s in df.iter_rows()]
    reports.sort(key=lambda item: -len(item[1].positive))
    figure(reports[:n], out)
