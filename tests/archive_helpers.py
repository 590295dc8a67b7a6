"""Tiny tar.gz archives for tests of the IU X-ray reader and eval-extraction, and a cut-off copy of
the real one for the damaged-input tests."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

# bytes kept of the packaged NLMCXR_reports.tgz: past the gzip header, far short of its end
TRUNCATED_BYTES = 200_000


def write_tgz(tmp_path: Path, members: dict[str, bytes]) -> Path:
    """tmp_path/reports.tgz holding the given member names and bytes."""
    path = tmp_path / "reports.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def truncated_iu_archive(tmp_path: Path) -> Path:
    """tmp_path/NLMCXR_reports.tgz: the first TRUNCATED_BYTES of the IU X-ray archive that
    torchxrayvision ships (the test is skipped without it)."""
    from srrg.sources.common import packaged_file

    try:
        archive = packaged_file("torchxrayvision", "data/NLMCXR_reports.tgz")
    except FileNotFoundError:
        pytest.skip("torchxrayvision is not installed")
    cut = tmp_path / "NLMCXR_reports.tgz"
    cut.write_bytes(archive.read_bytes()[:TRUNCATED_BYTES])
    return cut
