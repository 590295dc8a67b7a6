"""Does a second view help the baseline? P-Score with model.context.views 1 and 2 (issue 49).

Trains the demo's Transformer baseline (config.yaml run `transformer_json`) with the real training
code (srrg.model.train.run_train) once per (views, seed): `views: 1` (the study's first view)
and `views: 2` (its first two views), frontal first, drawn per view by srrg.phantom.render_views:
in a study with a lateral, the frontal leaves out a pleural effusion up to `small`, which the
lateral shows. Both arms read the same frontal image, so they differ by the second view only. Both arms
keep the run's finding head (with two views it reads a study as its most telling view) and train
for `--steps` steps (the demo: 300).
Each model predicts the first `--studies` test studies and every test study whose reference has a
positive pleural effusion (srrg.model.infer.run_infer, the run's infer settings), and the script
prints P-Score (srrg.metrics `s_score`) on the effusion-bearing studies, on those of them with a
lateral among their views, and on all predicted studies, per seed, with the wall and CPU time and
the load average. The arms run in `--jobs` processes with one torch thread each.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/views_gain.py --dataset results/dataset \
        [--config config.yaml] [--steps 300] [--seeds 1 2] [--studies 200] [--jobs 2]

The dataset folder is only read (a demo's `results/dataset`); models, predictions and the
evaluation subset are written under a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import polars as pl
import torch
import yaml

from srrg.config import stage_config
from srrg.dataset import read_split
from srrg.metrics import evaluate
from srrg.model.infer import run_infer
from srrg.model.train import run_train
from srrg.phantom import is_lateral
from srrg.run_tables import scored
from srrg.settings.model import InferConfig, TrainConfig, deep_merge, run_slice

RUN = "transformer_json"
EFFUSION = "pleural effusion"


def arm_config(config: dict[str, Any], views: int, steps: int, seed: int, ckpt: Path) -> TrainConfig:
    """The demo run's train slice with the arm's views and seed, `steps` steps and
    no validation (the arms are compared on the test studies only)."""
    over = {
        "model": {"context": {"views": views}},
        "trainer": {"max_steps": steps, "seed": seed, "val_check_interval": None, "limit_val_batches": 0},
        "checkpoint_dir": str(ckpt),
    }
    return stage_config(deep_merge(run_slice(config, RUN, "train"), over), TrainConfig, "train")


def has_effusion(structured: str | None) -> bool:
    """Whether a dataset row's reference report has a positive pleural effusion."""
    report = json.loads(structured or "{}")
    return any(f.get("name") == EFFUSION for f in report.get("positive", []))


def evaluation_split(dataset: Path, studies: int, out: Path) -> dict[str, set[str]]:
    """Write out/test/ with the first `studies` test studies and every effusion-bearing one; return
    the study ids of each group (effusion, effusion with a lateral view, all)."""
    test = read_split(dataset, "test")
    effusion = test.filter(pl.col("structured").map_elements(has_effusion, return_dtype=pl.Boolean))
    picked = pl.concat([test.head(studies), effusion]).unique("study_id", keep="first").sort("study_id")
    (out / "test").mkdir(parents=True)
    picked.write_parquet(out / "test" / "part-00000.parquet")
    lateral = {
        r["study_id"]
        for r in effusion.iter_rows(named=True)
        if len(r["image_paths"] or []) > 1 and any(is_lateral(v) for v in r["image_views"] or [])
    }
    return {"effusion": set(effusion["study_id"]), "effusion_lateral": lateral, "all": set(picked["study_id"])}


def p_scores(predictions: Path, groups: dict[str, set[str]]) -> dict[str, float]:
    """P-Score of the scored predictions of each group of studies."""
    preds = scored(pl.read_parquet(predictions))
    out = {}
    for name, ids in groups.items():
        rows = preds.filter(pl.col("study_id").is_in(sorted(ids)))
        refs, hyps = rows["reference"].to_list(), rows["report"].to_list()
        out[name] = evaluate(refs, hyps, ["s_score"])["p_score"] if refs else float("nan")
        out[f"n_{name}"] = len(refs)
    return out


def cpu_seconds() -> float:
    """User and system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_arm(
    config: dict[str, Any], dataset: Path, evalset: Path, groups: dict, views: int, seed: int, steps: int, work: Path
) -> dict[str, Any]:
    """Train one arm (one torch thread), predict the evaluation studies, score them."""
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    start, used = time.perf_counter(), cpu_seconds()
    cfg = arm_config(config, views, steps, seed, work / "ckpt")
    summary = run_train(dataset, work / "model.pt", cfg, f"views{views}")
    trained = time.perf_counter()
    infer = stage_config(deep_merge(run_slice(config, RUN, "infer"), {"max_studies": None}), InferConfig, "infer")
    run_infer(work / "model.pt", evalset, work / "predictions.parquet", None, infer)
    scores = p_scores(work / "predictions.parquet", groups)
    return {
        "views": views,
        "seed": seed,
        "steps": summary["steps"],
        "train_loss": summary["train_loss"],
        **scores,
        "train_s": trained - start,
        "infer_s": time.perf_counter() - trained,
        "cpu_s": cpu_seconds() - used,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="results/dataset", type=Path, help="a demo dataset folder (read only)")
    parser.add_argument("--config", default="config.yaml", type=Path)
    parser.add_argument("--steps", default=300, type=int)
    parser.add_argument("--seeds", default=[1, 2], type=int, nargs="+")
    parser.add_argument("--studies", default=200, type=int, help="the first test studies predicted (besides effusion)")
    parser.add_argument("--jobs", default=2, type=int)
    args = parser.parse_args()
    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    start = time.perf_counter()
    arms = [(views, seed) for seed in args.seeds for views in (1, 2)]
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(args.jobs, get_context("spawn")) as pool:
        groups = evaluation_split(args.dataset, args.studies, Path(tmp) / "eval")
        print(
            f"{RUN}, {args.steps} steps; predicted {len(groups['all'])} test studies, "
            f"{len(groups['effusion'])} effusion-bearing ({len(groups['effusion_lateral'])} with a lateral view)",
            flush=True,
        )
        jobs = [
            pool.submit(
                run_arm, config, args.dataset, Path(tmp) / "eval", groups, v, s, args.steps, Path(tmp) / f"{v}-{s}"
            )
            for v, s in arms
        ]
        rows = [job.result() for job in jobs]
    print("\n| views | seed | steps | train loss | P-Score effusion (n) | P-Score effusion + lateral (n) | "
          "P-Score all (n) | train s | infer s | CPU s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['views']} | {r['seed']} | {r['steps']} | {r['train_loss']:.3f} | {r['effusion']:.3f} "
            f"({r['n_effusion']}) | {r['effusion_lateral']:.3f} ({r['n_effusion_lateral']}) | {r['all']:.3f} "
            f"({r['n_all']}) | {r['train_s']:.0f} | {r['infer_s']:.0f} | {r['cpu_s']:.0f} |"
        )
    by = {(r["views"], r["seed"]): r for r in rows}
    wins = [by[(2, s)]["effusion"] > by[(1, s)]["effusion"] for s in args.seeds]
    print(f"views 2 beats views 1 on effusion P-Score: {sum(wins)} of {len(wins)} seeds")
    cpu = sum(resource.getrusage(who).ru_utime for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"wall {time.perf_counter() - start:.0f} s, CPU {cpu:.0f} s (user), load average {load}")


if __name__ == "__main__":
    main()
