"""The data half (ingest -> extract -> normalize -> dataset shards -> manifest -> stats) at
MIMIC-CXR scale, on a synthetic collection in the published MIMIC-CXR layout.

The collection is built from the IU X-ray reports (the archive torchxrayvision ships): N studies
of ~3.5 per patient, each report a MIMIC-style free text (FINAL REPORT banner, wrapped lines,
"___" for de-identified words, FINDINGS / IMPRESSION headers, sometimes COMPARISON / INDICATION,
sometimes no findings section). As in MIMIC-CXR, most sections are distinct while their sentences
are common ones: each section recombines an IU report's sentences with sentences of other reports,
sometimes a measured finding at a random size and place, laterality flipped, order shuffled
(recombined()); the run prints the distinct share of findings and impressions after whitespace
folding (at 227,835: 73 % and 63 %; MIMIC-CXR: 142,891 distinct findings of 227,835). The reports are written as
the official mimic-cxr-reports.zip (files/pXX/pXXXXXXXX/sXXXXXXXX.txt) or, with --layout tree, as
its unzipped folder, plus mimic-cxr-2.0.0-split.csv.gz and mimic-cxr-2.0.0-metadata.csv.gz with
their published columns (docs/inputs.md). Each step then runs as the workflow's rule runs it (`python -m srrg <rule>`,
the shard jobs `--cores` at a time, ingest and extract with `--n-process --cores`), and the script prints
the load average, wall time per rule, the total, the peak RSS (largest single process, and the largest sum over the
processes running at one moment) and the row accounting of every step.

    .venv/bin/python benchmarks/data_half_scale.py [--n 227835] [--cores 2] [--layout zip|tree] [--work DIR] [--keep]

A --work folder keeps the collection (built.json names it), so a second run there with the same
--n and --layout skips the build.

Keep it out of CI: at full N it takes minutes (a tiny N runs in tests/dataset/test_data_half_scale.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from srrg.extract.evaluation import default_archive
from srrg.sources.iu_xray import read_reports

STUDIES_PER_PATIENT = 3.5  # MIMIC-CXR 2.0.0: 227,835 studies of 65,379 patients
SPLIT_SHARES = (("train", 0.978), ("validate", 0.008), ("test", 0.014))  # of patients, as in the official split
VIEWS = ("PA", "LATERAL", "AP", "LL")
BUILT = "built.json"  # what build_collection wrote (n, seed, layout, paths), so a kept --work folder is reused
GENERATOR = 2  # version of the report generator: a collection of an older one is built again
LAYOUTS = ("zip", "tree")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LETTER = re.compile(r"[A-Za-z]")
_SIDE = re.compile(r"\b(?:[Ll]eft|[Rr]ight)\b")
_SWAP = {"left": "right", "right": "left", "Left": "Right", "Right": "Left"}
_SIZED = (
    "There is a {n} mm nodule in the {side} {zone}.",
    "A {n} cm opacity projects over the {side} {zone}.",
    "{n} mm calcified granuloma in the {side} {zone}.",
    "Small {side} pleural effusion measuring {n} cm.",
)
_ZONES = ("upper lobe", "lower lobe", "mid lung", "lung base", "apex", "hilum")
# chances that recombined() swaps a sentence / adds one; at 227,835 studies they make 73 % of the
# findings and 63 % of the impressions distinct after whitespace folding (MIMIC-CXR: 142,891 distinct
# findings of 227,835)
FINDINGS_VARIATION, IMPRESSION_VARIATION = (0.12, 0.3), (0.15, 0.75)


def _sentences(text: str) -> list[str]:
    """A report section as sentences, IU's "XXXX" as MIMIC's "___", list numbers ("1.") dropped."""
    return [s for s in _SENTENCE.split(text.replace("XXXX", "___").strip()) if _LETTER.search(s)]


def _sized(rng: random.Random) -> str:
    """A measured finding at a random size and place: MIMIC reports carry many of them."""
    size = str(rng.randint(2, 30)) if rng.random() < 0.5 else f"{rng.randint(1, 4)}.{rng.randint(1, 9)}"
    return rng.choice(_SIZED).format(n=size, side=rng.choice(("left", "right")), zone=rng.choice(_ZONES))


def recombined(base: list[str], pool: list[str], rng: random.Random, p_replace: float, p_add: float) -> list[str]:
    """A section made distinct the way MIMIC's are while its sentences stay common ones: some of the
    base report's sentences swapped for or joined by sentences of other reports, sometimes a measured
    finding, laterality flipped in some sentences, the order sometimes shuffled."""
    out = [rng.choice(pool) if rng.random() < p_replace else s for s in base]
    if rng.random() < p_add:
        out.insert(rng.randint(0, len(out)), rng.choice(pool))
    if rng.random() < 0.08:
        out.insert(rng.randint(0, len(out)), _sized(rng))
    out = [_SIDE.sub(lambda m: _SWAP[m.group()], s) if rng.random() < 0.3 else s for s in out]
    if len(out) > 2 and rng.random() < 0.3:
        rng.shuffle(out)
    return out


def mimic_text(findings: list[str] | None, impression: list[str] | None, rng: random.Random) -> str:
    """A MIMIC-style free-text report of the given section sentences (FINAL REPORT banner, wrapped
    lines, optional INDICATION / COMPARISON, header spacing varied)."""

    def body(sentences: list[str]) -> str:
        width = rng.randint(60, 78)
        lines, line = [], ""
        for word in " ".join(sentences).split():
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        return "\n ".join(lines)

    parts = ["                                 FINAL REPORT", " EXAMINATION:  CHEST (PA AND LAT)", ""]
    if rng.random() < 0.5:
        parts += [" INDICATION:  ___ with shortness of breath.", ""]
    if rng.random() < 0.4:
        parts += [" COMPARISON:  ___.", ""]
    sep = "\n \n " if rng.random() < 0.5 else "  "
    if findings:
        parts += [f" FINDINGS:{sep}{body(findings)}", ""]
    if impression:
        parts += [f" IMPRESSION:{sep}{body(impression)}", ""]
    return "\n".join(parts) + "\n"


def patient_split(patient: int) -> str:
    """The official split's shares, drawn per patient (a patient never spans two splits)."""
    share, acc = random.Random(patient).random(), 0.0
    for name, frac in SPLIT_SHARES:
        acc += frac
        if share < acc:
            return name
    return SPLIT_SHARES[-1][0]


def _gz_csv(path: Path, header: str, rows: list[str]) -> None:
    path.write_bytes(gzip.compress(("\n".join([header, *rows]) + "\n").encode("utf-8"), compresslevel=1, mtime=0))


def build_collection(root: Path, n: int, seed: int = 0, layout: str = "zip") -> dict[str, str]:
    """Write the synthetic MIMIC-CXR files of n studies under root, the reports as the official zip
    or (layout "tree") as the unzipped files/pXX/... folder; returns the ingest.mimic_cxr slice."""
    records = [r for r in read_reports(default_archive()) if r.findings or r.impression]
    findings = [_sentences(r.findings) if r.findings else [] for r in records]
    impressions = [_sentences(r.impression) if r.impression else [] for r in records]
    finding_pool = [s for ss in findings for s in ss]
    impression_pool = [s for ss in impressions for s in ss]
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    n_patients = max(1, round(n / STUDIES_PER_PATIENT))
    split_rows, meta_rows = [], []
    zip_path = root / "mimic-cxr-reports.zip"
    zf = zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) if layout == "zip" else None
    try:
        for i in range(n):
            patient = i * n_patients // n
            subject = str(10_000_000 + patient * (9_999_999 // n_patients))
            study = str(50_000_000 + i * (49_999_999 // max(n, 1)))
            split = patient_split(patient)
            base = i % len(records)
            text = mimic_text(
                recombined(findings[base], finding_pool, rng, *FINDINGS_VARIATION) if rng.random() > 0.1 else None,
                recombined(impressions[base], impression_pool, rng, *IMPRESSION_VARIATION)
                if impressions[base]
                else None,
                rng,
            )
            name = f"files/p{subject[:2]}/p{subject}/s{study}.txt"
            if zf is not None:
                zf.writestr(name, text)
            else:
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            for k in range(rng.choice((1, 2, 2, 3))):
                dicom = f"{rng.getrandbits(32):08x}-{rng.getrandbits(32):08x}-{rng.getrandbits(32):08x}-{i:08x}-{k:08x}"
                view = VIEWS[k % len(VIEWS)] if k else rng.choice(("PA", "AP"))
                split_rows.append(f"{dicom},{study},{subject},{split}")
                meta_rows.append(f"{dicom},{subject},{study},CHEST ({view}),{view},3056,2544,21800101,120000.000")
    finally:
        if zf is not None:
            zf.close()
    split_csv, meta_csv = root / "mimic-cxr-2.0.0-split.csv.gz", root / "mimic-cxr-2.0.0-metadata.csv.gz"
    _gz_csv(split_csv, "dicom_id,study_id,subject_id,split", split_rows)
    _gz_csv(
        meta_csv,
        "dicom_id,subject_id,study_id,PerformedProcedureStepDescription,ViewPosition,Rows,Columns,StudyDate,StudyTime",
        meta_rows,
    )
    reports = str(zip_path) if layout == "zip" else str(root)
    paths = {"reports": reports, "split_csv": str(split_csv), "metadata_csv": str(meta_csv), "image_root": None}
    built = {"n": n, "seed": seed, "layout": layout, "generator": GENERATOR, "paths": paths}
    (root / BUILT).write_text(json.dumps(built))  # written last: the build finished
    return paths


def built_collection(root: Path, n: int, seed: int = 0, layout: str = "zip") -> dict[str, str] | None:
    """The ingest.mimic_cxr slice of a collection build_collection finished under root for the same
    n, seed, layout and generator (a kept --work folder), else None."""
    try:
        built = json.loads((root / BUILT).read_text())
    except (OSError, ValueError):
        return None
    wanted = (n, seed, layout, GENERATOR)
    return (
        built["paths"]
        if (built.get("n"), built.get("seed"), built.get("layout"), built.get("generator")) == wanted
        else None
    )


def distinct_shares(studies: Path) -> dict[str, tuple[int, int]]:
    """(distinct, present) findings and impressions of ingest's table: ingest folds whitespace, so
    these are the texts extraction sees."""
    df = pl.read_parquet(studies, columns=["findings", "impression"])
    return {c: (df[c].drop_nulls().n_unique(), df[c].drop_nulls().len()) for c in ("findings", "impression")}


def _tree_rss() -> int:
    """Resident bytes of this process's descendants (from /proc; 0 where it cannot be read)."""
    parent: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    mine, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - mine
        mine |= frontier
    total = 0
    for pid in mine:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass
class Step:
    """One rule: its jobs' wall time (first start to last end), CPU time (user + system, with their
    worker processes), largest process and concurrent sum."""

    name: str
    jobs: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    max_rss: int = 0
    tree_rss: int = 0
    logs: list[str] = field(default_factory=list)


def run_jobs(name: str, commands: list[list[str]], cores: int, log_dir: Path) -> Step:
    """Run a rule's jobs `cores` at a time (as Snakemake would on `--cores`); stop on a failure."""
    step = Step(name, jobs=len(commands))
    pending = list(enumerate(commands))
    running: dict[int, tuple[subprocess.Popen, Path]] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            step.tree_rss = max(step.tree_rss, _tree_rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    try:
        while pending or running:
            while pending and len(running) < cores:
                k, cmd = pending.pop(0)
                log = log_dir / f"{name}-{k}.log"
                with log.open("wb") as fh:
                    proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
                running[proc.pid] = (proc, log)
            pid, status, usage = os.wait4(-1, 0)
            if pid not in running:
                continue
            proc, log = running.pop(pid)
            proc.returncode = os.waitstatus_to_exitcode(status)
            step.max_rss = max(step.max_rss, usage.ru_maxrss * 1024)
            step.cpu += usage.ru_utime + usage.ru_stime  # wait4: the job and the children it waited for
            step.logs.append(log.read_text(errors="replace").strip().splitlines()[-1] if log.stat().st_size else "")
            if proc.returncode != 0:
                raise SystemExit(
                    f"{name} failed (exit {proc.returncode}): {' '.join(proc.args)}\n"
                    f"{log.read_text(errors='replace')[-2000:]}"
                )
    finally:
        step.wall = time.perf_counter() - start
        stop.set()
        sampler.join()
    return step


def srrg(*args: str) -> list[str]:
    return [sys.executable, "-m", "srrg", *args]


def data_half(work: Path, mimic: dict[str, str], cores: int) -> list[Step]:
    """Every rule of `snakemake data` on the collection, in the workflow's order."""
    res, logs = work / "results", work / "logs"
    for d in (res / "ingest", res / "extract", res / "normalize", res / "dataset", logs):
        d.mkdir(parents=True, exist_ok=True)
    studies, extracted = res / "ingest" / "studies.parquet", res / "extract" / "extracted.parquet"
    normalized, ds = res / "normalize" / "normalized.parquet", res / "dataset"
    ingest_cfg = json.dumps({"source": "mimic_cxr", "mimic_cxr": mimic})
    steps = [
        run_jobs(
            "ingest",
            [srrg("ingest", "--config", ingest_cfg, "--n-process", str(cores), "--out", str(studies), "--no-progress")],
            1,
            logs,
        ),
        run_jobs(
            "extract",
            [
                srrg(
                    "extract", "--in", str(studies), "--out", str(extracted), "--n-process", str(cores), "--no-progress"
                )
            ],
            1,
            logs,
        ),
        run_jobs(
            "normalize",
            [
                srrg(
                    "normalize",
                    "--in",
                    str(extracted),
                    "--out",
                    str(normalized),
                    "--phrases",
                    str(res / "normalize" / "phrases.parquet"),
                )
            ],
            1,
            logs,
        ),
        run_jobs("dataset_plan", [srrg("dataset-plan", "--in", str(normalized), "--out-dir", str(ds))], 1, logs),
    ]
    plan = json.loads((ds / "plan.json").read_text())
    shards = []
    for file in plan["files"]:  # "<split>/part-NNNNN.parquet"
        split, name = file.split("/")
        shards.append(srrg("dataset-shard", "--in", str(normalized), "--out-dir", str(ds), split, str(int(name[5:10]))))
    steps.append(run_jobs("dataset_shard", shards, cores, logs))
    steps.append(
        run_jobs(
            "dataset_manifest",
            [srrg("dataset-manifest", "--in", str(normalized), "--out-dir", str(ds), "--upstream-config", "{}")],
            1,
            logs,
        )
    )
    steps.append(run_jobs("stats", [srrg("stats", "--dataset", str(ds), "--out-dir", str(res / "stats"))], 1, logs))
    return steps


def accounting(work: Path, n: int) -> list[str]:
    """Rows of every step's output, each of which must hold every study."""
    res = work / "results"
    counts = {
        "ingest studies.parquet": pl.scan_parquet(res / "ingest" / "studies.parquet").select(pl.len()).collect().item(),
        "extract extracted.parquet": pl.scan_parquet(res / "extract" / "extracted.parquet")
        .select(pl.len())
        .collect()
        .item(),
        "normalize normalized.parquet": pl.scan_parquet(res / "normalize" / "normalized.parquet")
        .select(pl.len())
        .collect()
        .item(),
        "dataset shards": pl.scan_parquet(res / "dataset" / "*" / "part-*.parquet").select(pl.len()).collect().item(),
        "dataset manifest.json": json.loads((res / "dataset" / "manifest.json").read_text())["rows"],
    }
    statuses = (
        pl.scan_parquet(res / "extract" / "extracted.parquet")
        .group_by("extract_status")
        .len()
        .collect()
        .sort("extract_status")
    )
    lines = [f"  {name:30s} {rows:>9d} {'ok' if rows == n else 'MISMATCH'}" for name, rows in counts.items()]
    lines.append("  extract_status " + " ".join(f"{s}={c}" for s, c in statuses.iter_rows()))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=227_835, help="studies (default: the size of MIMIC-CXR 2.0.0)")
    parser.add_argument("--cores", type=int, default=2, help="cores given to the jobs (snakemake --cores)")
    parser.add_argument(
        "--work",
        type=Path,
        help="work folder (default: a temporary one, removed afterwards); a collection of this --n there is reused",
    )
    parser.add_argument("--layout", choices=LAYOUTS, default="zip", help="reports as the official zip or unzipped tree")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="srrg-data-half-"))
    try:
        t0 = time.perf_counter()
        mimic = built_collection(work / "mimic", args.n, layout=args.layout)
        if mimic is None:
            shutil.rmtree(work / "mimic", ignore_errors=True)  # another n, layout or generator
            mimic = build_collection(work / "mimic", args.n, layout=args.layout)
            print(f"built {args.n} synthetic MIMIC-CXR studies in {time.perf_counter() - t0:.1f} s under {work}")
        else:
            print(f"reusing the {args.n} synthetic MIMIC-CXR studies built under {work}")
        for stale in (work / "results", work / "logs"):  # an earlier run's outputs
            shutil.rmtree(stale, ignore_errors=True)
        sys.stdout.flush()
        load = os.getloadavg()[0]
        steps = data_half(work, mimic, args.cores)
        print(
            f"\ndata half, {args.n} studies ({args.layout}), --cores {args.cores}, "
            f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        )
        for name, (distinct, present) in distinct_shares(work / "results" / "ingest" / "studies.parquet").items():
            print(f"  {name}: {distinct} distinct of {present} ({100 * distinct / max(present, 1):.1f} %)")
        print(f"  {'rule':18s} {'jobs':>4s} {'wall s':>8s} {'CPU s':>8s} {'max RSS MB':>11s} {'sum RSS MB':>11s}")
        for s in steps:
            print(
                f"  {s.name:18s} {s.jobs:4d} {s.wall:8.1f} {s.cpu:8.1f} "
                f"{s.max_rss / 1e6:11.0f} {s.tree_rss / 1e6:11.0f}"
            )
        total = sum(s.wall for s in steps)
        print(
            f"  {'total':18s} {sum(s.jobs for s in steps):4d} {total:8.1f} {sum(s.cpu for s in steps):8.1f} "
            f"{max(s.max_rss for s in steps) / 1e6:11.0f} {max(s.tree_rss for s in steps) / 1e6:11.0f}"
        )
        print("rows (every one must equal the studies built):")
        lines = accounting(work, args.n)
        print("\n".join(lines))
        return 0 if all("MISMATCH" not in line for line in lines) else 1
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
