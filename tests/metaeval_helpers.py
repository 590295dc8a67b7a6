"""The prepared RadPref layout fixture that the meta-evaluation and the hostile-input tests share."""

from __future__ import annotations

from pathlib import Path

from paths import FIXTURES

from srrg.cli import main as srrg_main


def radpref_prepared(tmp_path: Path) -> Path:
    """`srrg metaeval-prepare` over the synthetic RadPref layout (tests/fixtures/rating_layouts/radpref)."""
    prep = tmp_path / "prep"
    args = ["metaeval-prepare", "--adapter", "radpref", "--data", str(FIXTURES / "rating_layouts" / "radpref")]
    assert srrg_main([*args, "--out-dir", str(prep)]) == 0
    return prep
