"""Stages that load torch or spaCy name a missing input before importing them (docs/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
from srrg.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "heavy": sorted(m for m in ("torch", "spacy") if m in sys.modules)}))
"""


def probe(*argv):
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["infer", "--model", "{tmp}/nope.pt", "--dataset", "{tmp}", "--out", "{tmp}/p.parquet"],
            "--model {tmp}/nope.pt: no such file",
        ),
        (
            ["infer", "--model", "{tmp}/m.pt", "--dataset", "{tmp}/none", "--out", "{tmp}/p.parquet"],
            "--dataset {tmp}/none: no such folder",
        ),
        (
            ["infer", "--model", "{tmp}", "--dataset", "{tmp}", "--out", "{tmp}/p.parquet"],
            "--model {tmp}: is a folder, expected a file",
        ),
        (
            ["train", "--dataset", "{tmp}/m.pt", "--out", "{tmp}/m2.pt"],
            "--dataset {tmp}/m.pt: is a file, expected a folder",
        ),
        (
            ["extract", "--in", "{tmp}/studies.parquet", "--out", "{tmp}/e.parquet"],
            "--in {tmp}/studies.parquet: no such file",
        ),
    ],
)
def test_missing_inputs_are_named_before_torch_or_spacy_loads(tmp_path, argv, message):
    (tmp_path / "m.pt").write_bytes(b"")
    result, err = probe(*(a.format(tmp=tmp_path) for a in argv))
    assert result == {"rc": 2, "heavy": []}
    assert message.format(tmp=tmp_path) in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            [
                "infer",
                "--model",
                "{tmp}/m.pt",
                "--dataset",
                "{tmp}",
                "--out",
                "{tmp}/p.parquet",
                "--config",
                '{{"num_beams": 0}}',
            ],
            "num_beams",
        ),
        (
            ["train", "--dataset", "{tmp}", "--out", "{tmp}/m2.pt", "--config", '{{"trainer": {{"max_step": 1}}}}'],
            "max_step",
        ),
        (
            ["extract", "--in", "{tmp}/m.pt", "--out", "{tmp}/e.parquet", "--config", '{{"sections": ["summary"]}}'],
            "extract.sections.0",
        ),
    ],
)
def test_wrong_settings_are_named_before_torch_or_spacy_loads(tmp_path, argv, message):
    (tmp_path / "m.pt").write_bytes(b"")
    result, err = probe(*(a.format(tmp=tmp_path) for a in argv))
    assert result == {"rc": 2, "heavy": []}
    assert message in err
