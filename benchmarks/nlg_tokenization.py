"""How much the NLG tokenization convention moves the numbers (docs/metrics.md, "Tokenization").

Scores the same IU X-ray pairs (the archive torchxrayvision ships) under each convention: the
reference is a report's findings + impression text; the hypothesis is (a) the sentence rendering of
srrg's structured extraction of that report (what a perfect Structured-First model would write) and
(b) the text of another, seeded-random report of the collection. METEOR is left out (Java, slow).

    .venv/bin/python benchmarks/nlg_tokenization.py [--pairs 500]
"""

from __future__ import annotations

import argparse
import random

from srrg.extract import extract_many
from srrg.metrics import evaluate
from srrg.report import StructuredReport, from_obj, render_sentences
from srrg.settings.metrics import TOKENIZATIONS
from srrg.sources.iu_xray import read_iu_xray

METRICS = ["bleu", "rouge_l", "cider"]
KEYS = ["bleu_1", "bleu_4", "rouge_l", "cider"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=500)
    args = parser.parse_args()
    studies = read_iu_xray()
    texts = [
        t for t in (" ".join(x for x in (s.get("findings"), s.get("impression")) if x) for s in studies) if t.strip()
    ]
    refs = texts[: args.pairs]
    rendered = [render_sentences(from_obj(r)[0] if r else StructuredReport()) for r in extract_many(refs)]
    rng = random.Random(0)
    others = [rng.choice(texts) for _ in refs]
    print(f"{len(refs)} IU X-ray reports; tokenization conventions side by side\n")
    print("| hypothesis | tokenization | " + " | ".join(KEYS) + " |\n|---|---|" + "---|" * len(KEYS))
    for label, hyps in (("rendered extraction", rendered), ("random other report", others)):
        for tok in TOKENIZATIONS:
            out = evaluate(refs, hyps, METRICS, options={m: {"tokenization": tok} for m in METRICS})
            print(f"| {label} | {tok} | " + " | ".join(f"{out[k]:.3f}" for k in KEYS) + " |")


if __name__ == "__main__":
    main()
