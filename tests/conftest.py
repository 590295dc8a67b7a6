"""Fixtures shared by every test folder. pytest puts this folder on sys.path (it holds no
__init__.py), so the helper modules beside it (paths, workflow_helpers, judge_responses, ...)
import by name from any test folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from paths import SHARED_DATA


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """`shared_data("chexpert-labeler/sample_reports.csv")`: the path of a file or folder of the
    public data read in place, or a skip that names it when this checkout has no such data."""

    def find(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"../shared/data/{relative} is absent")
        return path

    return find
