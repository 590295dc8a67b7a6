"""Reinforcement fine-tuning (srrg.model.rl): the objective on hand-computed groups, rewards from
the metric registry, a short run on a tiny model, and resuming after SIGTERM."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from model_fixtures import sigterm_mid_run, tiny_generator, tiny_train_config, write_toy_dataset

import srrg.model.rl as rl_mod
from srrg.config import stage_config
from srrg.model.rl import advantages, kl_estimate, mixed_loss, policy_loss, reward_signature, rewards, sequence_logprobs
from srrg.model.train import run_train
from srrg.report import Finding, StructuredReport
from srrg.settings.fields import SettingsError, build
from srrg.settings.model import TrainConfig
from srrg.settings.rl import RewardTerm, RLConfig

torch.set_num_threads(1)


def test_group_advantages_by_hand() -> None:
    """Catches a baseline taken over the batch instead of the group, a biased/unbiased std mix-up
    and a wrong sign: rewards (1, 0, 0.5, 0.5) have mean 0.5 and population std sqrt(0.125)."""
    r = torch.tensor([[1.0, 0.0, 0.5, 0.5], [2.0, 2.0, 2.0, 2.0]])
    assert advantages(r).tolist() == [[0.5, -0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    scaled = advantages(r, scale_by_std=True)
    assert scaled[0, 0].item() == pytest.approx(0.5 / math.sqrt(0.125), rel=1e-4)
    assert scaled[1].tolist() == [0.0, 0.0, 0.0, 0.0]  # equal rewards: no signal, not NaN
    greedy = advantages(r, baseline=torch.tensor([0.25, 3.0]))  # self-critical: reward - greedy reward
    assert greedy.tolist() == [[0.75, -0.25, 0.25, 0.25], [-1.0, -1.0, -1.0, -1.0]]


def test_policy_loss_by_hand() -> None:
    """Catches a per-report mean (which favours short reports), padding counted, or the KL term
    entering with the wrong sign: two sequences of 2 and 1 tokens (the second padded)."""
    logp = torch.tensor([[-1.0, -3.0], [-2.0, 0.0]])
    mask = torch.tensor([[1, 1], [1, 0]])
    adv = torch.tensor([1.0, -0.5])
    loss, kl = policy_loss(logp, None, mask, adv, kl_coef=0.3)
    # tokens: -1 * -1 = 1, -1 * -3 = 3, 0.5 * -2 = -1; their mean over the 3 tokens = 1
    assert loss.item() == pytest.approx(1.0) and kl.item() == 0.0
    ref = torch.tensor([[-1.0, -2.0], [-2.0, 5.0]])  # the padded position's ref value must not count
    loss, kl = policy_loss(logp, ref, mask, adv, kl_coef=0.3)
    k = math.exp(1) - 1 - 1  # token 2 of seq 1: d = log pi_ref - log pi = 1
    assert kl.item() == pytest.approx(k / 3)
    assert loss.item() == pytest.approx(1.0 + 0.3 * k / 3)


def test_mixed_objective_by_hand() -> None:
    """Catches the weights swapped (w on RL instead of CE) or the CE term added at ce_weight 0:
    RL loss 2, CE 4, w = 0.25 gives 0.75 * 2 + 0.25 * 4 = 2.5; w = 0 leaves the RL loss alone."""
    rl, ce = torch.tensor(2.0), torch.tensor(4.0)
    assert mixed_loss(rl, ce, 0.25).item() == pytest.approx(2.5)
    assert mixed_loss(rl, ce, 0.0).item() == 2.0
    assert mixed_loss(rl, None, 0.0).item() == 2.0
    assert mixed_loss(rl, ce, 1.0).item() == 4.0


def test_kl_is_zero_for_the_reference_model_itself() -> None:
    """Catches a KL estimate that is not zero at pi = pi_ref (e.g. the k1 estimator's sign noise, or
    the reference computed with dropout): the starting model scored against its own copy."""
    net = tiny_generator(arch="baseline", char_tokenizer=True)
    module = rl_mod.RLModule(net, RLConfig())
    module.train()
    images = torch.randn(2, 3, 32, 32)
    seqs = [[5, 6, 7, net.tokenizer.eos_token_id], [8, net.tokenizer.eos_token_id]]
    img = net.image_tokens(images)
    logp, mask = sequence_logprobs(net, img, seqs)
    ref_logp, _ = sequence_logprobs(module.ref, module.ref.image_tokens(images), seqs)
    assert torch.equal(logp, ref_logp)
    assert kl_estimate(logp, ref_logp).abs().max().item() == 0.0
    _, kl = policy_loss(logp, ref_logp, mask, torch.ones(2), kl_coef=1.0)
    assert kl.item() == 0.0


REF = StructuredReport((Finding("pleural effusion", 3, "small", "in the right costophrenic angle"),), ("pneumothorax",))


def test_reward_mix_of_two_metrics() -> None:
    """Catches a mix that drops a term or its weight: 0.5 x S-Score + 2 x BLEU-1 equals the two
    metrics' own per-report values (score_all) weighted and summed."""
    from srrg.metrics.base import score_all

    refs = [REF.to_json(), REF.to_json()]
    hyps = [REF.to_json(), StructuredReport((), ("pneumothorax",)).to_json()]
    terms = (
        RewardTerm(metric="s_score", weight=0.5),
        RewardTerm(metric="bleu", key="bleu_1", weight=2.0),
    )
    got = rewards(refs, hyps, terms)
    s = score_all(refs, hyps, ["s_score"]).per_report["s_score"]
    b = score_all(refs, hyps, ["bleu"]).per_report["bleu_1"]
    assert got == pytest.approx([0.5 * s[i] + 2.0 * b[i] for i in range(2)])
    assert got[0] > got[1] and s[0] == pytest.approx(1.0)
    sig = reward_signature(terms)
    assert sig.startswith("0.5 x s_score") and "2 x bleu" in sig


def test_reward_settings_refuse_wrong_options() -> None:
    """Catches a reward whose metric options are only checked once a job runs."""
    with pytest.raises(SettingsError, match="d_over"):
        build(RLConfig, {"reward": [{"metric": "s_score", "options": {"d_over": "nowhere"}}]}, "rl")
    with pytest.raises(SettingsError):
        build(RLConfig, {"reward": [{"metric": "no_such_metric"}]}, "rl")
    with pytest.raises(SettingsError):
        build(RLConfig, {"group_size": 1}, "rl")


def _base_model(tmp: Path, ds: Path) -> Path:
    """A tiny word-vocabulary Transformer baseline trained for 2 steps on the toy set."""
    raw = tiny_train_config(max_steps=2)
    raw["model"].update(arch="baseline")
    raw["checkpoint_dir"] = str(tmp / "ckpt")
    out = tmp / "base" / "model.pt"
    run_train(ds, out, stage_config(raw, TrainConfig, "train"), "base")
    return out


def _rl_cfg(tmp: Path, **over: object) -> RLConfig:
    raw = {
        "group_size": 4,
        "batch_size": 2,
        "lr": 3e-3,
        "kl_coef": 0.0,
        "max_new_tokens": 24,
        "checkpoint_dir": str(tmp / "rl-ckpt"),
        "trainer": {"max_steps": 30, "accelerator": "cpu", "devices": 1, "log_every_n_steps": 10},
        **over,
    }
    return stage_config(raw, RLConfig, "rl")


@pytest.mark.slow
def test_toy_reward_rises_on_a_tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches a sign error or a loss that does not reach the sampled tokens: with a toy reward
    (shorter reports score higher) the mean reward of the last steps beats the first steps'."""
    ds = write_toy_dataset(tmp_path / "ds", n_train=4)
    base = _base_model(tmp_path, ds)
    monkeypatch.setattr(rl_mod, "rewards", lambda refs, hyps, terms: [-len(h.split()) / 10 for h in hyps])
    out = tmp_path / "rl" / "model.pt"
    summary = rl_mod.run_rl(ds, base, out, _rl_cfg(tmp_path), "toy")
    rows = (out.parent / "metrics.csv").read_text().splitlines()
    assert rows[0] == "step,loss,reward_mean,reward_std,kl,unparseable,lr,seconds" and len(rows) == 31
    means = [float(r.split(",")[2]) for r in rows[1:]]
    assert sum(means[-5:]) / 5 > sum(means[:5]) / 5 + 0.2, means
    blob = torch.load(out, weights_only=False)
    assert blob["summary"]["rl"]["reward_signature"].startswith("s_score") and summary["steps"] == 30
    assert (out.parent / "reward.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_one_rl_step_with_the_real_reward(tmp_path: Path) -> None:
    """Catches a reward that cannot read the samples (S-Score of the decoded JSON), a KL that is not
    0 on the first step, an output that `srrg infer` cannot load, and a beam group (sampler: beam)
    that the step or the summary does not carry."""
    from srrg.model.file import load_model

    ds = write_toy_dataset(tmp_path / "ds", n_train=4)
    base = _base_model(tmp_path, ds)
    out = tmp_path / "rl" / "model.pt"
    cfg = _rl_cfg(
        tmp_path, kl_coef=0.1, baseline="greedy", sampler="beam", trainer={"max_steps": 1, "accelerator": "cpu"}
    )
    summary = rl_mod.run_rl(ds, base, out, cfg, "one")
    assert summary["steps"] == 1 and 0.0 <= summary["reward_first"] <= 1.0 and summary["kl_last"] == 0.0
    assert summary["rl"]["sampler"] == "beam"
    net, _ = load_model(out, torch.device("cpu"))
    assert net.cfg.arch == "baseline"


def _rl_cmd(ds: Path, base: Path, out: Path, ckpt: Path, steps: int) -> list[str]:
    raw = {
        "group_size": 2,
        "batch_size": 2,
        "lr": 1e-3,
        "kl_coef": 0.1,
        "max_new_tokens": 16,
        "checkpoint_dir": str(ckpt),
        "trainer": {
            "max_steps": steps,
            "accelerator": "cpu",
            "devices": 1,
            "log_every_n_steps": 1,
            "checkpoint_every_n_steps": 1000,
        },
    }
    return [
        sys.executable,
        "-m",
        "srrg",
        "rl",
        "--dataset",
        str(ds),
        "--model",
        str(base),
        "--out",
        str(out),
        "--config",
        json.dumps(raw),
    ]


@pytest.mark.slow
def test_sigterm_mid_run_resumes_to_the_same_weights(tmp_path: Path) -> None:
    """Fails if SIGTERM lost the step (no checkpoint, exit 0), or if the resumed run's sampling or
    data order differs from an uninterrupted run's (its weights would differ)."""
    steps = 12
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    ds = write_toy_dataset(tmp_path / "ds", n_train=6)
    base = _base_model(tmp_path, ds)
    out, ckpt = tmp_path / "run" / "m.pt", tmp_path / "ckpt-rl"
    sigterm_mid_run(_rl_cmd(ds, base, out, ckpt, steps), env)
    assert not out.exists() and list(ckpt.glob("*/*/last.ckpt"))
    rerun = subprocess.run(_rl_cmd(ds, base, out, ckpt, steps), env=env, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert json.loads(Path(f"{out}.json").read_text())["resumed"]
    assert [int(r.split(",")[0]) for r in (out.parent / "metrics.csv").read_text().splitlines()[1:]] == list(
        range(1, steps + 1)
    )
    ref = tmp_path / "ref" / "m.pt"
    full = subprocess.run(
        _rl_cmd(ds, base, ref, tmp_path / "ckpt-ref", steps), env=env, capture_output=True, text=True, timeout=600
    )
    assert full.returncode == 0, full.stderr[-3000:]
    a = torch.load(ref, weights_only=False)["state_dict"]
    b = torch.load(out, weights_only=False)["state_dict"]
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_beam_sampler_draws_the_decoders_best_beams() -> None:
    """Catches a beam group that is not inference's beam search (another width, sampling left on,
    beams in another order): with sampler beam the G sequences of a study are the G best
    candidates of a G-wide beam search by ReportGenerator.generate, best first."""
    from srrg.settings.model import InferConfig

    net = tiny_generator(arch="baseline", char_tokenizer=True)
    images = torch.randn(2, 3, 32, 32)
    cfg = RLConfig(group_size=3, sampler="beam", max_new_tokens=12)
    seqs = rl_mod.sample(net, net.image_tokens(images), cfg)
    texts = [t.strip() for t in net.tokenizer.batch_decode(seqs, skip_special_tokens=True)]
    beams = net.generate(images, InferConfig(num_beams=3, num_return_sequences=3, max_new_tokens=12))
    assert texts == [t for study in beams for t in study]
    assert rl_mod.group_search(cfg) == {"do_sample": False, "num_beams": 3}
    assert rl_mod.group_search(RLConfig(temperature=0.5))["do_sample"] is True
