"""Round trip structured report -> SRRG text -> structured report on the IU X-ray reports of the
demo (the Open-i archive torchxrayvision ships, or ../shared/data's identical copy): every report is
extracted, rendered as SRRG organ-header text (srrg.srrg_text.render_srrg) and read back
(parse_srrg, no extractor: only the template), as extracted and with the locations normalized by
the rules as the demo's dataset holds them. Prints the number of reports and how many came back
with different findings (names, probabilities, levels, locations, negatives; order aside), with the
first few differences.

    .venv/bin/python benchmarks/srrg_round_trip.py [--archive PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from normalize_iu import default_archive  # noqa: E402

from srrg.extract import extract_many  # noqa: E402
from srrg.normalize.rules import rules_normalize  # noqa: E402
from srrg.normalize.table import apply_mapping  # noqa: E402
from srrg.report import StructuredReport, from_obj  # noqa: E402
from srrg.sources.iu_xray import read_iu_xray  # noqa: E402
from srrg.srrg_text import parse_srrg, render_srrg  # noqa: E402
from srrg.text.spelling import plain_spelling  # noqa: E402


def finding_set(report: StructuredReport) -> tuple[frozenset[tuple[object, ...]], frozenset[str]]:
    """What the round trip must keep: each positive's name, probability (None reads as stated),
    level and location, and the negative names; the order of findings is the headers' order."""
    return (
        frozenset((f.name, f.probability or 3, f.level, f.location) for f in report.positive),
        frozenset(report.negative),
    )


def normalized(reports: list[StructuredReport]) -> list[StructuredReport]:
    """The reports with their locations normalized by the rules (the demo's normalize stage)."""
    phrases = {f.location for r in reports for f in r.positive if f.location}
    mapping = {plain_spelling(p): rules_normalize(p) for p in phrases}
    return [apply_mapping(r, mapping) for r in reports]


def round_trip(reports: list[StructuredReport]) -> list[tuple[int, StructuredReport, StructuredReport, str]]:
    """(index, original, read back, status) of every report whose findings changed."""
    changed = []
    for i, report in enumerate(reports):
        back = parse_srrg(render_srrg(report))
        if finding_set(back.report) != finding_set(report) or back.status != "valid":
            changed.append((i, report, back.report, back.status))
    return changed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archive", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None, help="first N reports only")
    args = ap.parse_args()
    records = read_iu_xray(args.archive or default_archive())[: args.limit]
    texts = [" ".join(t for t in (r.get("findings"), r.get("impression")) if t) for r in records]
    t0 = time.perf_counter()
    reports = [from_obj(d)[0] for d in extract_many(texts, n_process=1)]
    t1 = time.perf_counter()
    changed = round_trip(reports)
    t2 = time.perf_counter()
    changed_normalized = round_trip(normalized(reports))
    n_findings = sum(len(r.positive) + len(r.negative) for r in reports)
    print(
        f"reports={len(reports)} findings={n_findings} changed_reports={len(changed)} "
        f"changed_reports_normalized={len(changed_normalized)} "
        f"extract_seconds={t1 - t0:.1f} round_trip_seconds={t2 - t1:.2f}"
    )
    for i, before, after, status in (changed + changed_normalized)[:5]:
        print(f"  report {records[i]['study_id']} ({status}): {before.to_json()} -> {after.to_json()}")


if __name__ == "__main__":
    main()
