"""Extraction never loads torch (docs/extraction.md, "Speed"): importing it would cost every
extraction process and worker about 1.4 s and 470 MiB, and no srrg pipeline runs a torch layer."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["srrg.extract", "srrg.extract.pipeline", "srrg.extract.table"])
def test_importing_extraction_leaves_torch_unloaded(module: str) -> None:
    code = f"import sys, {module}; print(sys.modules.get('torch') is None, 'spacy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
