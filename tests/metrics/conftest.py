"""Fixtures of the metrics tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from srrg.metrics import chexpert
from srrg.report import default_synonyms


@pytest.fixture
def packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """write(text): the text becomes the packaged map that chexpert_map() reads next."""
    default_synonyms()  # the vocabulary is read from the real package before the map is swapped
    monkeypatch.setattr(chexpert.resources, "files", lambda package: tmp_path)
    chexpert.chexpert_map.cache_clear()

    def write(text: str) -> None:
        (tmp_path / chexpert.MAP_FILE).write_text(text, encoding="utf-8")
        chexpert.chexpert_map.cache_clear()

    yield write
    monkeypatch.undo()
    chexpert.chexpert_map.cache_clear()
