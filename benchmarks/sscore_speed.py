"""S-Score throughput: report pairs per second on one core (bar: >= 20,000 pairs/s on 1,000 pairs).

Pairs are realistic: references are the extractor's structured reports of real IU X-ray texts
(the archive shipped by torchxrayvision), hypotheses are seeded perturbations of them (findings
dropped or added, probability / severity / location changed, negatives swapped), as a trained
model's outputs differ from references. Timed end to end from JSON strings (parse + canonicalize +
score) and for the scoring of already parsed reports.

    .venv/bin/python benchmarks/sscore_speed.py [--pairs 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from srrg.extract import extract_many
from srrg.metrics import evaluate
from srrg.metrics.sscore import location_bleu, score_reports
from srrg.report import _parse_default, parse_report
from srrg.sources.iu_xray import read_iu_xray

LEVELS = ["mild", "small", "moderate", "large", "minimal", None]
LOCATIONS = ["in the left lower lobe", "in the right lung base", "at the bases bilaterally", "in the left upper zone", None]
EXTRA = ["atelectasis", "cardiomegaly", "pleural effusion", "nodule", "consolidation", "edema", "granuloma"]


def perturb(report: dict, rng: random.Random) -> dict:
    """A plausible model output: the reference with seeded errors of every kind S-Score measures."""
    positive = [dict(f) for f in report["positive"] if rng.random() > 0.2]
    for f in positive:
        if rng.random() < 0.3:
            f["probability"] = rng.choice([1, 2, 3])
        if rng.random() < 0.3:
            f["level"] = rng.choice(LEVELS)
        if rng.random() < 0.3:
            f["location"] = rng.choice(LOCATIONS)
    if rng.random() < 0.3:
        positive.append({"name": rng.choice(EXTRA), "probability": 3, "level": rng.choice(LEVELS), "location": rng.choice(LOCATIONS)})
    negative = [n for n in report["negative"] if rng.random() > 0.2]
    return {"positive": positive, "negative": negative}


def make_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    studies = read_iu_xray()  # the archive that torchxrayvision ships
    texts = [" ".join(t for t in (s.get("findings"), s.get("impression")) if t) for s in studies]
    refs = [r for r in extract_many(texts) if r["positive"] or r["negative"]]
    refs = [refs[i % len(refs)] for i in range(n)]
    return [json.dumps(r) for r in refs], [json.dumps(perturb(r, rng)) for r in refs]


def best_of(repeat: int, fn) -> tuple[float, float]:
    """Best wall-clock and best process-CPU seconds: on a shared machine the CPU time is what one
    dedicated core would take."""
    walls, cpus = [], []
    for _ in range(repeat):
        location_bleu.cache_clear()  # cold caches each round: no credit for earlier rounds
        _parse_default.cache_clear()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    refs, hyps = make_pairs(args.pairs)
    parse_report(refs[0])  # load the vocabulary outside the timed region
    n_pos = sum(len(json.loads(r)["positive"]) for r in refs) / len(refs)
    t_end_to_end = best_of(args.repeat, lambda: evaluate(refs, hyps, ["s_score"]))
    parsed_r = [parse_report(r)[0] for r in refs]
    parsed_h = [parse_report(h)[0] for h in hyps]
    t_score = best_of(args.repeat, lambda: score_reports(parsed_r, parsed_h))
    print(
        f"pairs: {len(refs)} (IU X-ray extractions + seeded perturbations; {n_pos:.2f} positive findings per "
        f"reference; {len(set(refs))} distinct references, {len(set(hyps))} distinct hypotheses)"
    )
    n = len(refs)
    print(f"S-Score from JSON strings (parse + canonicalize + score): {n / t_end_to_end[0]:,.0f} pairs/s wall, {n / t_end_to_end[1]:,.0f} pairs/s CPU")
    print(f"S-Score of parsed reports:                               {n / t_score[0]:,.0f} pairs/s wall, {n / t_score[1]:,.0f} pairs/s CPU")
    print(f"summary: {evaluate(refs, hyps, ['s_score'])}")


if __name__ == "__main__":
    main()
