"""Lightning training: a 2-step fit, resume equivalence, 2-rank gloo DDP, SLURM, and SmolLM2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lightning as L
import pytest
import torch

from model_fixtures import tiny_train_config, write_toy_dataset
from srrg.model.config import LLMConfig, TrainConfig
import srrg.model.train as train_mod
from srrg.cli import main as srrg_main
from srrg.model.train import build_trainer, run_train

REPO = Path(__file__).resolve().parents[1]
torch.set_num_threads(1)


def _cfg(tmp: Path, **trainer: object) -> TrainConfig:
    raw = tiny_train_config(**trainer)
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    return TrainConfig.from_dict(raw)


def test_two_step_fit_writes_model_and_summary(tmp_path: Path) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    out = tmp_path / "run" / "model.pt"
    summary = run_train(ds, out, _cfg(tmp_path), "r")
    assert summary["steps"] == 2 and summary["world_size"] == 1 and summary["precision"] == "32-true"
    assert summary["train_studies"] == 4 and summary["train_loss"] > 0 and not summary["resumed"]
    blob = torch.load(out, weights_only=False)
    assert blob["model_config"]["llm"]["name"] == "tiny" and blob["data_config"]["image_root"] is None
    assert json.loads(Path(f"{out}.json").read_text())["steps"] == 2
    assert (Path(summary["checkpoint_dir"]) / "last.ckpt").is_file()


class Interrupt(Exception):
    """Stands in for a killed job."""


class InterruptAfter(L.Callback):
    """Raises before the batch after `steps` (so the step-`steps` checkpoint was written)."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def on_train_batch_start(self, trainer: L.Trainer, *args: object) -> None:
        if trainer.global_step == self.steps:
            raise Interrupt


def test_resume_matches_uninterrupted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = write_toy_dataset(tmp_path / "ds", n_train=6)  # 3 batches per epoch: the interruption is mid-epoch
    full = run_train(ds, tmp_path / "full.pt", _cfg(tmp_path / "a", max_steps=4), "r")
    cfg = _cfg(tmp_path / "b", max_steps=4)

    def interrupted_trainer(c: TrainConfig, ckpt: Path) -> L.Trainer:
        trainer = build_trainer(c, ckpt)
        trainer.callbacks.insert(0, InterruptAfter(2))
        return trainer

    monkeypatch.setattr(train_mod, "build_trainer", interrupted_trainer)
    with pytest.raises(Interrupt):
        run_train(ds, tmp_path / "resumed.pt", cfg, "r")
    assert not (tmp_path / "resumed.pt").exists()
    monkeypatch.setattr(train_mod, "build_trainer", build_trainer)
    resumed = run_train(ds, tmp_path / "resumed.pt", cfg, "r")
    assert resumed["resumed"] and resumed["steps"] == full["steps"] == 4
    a = torch.load(tmp_path / "full.pt", weights_only=False)["state_dict"]
    b = torch.load(tmp_path / "resumed.pt", weights_only=False)["state_dict"]
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_cli_reports_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    rc = srrg_main(["train", "--dataset", str(ds), "--out", str(tmp_path / "m.pt"), "--config", '{"optim": {"lrr": 1}}'])
    assert rc == 2 and "lrr" in capsys.readouterr().err


def _cli_env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO / "src"))
    for key in [k for k in env if k.startswith("SLURM_")]:
        env.pop(key)
    return env


def _ddp_config(tmp_path: Path) -> str:
    raw = tiny_train_config(strategy="ddp", devices=2)
    raw["checkpoint_dir"] = str(tmp_path / "ckpt")
    return json.dumps(raw)


@pytest.mark.slow
def test_ddp_two_cpu_ranks_with_lightning_launcher(tmp_path: Path) -> None:
    ds = write_toy_dataset(tmp_path / "ds", n_train=8)
    out = tmp_path / "m.pt"
    cmd = [sys.executable, "-m", "srrg", "train", "--dataset", str(ds), "--out", str(out), "--config", _ddp_config(tmp_path)]
    proc = subprocess.run(cmd, env=_cli_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(Path(f"{out}.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 2


@pytest.mark.slurm
def test_ddp_two_ranks_under_srun(tmp_path: Path) -> None:
    if shutil.which("srun") is None:
        pytest.skip("srun not found (run scripts/setup_slurm.sh for the localhost SLURM cluster)")
    ds = write_toy_dataset(tmp_path / "ds", n_train=8)
    out = tmp_path / "m.pt"
    cmd = ["srun", "--ntasks=2", "--ntasks-per-node=2", "--job-name=srrg-ddp-test", sys.executable, "-m", "srrg",
           "train", "--dataset", str(ds), "--out", str(out), "--config", _ddp_config(tmp_path)]
    proc = subprocess.run(cmd, env=_cli_env(), capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(Path(f"{out}.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 2


@pytest.mark.slow
def test_smollm2_gguf_step_and_generation() -> None:
    pytest.importorskip("gguf")
    from srrg.model.config import EncoderConfig, ModelConfig
    from srrg.model.llm import smollm2_location
    from srrg.model.network import ReportGenerator

    try:
        smollm2_location()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    torch.manual_seed(0)
    enc = EncoderConfig(image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4})
    net = ReportGenerator(ModelConfig(encoder=enc, llm=LLMConfig(name="smollm2-135m"), max_target_tokens=32)).train()
    assert net.tokenizer.pad_token_id is not None and not net.stores_llm
    assert not any(k.startswith("llm.") for k in net.export_state_dict())
    loss = net.loss(torch.randn(1, 3, 32, 32), ['{"positive": [], "negative": ["pneumothorax"]}'])
    loss.backward()
    assert torch.isfinite(loss) and all(p.grad is None for p in net.llm.parameters())
    out = net.eval().generate(torch.randn(1, 3, 32, 32), num_beams=3, num_return_sequences=3, max_new_tokens=4)
    assert len(out[0]) == 3
