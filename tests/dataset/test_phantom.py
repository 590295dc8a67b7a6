"""Phantom radiographs: what is drawn, where, how strongly, and the render -> read round trip."""

from __future__ import annotations

import numpy as np
import pytest

from srrg.phantom import Mark, location_parts, magnitude, read_scene, render, scene, visible_report
from srrg.report import Finding, StructuredReport

EFFUSION_R = Finding("pleural effusion", 3, "moderate", "in the lower zone of the right lung")


@pytest.mark.parametrize(
    ("location", "parts"),
    [
        ("in the lower zone of the right lung", ("right", "lower")),
        ("in the right costophrenic angle", ("right", "lower")),
        ("at the left lung base", ("left", "lower")),
        ("bibasilar", ("both", "lower")),
        ("in the upper zones of both lungs", ("both", "upper")),
        ("right and left perihilar", ("both", "middle")),
        ("in the thoracic spine", (None, None)),
        (None, (None, None)),
    ],
)
def test_location_parts(location: str | None, parts: tuple[str | None, str | None]) -> None:
    assert location_parts(location) == parts


def test_scene_keeps_drawable_findings_only() -> None:
    report = StructuredReport(
        (
            Finding("fracture", 3, None, "in the left ribs"),
            EFFUSION_R,
            Finding("nodule", 2, "enormous", "left upper lobe"),
        ),
        ("pneumothorax",),
    )
    assert scene(report) == (
        Mark("pleural effusion", 3, "moderate", "right", "lower", True),
        Mark("nodule", 2, None, "left", "upper", True),  # an unknown level word is drawn (and read) as none
    )


def test_round_trip_reads_what_was_drawn_and_keeps_negatives() -> None:
    report = StructuredReport(
        (
            Finding("fracture", 3, None, None),
            Finding("pleural effusion", 3, "small", "in the right costophrenic angle"),
            Finding("cardiomegaly", 2, "mild", None),
        ),
        ("pneumothorax",),
    )
    assert visible_report(report) == StructuredReport(
        (
            Finding("pleural effusion", 3, "small", "in the lower zone of the right lung"),
            Finding("cardiomegaly", 2, "mild", None),
        ),
        ("pneumothorax",),
    )
    assert (
        read_scene([Mark("atelectasis", 3, None, "both", "lower", True)]).positive[0].location
        == "in the lower zones of both lungs"
    )


def test_levels_are_ordered_sizes() -> None:
    assert (
        magnitude("trace")
        < magnitude("small")
        < magnitude(None)
        < magnitude("moderate")
        < magnitude("large")
        < magnitude("massive")
    )
    assert (
        magnitude("enormous") == magnitude(None)
        and magnitude("trace") == pytest.approx(0.1)
        and magnitude("massive") == 1.0
    )


def test_render_is_deterministic_per_study_and_jittered_across_studies() -> None:
    report = StructuredReport((EFFUSION_R,), ())
    a = render(report, "s1", 64)
    assert a.shape == (64, 64) and a.dtype == np.float32 and 0.0 <= a.min() and a.max() <= 1.0
    assert np.array_equal(a, render(report, "s1", 64))
    assert not np.array_equal(a, render(report, "s2", 64))


def _region(img: np.ndarray, x: tuple[float, float], y: tuple[float, float]) -> float:
    n = img.shape[0]
    return float(img[int(y[0] * n) : int(y[1] * n), int(x[0] * n) : int(x[1] * n)].mean())


def test_findings_brighten_their_side_and_zone() -> None:
    """Same study id -> same anatomy jitter, so the difference is the finding. The patient's right
    is the image left (radiographic convention)."""
    empty = render(StructuredReport(), "s3", 128)
    right = render(StructuredReport((EFFUSION_R,), ()), "s3", 128)
    left = render(StructuredReport((Finding("pleural effusion", 3, "moderate", "left base"),), ()), "s3", 128)
    lower_right, lower_left = ((0.18, 0.4), (0.66, 0.76)), ((0.6, 0.82), (0.66, 0.76))
    assert _region(right, *lower_right) - _region(empty, *lower_right) > 0.1
    assert abs(_region(right, *lower_left) - _region(empty, *lower_left)) < 0.03
    assert _region(left, *lower_left) - _region(empty, *lower_left) > 0.1


def test_larger_heart_and_fainter_hedged_findings() -> None:
    beside_heart = ((0.77, 0.81), (0.64, 0.7))
    sizes = [
        render(StructuredReport((Finding("cardiomegaly", 3, level, None),), ()), "s4", 128)
        for level in ("mild", "massive")
    ]
    assert _region(sizes[1], *beside_heart) > _region(sizes[0], *beside_heart) + 0.02
    upper_left = ((0.62, 0.8), (0.2, 0.35))
    base = _region(render(StructuredReport(), "s5", 128), *upper_left)
    gains = [
        _region(
            render(StructuredReport((Finding("consolidation", p, None, "left upper"),), ()), "s5", 128), *upper_left
        )
        - base
        for p in (3, 1)
    ]
    assert gains[0] > gains[1] > 0.0
