"""The extractor's negation detector on the physician-annotated NegEx/ConText test set.

Each row of rsAnnotations-1-120-random.txt gives a sentence, a condition in it and whether the
condition is Negated or Affirmed (2,375 conditions from 120 clinical reports of mixed types).
Every condition is asserted with srrg's ConText rules (srrg.extract.assertion); `negated` counts as
Negated, every other outcome (affirmed, hedged, hypothetical) as Affirmed, since the set marks
hedging and temporality separately. Prints accuracy, negation precision/recall/F1 and the
confusion table of gold label x srrg outcome.

    .venv/bin/python benchmarks/negex_eval.py [--file rsAnnotations-1-120-random.txt] [--errors 10]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from srrg.extract.assertion import AFFIRMED, HEDGED, HYPOTHETICAL, NEGATED, assert_target

DEFAULT = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "negex_context_testset" / "rsAnnotations-1-120-random.txt"
)
OUTCOMES = (NEGATED, HEDGED, HYPOTHETICAL, AFFIRMED)


def read_rows(path: Path) -> list[tuple[str, str, str]]:
    """(condition, sentence, gold) for every annotated row (the header and short lines are skipped)."""
    rows = []
    for line in path.read_text(encoding="latin-1").splitlines():
        cols = line.split("\t")
        if len(cols) > 4 and cols[4] in ("Negated", "Affirmed"):
            rows.append((cols[2].strip(), cols[3], cols[4]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--errors", type=int, default=10, help="print this many disagreements of each kind")
    args = parser.parse_args()
    if not args.file.is_file():
        print(f"{args.file} not found (the NegEx/ConText test set of ../shared/data)", file=sys.stderr)
        return 2
    rows = read_rows(args.file)
    table: Counter = Counter()
    missing = 0
    errors: dict[str, list[str]] = {"Negated": [], "Affirmed": []}
    for condition, sentence, gold in rows:
        outcome = assert_target(sentence, condition)
        if outcome is None:
            missing += 1
            outcome = AFFIRMED
        table[gold, outcome] += 1
        if (outcome == NEGATED) != (gold == "Negated") and len(errors[gold]) < args.errors:
            errors[gold].append(f"  gold {gold:<8} srrg {outcome:<12} [{condition}] {' '.join(sentence.split())[:160]}")
    n = sum(table.values())
    tp, fn = table["Negated", NEGATED], sum(table["Negated", o] for o in OUTCOMES if o != NEGATED)
    fp = table["Affirmed", NEGATED]
    correct = tp + sum(table["Affirmed", o] for o in OUTCOMES if o != NEGATED)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    print(
        f"NegEx/ConText test set: {n} conditions ({tp + fn} Negated, {n - tp - fn} Affirmed); "
        f"condition not found in its sentence: {missing}"
    )
    print(f"negated vs affirmed accuracy {correct / n:.3f}; negation P={p:.3f} R={r:.3f} F1={f:.3f}")
    print(f"{'gold/srrg':<12}" + "".join(f"{o:>14}" for o in OUTCOMES))
    for gold in ("Negated", "Affirmed"):
        print(f"{gold:<12}" + "".join(f"{table[gold, o]:>14}" for o in OUTCOMES))
    for gold in ("Negated", "Affirmed"):
        if errors[gold]:
            print(f"disagreements, gold {gold}:")
            print("\n".join(errors[gold]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
