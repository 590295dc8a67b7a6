"""Extraction accuracy on the IU X-ray collection against its expert MeSH major codes.

Prints per-finding and micro/macro precision/recall/F1 of positive findings over the findings the
MeSH mapping (srrg/vocab/iu_mesh.yaml) can produce, severity and location (side / zone) agreement
where the codes carry qualifiers, the unmapped headings, and the same numbers restricted to
findings stated with probability >= 2 and == 3 (the experts rarely code findings that a report
only calls questionable).

    .venv/bin/python benchmarks/extract_accuracy.py [--archive NLMCXR_reports.tgz]
"""

from __future__ import annotations

import argparse

from srrg.extract.evaluation import default_archive, evaluate, format_result, run_iu
from srrg.sources.iu_xray import read_reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=None)
    args = parser.parse_args()
    archive = args.archive or default_archive()
    result, seconds, n, predictions = run_iu(archive, keep_predictions=True)
    print(format_result(result))
    codes = [r.mesh_major for r in read_reports(archive)]
    for min_prob in (2, 3):
        kept = [
            {**p, "positive": [f for f in p["positive"] if (f.get("probability") or 3) >= min_prob]} for p in predictions
        ]
        mp, mr, mf = evaluate(codes, kept).micro()
        print(f"positives with probability >= {min_prob}: micro P={mp:.3f} R={mr:.3f} F1={mf:.3f}")
    print(f"{n} reports extracted in {seconds:.2f} s")


if __name__ == "__main__":
    main()
