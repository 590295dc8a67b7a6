"""Training step time of the demo's baseline run (transformer_json) by torch thread count.

Builds a small dataset from the IU X-ray reports with the real stages (ingest --limit, extract,
normalize, dataset; every study in train so that no validation pass lands between steps, phantom
images as the demo draws them), then runs `python -m srrg train` with the run's own train slice
from config.yaml for --steps optimizer steps under OMP_NUM_THREADS = 1 and 2 (what Snakemake sets
from the rule's threads), one job alone and two jobs at once (the demo trains several runs side by
side). Step times come from the run's metrics.csv (cumulative seconds per step); the script prints
median and p90 over the last --last steps per setting and the steps per second of the machine.

    .venv/bin/python benchmarks/train_step_time.py [--steps 40] [--last 30] [--studies 256]

`--part llm`: where a step of the frozen SmolLM2 run (smollm2_json: tiny Swin 64 px, SmolLM2-135M
from its GGUF, batch 2, targets of max_target_tokens 64 tokens) goes, and the step before and after
srrg computes the prefix once per batch from its cache and the output layer only where a target
token is predicted (srrg.model.network, docs/model.md "CPU step of the LLM run"). Both losses are
the same number; the script checks it, then times --steps alternating steps of each (forward,
backward, AdamW) on one thread, and of the documented option `model.encoder.token_pool: 2` (4x
fewer visual tokens: another model, same LLM), and prints medians, the top operators of one step
by torch's profiler, and the load average.

    .venv/bin/python benchmarks/train_step_time.py --part llm [--steps 5]

Numbers depend on what else the machine runs; print the load average with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
import yaml

from srrg.dataset import write_dataset
from srrg.settings.dataset import DatasetConfig

ROOT = Path(__file__).resolve().parents[1]


def srrg(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "srrg", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def wait(proc: subprocess.Popen) -> None:
    out, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"{' '.join(proc.args)} failed (exit {proc.returncode}):\n{out[-3000:]}")


def build_dataset(work: Path, studies: int) -> Path:
    """IU studies through ingest, extract and normalize; all of them in the train split."""
    ingest, extracted, normalized = work / "studies.parquet", work / "extracted.parquet", work / "normalized.parquet"
    wait(
        srrg(
            "ingest",
            "--config",
            json.dumps({"source": "iu_xray", "limit": studies}),
            "--out",
            str(ingest),
            "--no-progress",
        )
    )
    wait(srrg("extract", "--in", str(ingest), "--out", str(extracted), "--no-progress"))
    wait(
        srrg("normalize", "--in", str(extracted), "--out", str(normalized), "--phrases", str(work / "phrases.parquet"))
    )
    df = pl.read_parquet(normalized).with_columns(pl.lit("train").alias("split"))
    write_dataset(df, work / "dataset", DatasetConfig(), {}, progress=False)
    return work / "dataset"


def run_slice(name: str, steps: int) -> dict:
    """The named run's train slice of config.yaml with its overrides, for `steps` steps, no checkpoints kept."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    train = dict(config["train"])
    run = next(r for r in train.pop("runs") if r["name"] == name)
    merged = {**train, "model": {**train.get("model", {}), "arch": run["arch"], "target": run["target"]}}
    for key, value in run.get("overrides", {}).items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    merged["trainer"] = {
        **merged.get("trainer", {}),
        "max_steps": steps,
        "log_every_n_steps": 10,
        "val_check_interval": None,
        "checkpoint_every_n_steps": steps,
    }
    return merged


def step_times(metrics_csv: Path) -> list[float]:
    rows = pl.read_csv(metrics_csv).filter(pl.col("train_loss").is_not_null()).sort("step")
    seconds = rows["seconds"].to_list()
    return [b - a for a, b in zip(seconds, seconds[1:])]


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def measure(dataset: Path, work: Path, cfg: dict, threads: int, jobs: int, tag: str) -> tuple[list[list[float]], float]:
    """Step times of `jobs` concurrent train jobs with OMP_NUM_THREADS=threads, and the wall time."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    procs, outs = [], []
    start = time.perf_counter()
    for j in range(jobs):
        out = work / tag / f"job{j}" / "model.pt"
        run_cfg = {**cfg, "checkpoint_dir": str(work / tag / f"job{j}" / "ckpt")}
        procs.append(
            srrg(
                "train",
                "--dataset",
                str(dataset),
                "--out",
                str(out),
                "--run",
                f"{tag}-{j}",
                "--config",
                json.dumps(run_cfg),
                env=env,
            )
        )
        outs.append(out)
    for proc in procs:
        wait(proc)
    wall = time.perf_counter() - start
    return [step_times(out.parent / "metrics.csv") for out in outs], wall


def full_sequence_loss(net, images, targets):
    """The loss as srrg computed it before (the reference): the LLM's own loss over the whole
    sequence [prefix | image | suffix | target] with the prompt positions ignored."""
    import torch

    from srrg.model.network import IGNORE, pad_batch
    from srrg.model.prompt import target_token_ids

    img = net.image_tokens(images)
    seqs = target_token_ids(net.tokenizer, targets, net.cfg.max_target_tokens)
    ids, mask = pad_batch(seqs, net.tokenizer.pad_token_id, img.device)
    prompt = net._prompt_embeds(img)
    ones = torch.ones(prompt.shape[:2], dtype=torch.long)
    labels = torch.cat([torch.full_like(ones, IGNORE), ids.masked_fill(mask == 0, IGNORE)], dim=1)
    embeds = torch.cat([prompt, net.llm.get_input_embeddings()(ids)], dim=1)
    return net.llm(inputs_embeds=embeds, attention_mask=torch.cat([ones, mask], dim=1), labels=labels).loss


def llm_part(steps: int) -> None:
    """Before/after step times of the frozen SmolLM2 run's network (see the module docstring)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from srrg.config import from_dict
    from srrg.model.network import ReportGenerator
    from srrg.settings.model import ModelConfig

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = run_slice("smollm2_json", steps)
    net = ReportGenerator(from_dict(ModelConfig, cfg["model"], "model")).train()
    batch = cfg.get("data", {}).get("batch_size", 2)
    size = net.cfg.encoder.image_size
    images = torch.randn(batch, 3, size, size)
    unit = '{"positive": [{"name": "pleural effusion", "probability": 3, "level": "small"}], "negative": ["edema"]}'
    targets = [unit * 4] * batch  # cut at max_target_tokens: every target as long as the run allows
    net.eval()  # the equality check without the encoder's drop-path (random in training mode)
    with torch.no_grad():
        after, before = net.loss(images, targets), full_sequence_loss(net, images, targets)
    assert abs(float(after) - float(before)) < 1e-4, (float(after), float(before))
    net.train()
    # the documented option that changes the model: 2 x 2 pooled visual tokens, the same LLM
    pooled_cfg = {**cfg["model"], "encoder": {**cfg["model"].get("encoder", {}), "token_pool": 2}}
    pooled = ReportGenerator(from_dict(ModelConfig, pooled_cfg, "model"), tokenizer=net.tokenizer, llm=net.llm).train()
    ways = {
        "before (whole sequence)": (net, full_sequence_loss),
        "after (prefix cache, target logits)": (net, ReportGenerator.loss),
        "after + encoder.token_pool 2 (option: fewer visual tokens, another model)": (pooled, ReportGenerator.loss),
    }
    opts = {
        name: torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-4)
        for name, (m, _) in ways.items()
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(steps):
        for name, (model, loss_fn) in ways.items():
            start = time.perf_counter()
            loss_fn(model, images, targets).backward()
            opts[name].step()
            opts[name].zero_grad(set_to_none=True)
            times[name].append(time.perf_counter() - start)
    n_img = f"{net.image_tokens(images[:1]).shape[1]} (pooled {pooled.image_tokens(images[:1]).shape[1]})"
    print(
        f"smollm2_json step, batch {batch}: prefix {len(net.prompt.prefix_ids)} + image {n_img} + suffix "
        f"{len(net.prompt.suffix_ids)} + target {net.cfg.max_target_tokens} positions; "
        f"loss {float(after):.6f} both ways"
    )
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.2f} s over {steps} steps", flush=True)
    for name, (model, loss_fn) in ways.items():
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            loss_fn(model, images, targets).backward()
        total = sum(e.self_cpu_time_total for e in prof.key_averages())
        top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:4]
        shares = ", ".join(f"{e.key} {100 * e.self_cpu_time_total / total:.0f}%" for e in top)
        print(f"{name}: forward+backward {total / 1e6:.2f} s of operators; top: {shares}")
    print(f"load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("threads", "llm"), default="threads")
    parser.add_argument("--run", default="transformer_json", help="a run of config.yaml's train.runs")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--last", type=int, default=30, help="steps the statistics cover (the first ones warm up)")
    parser.add_argument("--studies", type=int, default=256)
    parser.add_argument("--dataset", type=Path, help="an existing dataset folder instead of building one")
    args = parser.parse_args()
    if args.part == "llm":
        llm_part(args.steps if args.steps != parser.get_default("steps") else 5)
        return
    with tempfile.TemporaryDirectory(prefix="srrg-train-steps-") as tmp:
        work = Path(tmp)
        dataset = args.dataset or build_dataset(work, args.studies)
        cfg = run_slice(args.run, args.steps)
        print(
            f"{args.run}: {args.steps} steps, batch {cfg['data'].get('batch_size')}, "
            f"statistics over the last {args.last} steps"
        )
        for threads, jobs in ((1, 1), (2, 1), (1, 2)):
            times, wall = measure(dataset, work, cfg, threads, jobs, f"t{threads}j{jobs}")
            tails = [t[-args.last :] for t in times]
            flat = [x for t in tails for x in t]
            rate = jobs * args.steps / wall
            print(
                f"threads={threads} jobs={jobs}: step median {statistics.median(flat):.2f} s, p90 {p90(flat):.2f} s "
                f"({len(flat)} steps); {rate:.2f} steps/s for the machine; wall {wall:.0f} s; "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
