"""The package works outside the repository: build the wheel, install it into a fresh environment
(no index, no dependencies: they come from the test environment) and run `srrg score` and
`evaluate(..., ["s_score_text"])` from another directory (the schemas, vocabulary and prompts are
package data)."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

pytestmark = pytest.mark.slow

REF = {
    "positive": [{"name": "pleural effusion", "probability": 3, "level": "small", "location": "in the right lung"}],
    "negative": ["pneumothorax"],
}


def _run(cmd, cwd, env):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_installed_wheel_scores_from_another_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(REPO)],
        tmp_path,
        env,
    )
    wheel = next(dist.glob("srrg-*.whl"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python = venv / "bin" / "python"
    packages = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env).strip()
    )
    # the dependencies of the test environment, as a plain path: its .pth files (among them the
    # editable srrg of the repository) are not processed, so `import srrg` finds the wheel
    (packages / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        tmp_path,
        env,
    )

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run([str(python), "-c", "import srrg; print(srrg.__file__)"], work, env)
    assert where.startswith(str(venv)), where
    (work / "refs.jsonl").write_text(json.dumps({"study_id": "1", "report": json.dumps(REF)}) + "\n")
    (work / "hyps.jsonl").write_text(json.dumps({"study_id": "1", "report": json.dumps(REF)}) + "\n")
    out = _run(
        [
            str(venv / "bin" / "srrg"),
            "score",
            "--refs",
            "refs.jsonl",
            "--hyps",
            "hyps.jsonl",
            "--metrics",
            "s_score,bleu",
            "--out",
            "scores",
        ],
        work,
        env,
    )
    assert "1 pairs scored" in out and (work / "scores" / "summary.csv").is_file()
    code = (
        "from srrg.metrics import evaluate; "
        "r = evaluate(['Small right pleural effusion. No pneumothorax.'], ['Small right pleural effusion.'], "
        "['s_score_text']); "
        "print(r['s_score_text'])"
    )
    value = float(_run([str(python), "-c", code], work, env).strip().splitlines()[-1])
    assert 0.0 < value <= 1.0
    bad = subprocess.run(
        [str(venv / "bin" / "srrg"), "stats", "--dataset", "nope", "--out-dir", "x"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
