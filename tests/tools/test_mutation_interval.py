"""The kill-rate interval of tools/mutation.py against hand-computed Wilson intervals."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
from paths import REPO, TOOLS

_SPEC = importlib.util.spec_from_file_location("mutation_tool", TOOLS / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = mutation  # dataclasses look their module up there
_SPEC.loader.exec_module(mutation)


def test_wilson_interval_hand_computed():
    # 8 of 10: centre (0.8 + 1.92/10) / 1.384 = 0.7168, half-width 0.2461 -> [0.4902, 0.9433]
    low, high = mutation.wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_wilson_interval_at_the_extremes():
    # all killed: the upper bound is 1 and the lower bound n / (n + z^2)
    low, high = mutation.wilson_interval(30, 30)
    assert high == 1.0 and low == pytest.approx(30 / (30 + 1.959964**2))
    low, high = mutation.wilson_interval(0, 5)
    assert low == 0.0 and high == pytest.approx(1.959964**2 / (5 + 1.959964**2))
    assert all(math.isnan(v) for v in mutation.wilson_interval(0, 0))


def test_every_target_names_existing_files():
    root = REPO
    for target in mutation.TARGETS.values():
        assert (root / target.path).is_file(), target.path
        assert all((root / t).is_file() for t in target.tests), target.tests
