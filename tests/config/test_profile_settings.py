"""Both profiles keep a failed job's partial outputs and rerun it next time (docs/workflow.md)."""

from __future__ import annotations

import pytest
from workflow_helpers import REPO

from srrg.text.decode import read_mapping_file


@pytest.mark.parametrize("profile", ["local", "slurm"])
def test_profile_keeps_partial_outputs_of_failed_jobs_and_reruns_them(profile):
    settings = read_mapping_file(REPO / "profiles" / profile / "config.yaml")
    assert settings["keep-incomplete"] is True and settings["rerun-incomplete"] is True
