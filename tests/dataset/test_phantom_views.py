"""Per-view phantoms (issue 49): a small effusion is seen on the lateral only, and single-view
phantoms are unchanged byte for byte."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from srrg.phantom import render, render_views
from srrg.report import Finding, StructuredReport

SMALL_EFFUSION = StructuredReport((Finding("pleural effusion", 3, "small", "left base"),), ("pneumothorax",))
LARGE_EFFUSION = StructuredReport((Finding("pleural effusion", 3, "large", "left base"),), ())
CARDIO = StructuredReport(
    (Finding("cardiomegaly", 2, "mild", None), Finding("consolidation", 3, None, "right upper lobe")), ()
)
EMPTY = StructuredReport((), ("pleural effusion",))
# SHA-256 of render()'s bytes before per-view phantoms existed (commit 48dcf7c)
PINNED = {
    ("a", 32): "9551930ff71ba25fadfa50eee9f788ecb69c13594bf6f9a54868b8b75832bffe",
    ("a", 64): "a23305c25404030dff0fbbcb24fe8608f1581ca434fa59a6c4c04c776ee60e50",
    ("b", 32): "7099a076f51d48f53e4e590c25423d72afd447742151e7ae87fdfd6e786f1c29",
    ("b", 64): "c548982c0bdbd214d35e4e5c9f6719dc12344c93da227361818ba2b695156e96",
    ("c", 32): "a6d7c5e3083aa54f0605fbb3cc52bf96753fc29ececa24afad51e6ff5c46888f",
    ("c", 64): "28f9480cb7a0a4e38e18464ba5da4ae654b1ab553d5047abf91f811c1f31aef8",
}
REPORTS = {"a": SMALL_EFFUSION, "b": CARDIO, "c": EMPTY}


def _sha(img: np.ndarray) -> str:
    return hashlib.sha256(img.tobytes()).hexdigest()


@pytest.mark.parametrize(("study", "size"), list(PINNED))
def test_single_view_phantoms_are_unchanged(study, size):
    """Every trained model and cached result on phantoms depends on these bytes."""
    assert _sha(render(REPORTS[study], study, size)) == PINNED[(study, size)]
    for view in ("PA", "LATERAL", None):  # one image, whatever its view: render()'s phantom
        (only,) = render_views(REPORTS[study], study, [view], size)
        assert _sha(only) == PINNED[(study, size)]


def test_a_small_effusion_is_seen_on_the_lateral_only():
    """What makes a second view worth reading: the frontal of a PA + lateral study shows nothing of
    a small effusion (it equals the phantom without it), the lateral shows it at the posterior base."""
    frontal, lateral = render_views(SMALL_EFFUSION, "s1", ["PA", "LATERAL"], 64)
    assert np.array_equal(frontal, render(EMPTY, "s1", 64))
    _, lateral_empty = render_views(EMPTY, "s1", ["PA", "LATERAL"], 64)
    diff = lateral - lateral_empty
    assert np.abs(diff[:32]).max() == 0.0  # upper half untouched
    assert diff[40:, 32:].mean() > 0.01 and diff[40:, 32:].max() > 0.2  # posterior base brighter
    assert np.abs(diff[:, :24]).max() == 0.0  # nothing anterior


def test_a_large_effusion_stays_on_the_frontal_and_views_differ():
    frontal, lateral = render_views(LARGE_EFFUSION, "s2", ["PA", "LATERAL"], 64)
    assert not np.array_equal(frontal, render(EMPTY, "s2", 64))
    assert np.array_equal(frontal, render(LARGE_EFFUSION, "s2", 64))  # the first frontal: render()'s
    assert not np.array_equal(frontal, lateral)
    two_frontals = render_views(LARGE_EFFUSION, "s2", ["PA", "AP"], 64)
    assert np.array_equal(two_frontals[0], frontal) and not np.array_equal(two_frontals[1], frontal)


def test_a_view_is_drawn_from_the_study_not_from_how_many_views_are_read():
    """The frontal of a PA + AP + lateral study hides a small effusion for a reader of one, two or
    three views alike (the lateral is in the study even when it is not read)."""
    views = ["PA", "AP", "LATERAL"]
    every = render_views(SMALL_EFFUSION, "s3", views, 32)
    for first in (1, 2, 3):
        drawn = render_views(SMALL_EFFUSION, "s3", views, 32, first=first)
        assert len(drawn) == first and all(np.array_equal(a, b) for a, b in zip(drawn, every, strict=False))
    assert np.array_equal(every[0], render(EMPTY, "s3", 32))
