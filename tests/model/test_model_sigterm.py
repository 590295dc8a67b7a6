"""A train job ended by SIGTERM (scancel, preemption) saves last.ckpt at the step it stopped at,
exits 143, and its rerun resumes there with the same step count and the same weights as an
uninterrupted run (docs/model.md). Locally with a signal, and on the localhost SLURM cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from model_fixtures import sigterm_mid_run, tiny_train_config, write_toy_dataset

STEPS = 120  # about 5 s of training: the signal, sent after step 3, always lands mid-run


def _config(ckpt: Path) -> str:
    # validation only at the end: a SIGTERM during validation falls back to the last periodic
    # checkpoint (docs/model.md), so the signal must land in a training step
    raw = tiny_train_config(
        max_steps=STEPS, log_every_n_steps=1, checkpoint_every_n_steps=1000, val_check_interval=STEPS
    )
    raw["checkpoint_dir"] = str(ckpt)
    return json.dumps(raw)


def _cmd(ds: Path, out: Path, ckpt: Path) -> list[str]:
    return [sys.executable, "-m", "srrg", "train", "--dataset", str(ds), "--out", str(out), "--config", _config(ckpt)]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def _steps(metrics: Path) -> list[int]:
    return [int(line.split(",")[0]) for line in metrics.read_text().splitlines()[1:]]


def _check_resumed(tmp: Path, ds: Path, out: Path, ckpt: Path) -> None:
    """The rerun resumes, ends at STEPS with every step logged once, and equals an uninterrupted run."""
    assert not out.exists()
    assert list(ckpt.glob("*/*/last.ckpt"))  # the checkpoint of the stopped step (no periodic one was due)
    rerun = subprocess.run(_cmd(ds, out, ckpt), env=_env(), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads(Path(f"{out}.json").read_text())
    assert summary["resumed"] and summary["steps"] == STEPS
    assert _steps(out.parent / "metrics.csv") == list(range(1, STEPS + 1))
    ref = tmp / "ref" / "m.pt"
    full = subprocess.run(_cmd(ds, ref, tmp / "ref-ckpt"), env=_env(), capture_output=True, text=True, timeout=600)
    assert full.returncode == 0, full.stderr[-3000:]
    a = torch.load(ref, weights_only=False)["state_dict"]
    b = torch.load(out, weights_only=False)["state_dict"]
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


@pytest.mark.slow
def test_sigterm_saves_the_current_step_and_the_rerun_resumes(tmp_path: Path) -> None:
    """Fails if SIGTERM killed the job without a checkpoint (the rerun would start at 0: not
    resumed), if the job exited 0 (Snakemake would not rerun it), or if the saved state skipped
    or repeated a step (metrics steps, weights)."""
    ds = write_toy_dataset(tmp_path / "ds", n_train=6)
    out, ckpt = tmp_path / "run" / "m.pt", tmp_path / "ckpt"
    rest = sigterm_mid_run(_cmd(ds, out, ckpt), _env())
    assert "SIGTERM: stopping after step" in rest
    _check_resumed(tmp_path, ds, out, ckpt)


def _wait_gone(job: str, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip():
            return
        time.sleep(1)
    raise AssertionError(f"SLURM job {job} still listed after {timeout} s")


@pytest.mark.slow
@pytest.mark.slurm
def test_scancel_mid_run_and_the_resubmitted_job_resumes(tmp_path: Path) -> None:
    """The same under SLURM: scancel (SIGTERM to the job's steps) mid-run, then the job submitted
    again (what Snakemake's retry does) resumes from the checkpoint of the stopped step."""
    if shutil.which("sbatch") is None or shutil.which("scancel") is None:
        pytest.skip("no SLURM here (run scripts/setup_slurm.sh as root)")
    ds = write_toy_dataset(tmp_path / "ds", n_train=6)
    out, ckpt, log = tmp_path / "run" / "m.pt", tmp_path / "ckpt", tmp_path / "job.log"
    # exec: the job's process is the trainer itself, as under srun; a shell between them would die of
    # the same SIGTERM at once and end the job before the trainer had saved its step
    wrap = "exec " + " ".join(f"'{a}'" for a in _cmd(ds, out, ckpt))
    sub = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "--job-name=srrg-sigterm-test",
            f"--output={log}",
            f"--chdir={tmp_path}",
            "--wrap",
            wrap,
        ],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    job = sub.stdout.strip().split(";")[0]
    end = time.monotonic() + 300
    while "step 3/" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < end, log.read_text() if log.exists() else "no job log"
        time.sleep(0.5)
    subprocess.run(["scancel", "--signal=TERM", "--full", job], check=True)
    _wait_gone(job, 300)
    assert "SIGTERM: stopping after step" in log.read_text(), log.read_text()[-3000:]
    _check_resumed(tmp_path, ds, out, ckpt)
