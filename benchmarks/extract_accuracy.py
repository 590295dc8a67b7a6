"""Extraction accuracy on the IU X-ray collection against its expert MeSH major codes.

Prints, for the `dev` half (where the rules are tuned), the `heldout` half (only measured; the
split is fixed by report id, docs/extraction.md) and all reports: micro precision/recall/F1 of
positive findings over the findings the MeSH mapping (srrg/vocab/iu_mesh.yaml) can produce, for
every positive and for definite positives only (probability 3: the experts rarely code what a
report only calls possible). With --table the full per-finding table of all reports follows,
with severity/location agreement and error examples. Then, when the NIH 14-label gold of Open-i
reports is there (../shared/data/openi_nih14_dev or --gold-file), its micro P/R/F1 per half for
the definite and any readings (`srrg eval-extraction --gold openi14` has the per-label table).

    .venv/bin/python benchmarks/extract_accuracy.py [--archive NLMCXR_reports.tgz] [--table] [--gold-file CSV]
"""

from __future__ import annotations

import argparse

from srrg.extract.evaluation import HALVES, default_archive, evaluate, format_result, in_half, run_iu
from srrg.extract.openi14 import ANY, DEFINITE, SHARED_GOLD, run_openi14
from srrg.sources.iu_xray import read_reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", default=None)
    parser.add_argument("--table", action="store_true", help="also print the per-finding table of all reports")
    parser.add_argument("--gold-file", default=None, help="NIH 14-label gold CSV (default: the shared dev gold)")
    args = parser.parse_args()
    archive = args.archive or default_archive()
    ids_codes = [(r.study_id, r.mesh_major) for r in read_reports(archive)]
    for half in HALVES:
        result, seconds, n, predictions = run_iu(
            archive, half=half, keep_predictions=True, examples=2 if half == "all" else 0
        )
        codes = [c for sid, c in ids_codes if in_half(sid, half)]
        definite = [{**p, "positive": [f for f in p["positive"] if f.get("probability") == 3]} for p in predictions]
        mp, mr, mf = result.micro()
        dp, dr, df = evaluate(codes, definite).micro()
        print(
            f"{half:<8} {n:>5} reports: every positive P={mp:.3f} R={mr:.3f} F1={mf:.3f}; "
            f"definite (probability 3) P={dp:.3f} R={dr:.3f} F1={df:.3f}; macro F1 {result.macro()[2]:.3f}"
        )
        if half == "all" and args.table:
            print(format_result(result))
    gold = args.gold_file or (SHARED_GOLD if SHARED_GOLD.is_file() else None)
    if gold is None:
        print("openi14: no NIH 14-label gold (../shared/data/openi_nih14_dev absent, no --gold-file): not measured")
        return
    for half in HALVES:
        res, _, n = run_openi14(archive, gold, half=half)
        parts = []
        for mode in (DEFINITE, ANY):
            p, r, f = res.micro(mode)
            every = res.micro(mode, every_label=True)[2]
            parts.append(f"{mode} P={p:.3f} R={r:.3f} F1={f:.3f} (all 14 labels F1={every:.3f})")
        print(f"openi14 {half:<8} {n:>5} reports: " + "; ".join(parts))


if __name__ == "__main__":
    main()
