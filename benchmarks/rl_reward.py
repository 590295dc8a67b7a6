"""Reward and test S-Score against RL steps (issue 47): `srrg rl`'s objective on a trained run, two seeds.

Fine-tunes a finished run's model file (by default the demo's Transformer baseline) with the RL
settings given (default: the embedded default's RL run) and, every --every steps, decodes the first
--eval-studies test studies as the demo's infer rule does (config.yaml's infer section: beam search
with 3 beams on the first 200 test studies) and scores them with S-Score, as Table 1 does; prints
one row per evaluation: seed, step, mean training reward of the last --every steps, test S-Score,
parse rate, no-findings predictions (references: the count of reference reports without a positive
finding), CPU seconds of the RL steps so far (evaluations excluded). No checkpoints are kept.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/rl_reward.py --results results [--run transformer_json]
        [--steps 40] [--every 10] [--seeds 1 2] [--eval-studies 200] [--config '{"lr": 1e-4}']
    ... --groups 160 [--config '{"sampler": "sample", "group_size": 8, "temperature": 1}']
        (no training: what one step's groups hold; docs/model.md, "Reinforcement fine-tuning")
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import lightning as L
import torch

from srrg.config import stage_config
from srrg.dataset import read_split
from srrg.metrics import evaluate
from srrg.model.datamodule import ReportDataModule, ReportDataset, collate, reference_text
from srrg.model.file import load_model
from srrg.model.images import resolve_images
from srrg.model.rl import RLLog, RLModule, rewards, sample
from srrg.model.train import build_trainer
from srrg.report import REPAIRED, UNPARSEABLE, VALID, parse_report
from srrg.settings.model import InferConfig, TrainConfig
from srrg.settings.rl import RLConfig, rl_slice

DEMO_RL = "transformer_json_rl"  # config.yaml's RL run, whose settings are the default here


def study_batches(
    net: Any, data_cfg: Any, dataset: Path, n: int, split: str = "test"
) -> tuple[list[dict[str, Any]], list[str]]:
    """The first n studies of a split in batches of 16, and their reference reports."""
    rows = read_split(dataset, split).head(n).to_dicts()
    images = resolve_images(data_cfg.images, data_cfg.image_root, (r.get("image_paths") for r in rows))
    ds = ReportDataset(rows, net.cfg.target, images, data_cfg.image_root, net.cfg.encoder.image_size)
    batches = [collate([ds[j] for j in range(i, min(i + 16, len(ds)))]) for i in range(0, len(ds), 16)]
    return batches, [reference_text(r, net.cfg.target) for r in rows]


def test_scores(net: Any, batches: list[dict[str, Any]], refs: list[str], search: InferConfig) -> dict[str, float]:
    """The infer settings' decodes of the test studies: S-Score, parse rate, predictions without a
    positive finding."""
    net.eval()
    hyps = [c[0] for b in batches for c in net.generate(b["images"], search)]
    parsed = [parse_report(h) for h in hyps]
    return {
        "s_score": evaluate(refs, hyps, ["s_score"])["s_score"],
        "parsed": sum(status in (VALID, REPAIRED) for _, status in parsed) / len(hyps),
        "no_findings": sum(not report.positive for report, _ in parsed),
    }


class Probe(L.Callback):
    """Scores the test studies before the first step and every `every` steps."""

    def __init__(
        self, every: int, batches: list[dict[str, Any]], refs: list[str], search: InferConfig, log: RLLog, seed: int
    ) -> None:
        self.seed, self.probe_cpu, self.start = seed, 0.0, time.process_time()
        self.every, self.batches, self.refs, self.search, self.rl_log = every, batches, refs, search, log
        self.rows: list[dict[str, Any]] = []

    def probe(self, step: int, module: RLModule) -> None:
        start = time.process_time()
        with torch.no_grad():
            scores = test_scores(module.net, self.batches, self.refs, self.search)
        self.probe_cpu += time.process_time() - start
        recent = [r["reward_mean"] for r in self.rl_log.rows[-self.every :]] if step else []
        reward = sum(recent) / len(recent) if recent else float("nan")
        row = {"step": step, "reward": reward, **scores}
        self.rows.append(row)
        print(
            f"| {self.seed} | {step} | {reward:.4f} | {row['s_score']:.4f} | {row['parsed']:.3f} | "
            f"{row['no_findings']} | {time.process_time() - self.start - self.probe_cpu:.0f} |",
            flush=True,
        )

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.probe(0, pl_module)  # type: ignore[arg-type]

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if trainer.global_step % self.every == 0:
            self.probe(trainer.global_step, pl_module)  # type: ignore[arg-type]


def run_seed(args: argparse.Namespace, raw: dict[str, Any], search: InferConfig, seed: int) -> list[dict[str, Any]]:
    base = args.results / "runs" / args.run / "model.pt"
    with tempfile.TemporaryDirectory() as tmp:
        trainer_cfg = {**raw.get("trainer", {}), "max_steps": args.steps, "seed": seed, "accelerator": "cpu"}
        cfg = stage_config({**raw, "trainer": trainer_cfg, "checkpoint_dir": tmp}, RLConfig, "rl")
        L.seed_everything(seed, workers=True)
        net, data_cfg = load_model(base, torch.device("cpu"))
        batches, refs = study_batches(net, data_cfg, args.results / "dataset", args.eval_studies)
        data_cfg = replace(data_cfg, batch_size=cfg.batch_size, max_train_studies=cfg.max_studies, max_val_studies=1)
        data = ReportDataModule(args.results / "dataset", data_cfg, net.cfg.target, net.cfg.encoder.image_size, seed)
        log = RLLog(cfg.trainer.log_every_n_steps)
        trainer = build_trainer(TrainConfig(trainer=cfg.trainer), Path(tmp), log)
        probe = Probe(args.every, batches, refs, search, log, seed)
        trainer.callbacks.append(probe)
        trainer.fit(RLModule(net, cfg), datamodule=data)
    return probe.rows


def kind(text: str) -> str:
    """nf (no positive finding), pos, or unparseable."""
    report, status = parse_report(text)
    return "unparseable" if status == UNPARSEABLE else ("pos" if report.positive else "nf")


def kind_mean(groups_: list[tuple[str, list[float], list[str]]], normal_ref: bool, k: str) -> str:
    """Mean reward of the samples of kind k on studies with (normal_ref False) or without a
    positive reference finding."""
    xs = [x for ref, rs, ks in groups_ if (kind(ref) == "nf") == normal_ref for x, kk in zip(rs, ks) if kk == k]
    return f"{sum(xs) / len(xs):.3f}" if xs else "-"


def groups(args: argparse.Namespace, raw: dict[str, Any], search: InferConfig) -> None:
    """The groups one RL step draws (no update), on the first --groups training and the test
    studies: the beam search's and the groups' rewards, the groups with equal rewards (zero
    advantage), and the summed advantages of no-findings samples on studies with and without a
    positive reference finding (the push of the update towards the no-findings report)."""
    cfg = stage_config({**raw, "trainer": {"accelerator": "cpu"}}, RLConfig, "rl")
    net, data_cfg = load_model(args.results / "runs" / args.run / "model.pt", torch.device("cpu"))
    net.eval()
    g = cfg.group_size
    print(f"groups: sampler {cfg.sampler}, G {g}, temperature {cfg.temperature}, seed {args.seeds[0]}")
    print(
        "| split | studies | beam | group mean | best of group | equal-reward groups | positive samples of "
        "normal studies | no-findings push: normal | abnormal | unparseable | reward of no-findings / positive "
        "samples: normal studies | abnormal studies |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for split, n in (("train", args.groups), ("test", args.eval_studies)):
        torch.manual_seed(args.seeds[0])
        batches, refs = study_batches(net, data_cfg, args.results / "dataset", n, split)
        texts, beams = [], []
        with torch.no_grad():
            for b in batches:
                seqs = sample(net, net.image_tokens(b["images"]), cfg)
                texts += [t.strip() for t in net.tokenizer.batch_decode(seqs, skip_special_tokens=True)]
                beams += [c[0] for c in net.generate(b["images"], search)]
        r = rewards([ref for ref in refs for _ in range(g)], texts, cfg.reward)
        groups_ = [
            (ref, r[i * g : (i + 1) * g], [kind(t) for t in texts[i * g : (i + 1) * g]]) for i, ref in enumerate(refs)
        ]
        push = {True: 0.0, False: 0.0}
        for ref, rs, kinds in groups_:
            mean = sum(rs) / g
            push[kind(ref) == "nf"] += sum(x - mean for x, k in zip(rs, kinds) if k == "nf")
        normal = [k for ref, _, kinds in groups_ if kind(ref) == "nf" for k in kinds]

        print(
            f"| {split} | {len(refs)} | {sum(rewards(refs, beams, cfg.reward)) / len(refs):.4f} | "
            f"{sum(r) / len(r):.4f} | "
            f"{sum(max(rs) for _, rs, _ in groups_) / len(refs):.4f} | "
            f"{sum(max(rs) - min(rs) < 1e-9 for _, rs, _ in groups_)} | "
            f"{normal.count('pos') / max(len(normal), 1):.3f} | {push[True]:+.2f} | {push[False]:+.2f} | "
            f"{[kind(t) for t in texts].count('unparseable') / len(texts):.3f} | "
            f"{kind_mean(groups_, True, 'nf')} / {kind_mean(groups_, True, 'pos')} | "
            f"{kind_mean(groups_, False, 'nf')} / {kind_mean(groups_, False, 'pos')} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=Path("results"), type=Path, help="a results folder with the run")
    parser.add_argument("--run", default="transformer_json", help="the supervised run to start from")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--eval-studies", type=int, help="first N test studies; default: infer.max_studies")
    parser.add_argument("--config", default="{}", help="RL settings over the demo RL run's (inline JSON)")
    parser.add_argument(
        "--groups", type=int, help="instead of training: the groups drawn for the first N training studies"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    import yaml

    default = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    spec = next(r for r in default["train"]["runs"] if r["name"] == DEMO_RL)
    raw = {**rl_slice(default, spec["rl"]), **json.loads(args.config)}
    search = stage_config(default.get("infer") or {}, InferConfig, "infer")  # the demo's decoding
    args.eval_studies = args.eval_studies or search.max_studies
    print(f"RL settings: {json.dumps(raw, sort_keys=True)}")
    if args.groups:
        groups(args, raw, search)
        return
    print(f"test: the first {args.eval_studies} test studies, beam search with {search.num_beams} beams")
    print("| seed | step | train reward | test S-Score | parsed | no-findings | RL CPU s |")
    print("|---|---|---|---|---|---|---|")
    for seed in args.seeds:
        run_seed(args, raw, search, seed)  # prints a row per evaluation


if __name__ == "__main__":
    main()
