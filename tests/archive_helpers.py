"""Tiny tar.gz archives for tests of the IU X-ray reader and eval-extraction."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path


def write_tgz(tmp_path: Path, members: dict[str, bytes]) -> Path:
    """tmp_path/reports.tgz holding the given member names and bytes."""
    path = tmp_path / "reports.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
