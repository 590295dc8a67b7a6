"""judge.max_tokens: null leaves each judge its own answer length; a number (the CPU demo's 128)
caps every judge (docs/judges.md). Checked on the judge job's command line of a dry run."""

from __future__ import annotations

import json
import re

import pytest
from workflow_helpers import copy_workflow, snakemake, write_config

pytestmark = pytest.mark.slow


def judge_options(workdir, judge):
    config = write_config(workdir, {"judge": judge})
    proc = snakemake(workdir, "-n", "-p", "--configfile", str(config))
    command = next(line for line in proc.stdout.splitlines() if "-m srrg judge " in line)
    return json.loads(re.search(r"--config '(.*?)'", command).group(1))


def test_judge_answer_length_null_means_each_judges_default(tmp_path):
    workdir = copy_workflow(tmp_path / "repo")
    options = judge_options(workdir, {"max_tokens": None})
    assert set(options) == {"green", "vert", "gema", "proxy_rating"}
    assert all("max_tokens" not in o for o in options.values())
    capped = judge_options(workdir, {"max_tokens": 128, "options": {"vert": {"max_tokens": 2048}}})
    assert {m: o["max_tokens"] for m, o in capped.items()} == {
        "green": 128,
        "vert": 2048,
        "gema": 128,
        "proxy_rating": 128,
    }
