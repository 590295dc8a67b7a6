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
from paths import REPO

import srrg.model.train as train_mod
from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.model.train import build_trainer, run_train
from srrg.model.training_log import duration, progress_line
from srrg.settings.model import FrozenLLMConfig, InferConfig, TrainConfig

torch.set_num_threads(1)


def _cfg(tmp: Path, **trainer: object) -> TrainConfig:
    raw = tiny_train_config(**trainer)
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    return stage_config(raw, TrainConfig, "train")


def test_two_step_fit_writes_model_and_summary(tmp_path: Path) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    out = tmp_path / "run" / "model.pt"
    summary = run_train(ds, out, _cfg(tmp_path), "r")
    assert summary["steps"] == 2 and summary["world_size"] == 1 and summary["precision"] == "32-true"
    assert summary["train_studies"] == 4 and summary["train_loss"] > 0 and not summary["resumed"]
    blob = torch.load(out, weights_only=False)
    assert blob["model_config"]["llm"]["name"] == "tiny" and blob["data_config"]["images"] == "phantom"
    assert summary["images"] == "phantom"  # the toy set records image ids only: auto -> phantom, said in the summary
    assert json.loads(Path(f"{out}.json").read_text())["steps"] == 2
    assert (Path(summary["checkpoint_dir"]) / "last.ckpt").is_file()
    metrics = (out.parent / "metrics.csv").read_text().splitlines()
    assert metrics[0] == "step,train_loss,finding_loss,val_loss,lr,seconds" and [
        r.split(",")[0] for r in metrics[1:]
    ] == ["1", "2"]
    assert (
        metrics[1].split(",")[3] == "" and float(metrics[2].split(",")[3]) == summary["val_loss"]
    )  # validation after step 2
    assert (out.parent / "loss.png").read_bytes()[:4] == b"\x89PNG"


def test_progress_line_is_plain_text() -> None:
    assert progress_line(40, 400, 1.23456, 4.9e-4, 2.0) == "step 40/400 loss 1.2346 lr 4.90e-04 2.00 it/s ETA 3m00s"
    assert duration(3725) == "1h02m" and duration(12) == "12s"


def test_baseline_uses_a_word_vocabulary_of_its_targets(tmp_path: Path) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    raw = tiny_train_config()
    raw["model"]["arch"], raw["checkpoint_dir"] = "baseline", str(tmp_path / "ckpt")
    run_train(ds, tmp_path / "m.pt", stage_config(raw, TrainConfig, "train"), "b")
    vocab = torch.load(tmp_path / "m.pt", weights_only=False)["vocab"]
    assert vocab[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"] and "pneumothorax" in vocab and len(vocab) < 100


def test_code_change_retrains_and_same_code_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun after a code edit must train again, not resume the finished checkpoint."""
    assert {"phantom.py", "train.py", "network.py", "report.py"} <= {p.name for p in train_mod.code_files()}
    source = tmp_path / "module.py"
    source.write_text("A = 1\n")
    monkeypatch.setattr(train_mod, "code_files", lambda: [source])
    ds = write_toy_dataset(tmp_path / "ds")
    first = run_train(ds, tmp_path / "a.pt", _cfg(tmp_path), "r")
    same = run_train(ds, tmp_path / "b.pt", _cfg(tmp_path), "r")
    assert same["resumed"] and same["checkpoint_dir"] == first["checkpoint_dir"]
    source.write_text("A = 2\n")
    changed = run_train(ds, tmp_path / "c.pt", _cfg(tmp_path), "r")
    assert not changed["resumed"] and changed["checkpoint_dir"] != first["checkpoint_dir"]
    assert changed["steps"] == 2 and changed["train_loss"] is not None


class Interrupt(Exception):
    """Stands in for a killed job."""


class InterruptAfter(L.Callback):
    """Raises before the batch after `steps` (so the step-`steps` checkpoint was written)."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def on_train_batch_start(self, trainer: L.Trainer, *args: object) -> None:
        if trainer.global_step == self.steps:
            raise Interrupt


class CountBatches(L.Callback):
    """The global step a fit starts from and the training batches it runs."""

    def __init__(self) -> None:
        self.start_step, self.batches = -1, 0

    def on_train_start(self, trainer: L.Trainer, *args: object) -> None:
        self.start_step = trainer.global_step

    def on_train_batch_end(self, *args: object) -> None:
        self.batches += 1


def test_resume_matches_uninterrupted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = write_toy_dataset(tmp_path / "ds", n_train=6)  # 3 batches per epoch: the interruption is mid-epoch
    full = run_train(ds, tmp_path / "full.pt", _cfg(tmp_path / "a", max_steps=4), "r")
    cfg = _cfg(tmp_path / "b", max_steps=4)

    def interrupted_trainer(c: TrainConfig, ckpt: Path, progress: object = None) -> L.Trainer:
        trainer = build_trainer(c, ckpt, progress)
        trainer.callbacks.insert(0, InterruptAfter(2))
        return trainer

    monkeypatch.setattr(train_mod, "build_trainer", interrupted_trainer)
    with pytest.raises(Interrupt):
        run_train(ds, tmp_path / "resumed.pt", cfg, "r")
    assert not (tmp_path / "resumed.pt").exists()
    counter = CountBatches()

    def counting_trainer(c: TrainConfig, ckpt: Path, progress: object = None) -> L.Trainer:
        trainer = build_trainer(c, ckpt, progress)
        trainer.callbacks.insert(0, counter)
        return trainer

    monkeypatch.setattr(train_mod, "build_trainer", counting_trainer)
    resumed = run_train(ds, tmp_path / "resumed.pt", cfg, "r")
    assert resumed["resumed"] and resumed["steps"] == full["steps"] == 4
    # the finished steps were skipped: the resumed process started at step 2 and trained 2 batches
    # (a fit with ckpt_path=None would start at 0 and see 4)
    assert counter.start_step == 2 and counter.batches == 2
    a = torch.load(tmp_path / "full.pt", weights_only=False)["state_dict"]
    b = torch.load(tmp_path / "resumed.pt", weights_only=False)["state_dict"]
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_cli_reports_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = write_toy_dataset(tmp_path / "ds")
    rc = srrg_main(
        ["train", "--dataset", str(ds), "--out", str(tmp_path / "m.pt"), "--config", '{"optim": {"lrr": 1}}']
    )
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
    cmd = [
        sys.executable,
        "-m",
        "srrg",
        "train",
        "--dataset",
        str(ds),
        "--out",
        str(out),
        "--config",
        _ddp_config(tmp_path),
    ]
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
    cmd = [
        "srun",
        "--ntasks=2",
        "--ntasks-per-node=2",
        "--job-name=srrg-ddp-test",
        sys.executable,
        "-m",
        "srrg",
        "train",
        "--dataset",
        str(ds),
        "--out",
        str(out),
        "--config",
        _ddp_config(tmp_path),
    ]
    proc = subprocess.run(cmd, env=_cli_env(), capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(Path(f"{out}.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 2


@pytest.mark.slow
def test_smollm2_gguf_step_and_generation() -> None:
    pytest.importorskip("gguf")
    from srrg.model.llm import smollm2_location
    from srrg.model.network import ReportGenerator
    from srrg.settings.model import EncoderConfig, ModelConfig

    try:
        smollm2_location()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    torch.manual_seed(0)
    enc = EncoderConfig(
        image_size=32, kwargs={"embed_dim": 16, "depths": [1, 1], "num_heads": [1, 2], "window_size": 4}
    )
    net = ReportGenerator(
        ModelConfig(encoder=enc, llm=FrozenLLMConfig(name="smollm2-135m"), max_target_tokens=32)
    ).train()
    assert net.tokenizer.pad_token_id is not None and not net.stores_llm
    assert not any(k.startswith("llm.") for k in net.export_state_dict())
    loss = net.loss(torch.randn(1, 3, 32, 32), ['{"positive": [], "negative": ["pneumothorax"]}'])
    loss.backward()
    assert torch.isfinite(loss) and all(p.grad is None for p in net.llm.parameters())
    out = net.eval().generate(
        torch.randn(1, 3, 32, 32), InferConfig(num_beams=3, num_return_sequences=3, max_new_tokens=4)
    )
    assert len(out[0]) == 3
