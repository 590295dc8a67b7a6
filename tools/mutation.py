"""Mutation testing of the core modules with mutmut: kill rate per module (target >= 85 %).

Each module runs in its own scratch folder (never in the repository, which other people edit) with
only the tests that exercise it, one worker and a wall-clock limit, so a run stays light on a
shared machine. A surviving mutant is a one-line change of the code that no selected test notices:
either a missing test or an equivalent mutant (docs/mutation.md lists the ones judged equivalent).

    .venv/bin/python tools/mutation.py                    # every module
    .venv/bin/python tools/mutation.py report sscore      # some modules
    .venv/bin/python tools/mutation.py --survivors        # also print each survivor's diff
    .venv/bin/python tools/mutation.py --sample 05        # every 5th mutant (by number)

Not a CI step: a full run takes several minutes per module (tens of minutes for report.py on a busy
machine); --sample gives an estimate in a fraction of the time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MUTMUT = Path(sys.executable).with_name("mutmut")


@dataclass(frozen=True)
class Target:
    """A module to mutate, the tests that check it, optionally the functions to mutate (fnmatch
    patterns over mutmut's mutant names; None = every function of the module) and extra pytest
    arguments."""

    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] | None = None
    pytest_args: tuple[str, ...] = ()  # added to every pytest call of this module (e.g. a marker filter)

    @property
    def dotted(self) -> str:
        return self.path.removeprefix("src/").removesuffix(".py").replace("/", ".")


TARGETS: dict[str, Target] = {
    "sscore": Target(
        "src/srrg/metrics/sscore.py", ("tests/metrics/test_sscore.py", "tests/metrics/test_sscore_edges.py")
    ),
    "report": Target(
        "src/srrg/report.py",
        ("tests/report/test_report.py", "tests/report/test_report_bounds.py", "tests/report/test_report_canonical.py"),
    ),
    "context": Target(
        "src/srrg/extract/context.py",
        (
            "tests/extract/test_extract_rules.py",
            "tests/extract/test_context_rules.py",
            "tests/extract/test_extract_context.py",
            "tests/extract/test_extract_thresholds.py",
            "tests/extract/test_context_scopes.py",
        ),
    ),
    "nlg": Target("src/srrg/metrics/nlg.py", ("tests/metrics/test_nlg.py", "tests/metrics/test_nlg_edges.py")),
    "correlation": Target(
        "src/srrg/metaeval/correlation.py",
        (
            "tests/metaeval/test_metaeval_stats.py",
            "tests/metaeval/test_correlation_ci.py",
            "tests/metaeval/test_metaeval_statistics.py",
            "tests/metaeval/test_stats_extremes.py",
            "tests/metaeval/test_correlation_resampling.py",
        ),
    ),
    "dataset": Target(
        "src/srrg/dataset.py",
        ("tests/dataset/test_dataset.py", "tests/dataset/test_dataset_edges.py", "tests/dataset/test_shards.py"),
        # the shard writer and the shard/manifest jobs' readers; the CLI around it lives in srrg.stages
        functions=tuple(
            f"srrg.dataset.x_{name}__mutmut_*"
            for name in (
                "sentences_of",
                "to_dataset_frame",
                "scan_input",
                "read_shard",
                "plan_input",
                "count_rows",
                "with_sentences",
                "plan_shards",
                "shard_name",
                "shard_paths",
                "make_plan",
                "remove_stale_shards",
                "shard_frame",
                "shard_rows",
                "dataset_columns",
                "write_shard",
                "build_manifest",
                "write_json",
                "write_dataset",
                "summarize",
            )
        ),
    ),
    "cache": Target("src/srrg/llm/cache.py", ("tests/judges/test_llm_client.py", "tests/judges/test_llm_cache.py")),
    "compare": Target(
        "src/srrg/compare.py",
        (
            "tests/metaeval/test_compare.py",
            "tests/metaeval/test_stats_extremes.py",
            "tests/metaeval/test_compare_outputs.py",
            "tests/metaeval/test_metaeval_statistics.py",
            "tests/metrics/test_signature.py",
        ),
    ),
    "green": Target(
        "src/srrg/metrics/green.py",
        (
            "tests/judges/test_green.py",
            "tests/judges/test_judge_failures.py",
            "tests/judges/test_judge_mixed_batches.py",
        ),
        pytest_args=("-m", "not slow"),  # the slow tests run the SmolLM2 judge: minutes per mutant
    ),
    "ingest": Target(
        "src/srrg/ingest.py",
        ("tests/dataset/test_ingest.py", "tests/dataset/test_split_invariants.py", "tests/dataset/test_ingest_rows.py"),
    ),
}


def wilson_interval(killed: int, checked: int, z: float = 1.959964) -> tuple[float, float]:
    """95 % Wilson score interval of a kill rate: honest at small samples and at rates near 100 %,
    where the normal approximation gives bounds above 1 (docs/mutation.md)."""
    if checked == 0:
        return math.nan, math.nan
    p = killed / checked
    centre = (p + z * z / (2 * checked)) / (1 + z * z / checked)
    half = z * math.sqrt(p * (1 - p) / checked + z * z / (4 * checked * checked)) / (1 + z * z / checked)
    return max(0.0, centre - half), min(1.0, centre + half)


def _toml(value: object) -> str:
    """A TOML value for the flat settings mutmut reads (strings, booleans, numbers, lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def write_project(work: Path, target: Target) -> list[str]:
    """A scratch project: links to src/, tests/ and what the tests read, and a pyproject.toml with
    the repository's pytest settings and its [tool.mutmut] settings narrowed to one module and
    its tests. Returns the tests used."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    mutmut = dict(settings.get("mutmut", {}))
    tests = [t for t in target.tests if (REPO / t).is_file()]
    mutmut.update(
        only_mutate=[target.path],
        pytest_add_cli_args_test_selection=tests,
        pytest_add_cli_args=[*mutmut.get("pytest_add_cli_args", []), *target.pytest_args],
    )
    for name in ("src", "tests", *mutmut.get("also_copy", [])):
        (work / name).symlink_to(REPO / name, target_is_directory=True)
    lines = []
    for section, values in (
        ("tool.pytest.ini_options", settings.get("pytest", {}).get("ini_options", {})),
        ("tool.mutmut", mutmut),
    ):
        lines += [f"[{section}]", *(f"{k} = {_toml(v)}" for k, v in values.items()), ""]
    (work / "pyproject.toml").write_text("\n".join(lines), encoding="utf-8")
    return tests


def results(work: Path) -> dict[str, str]:
    """Mutant name -> status, as `mutmut results --all true` prints them."""
    proc = subprocess.run([str(MUTMUT), "results", "--all", "true"], cwd=work, capture_output=True, text=True)
    out = {}
    for line in proc.stdout.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            out[name] = status
    return out


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
print(json.dumps({n: get_diff_for_mutant(n) for n in sys.argv[1:]}))
"""


def survivor_diffs(work: Path, names: list[str]) -> dict[str, str]:
    """Mutant name -> its changed lines ("- old | + new"), from one mutmut process."""
    if not names:
        return {}
    proc = subprocess.run([sys.executable, "-c", _DIFFS, *names], cwd=work, capture_output=True, text=True)
    diffs = json.loads(proc.stdout or "{}")
    return {
        n: " | ".join(
            line.strip() for line in d.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )
        for n, d in diffs.items()
    }


def mutant_patterns(target: Target, sample: str | None, only: list[str] | None = None) -> list[str]:
    """fnmatch patterns of the mutants to run: the target's functions (or all of the module), or the
    given mutant names of this module; with `sample` only the mutants whose number ends in one of
    its digits ("05" = every 5th)."""
    mine = [p for p in only or () if p.startswith(target.dotted + ".")]
    patterns = mine or list(target.functions or (f"{target.dotted}.*__mutmut_*",))
    return [p + f"[{sample}]" for p in patterns] if sample else patterns


def run_module(
    key: str, target: Target, timeout: float, keep: bool, show: bool, sample: str | None, only: list[str] | None = None
) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix=f"srrg-mutation-{key}-"))
    patterns = mutant_patterns(target, sample, only)
    try:
        tests = write_project(work, target)
        env = dict(
            os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", POLARS_MAX_THREADS="1"
        )
        cmd = [str(MUTMUT), "run", "--max-children", "1", *patterns]
        start = time.perf_counter()
        # own process group: on timeout the fork server and its workers stop with mutmut
        proc = subprocess.Popen(
            cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        try:
            log = proc.communicate(timeout=timeout)[0][-3000:]
            rc: int | str = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            rc, log = "timeout", ""
        seconds = time.perf_counter() - start
        statuses = {n: s for n, s in results(work).items() if any(fnmatch(n, p) for p in patterns)}
        counts: dict[str, int] = {}
        for status in statuses.values():
            counts[status] = counts.get(status, 0) + 1
        # a mutant that makes the tests hang is caught too: mutmut stops it and says timeout
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        checked = sum(v for k, v in counts.items() if k != "not checked")
        survivors = sorted(n for n, s in statuses.items() if s not in {"killed", "timeout"})
        row = {
            "module": key,
            "tests": tests,
            "mutants": len(statuses),
            "checked": checked,
            "killed": killed,
            "rate": killed / checked if checked else float("nan"),
            "ci95": wilson_interval(killed, checked),
            "counts": counts,
            "rc": rc,
            "seconds": round(seconds, 1),
            "survivors": survivors,
        }
        if show:
            row["diffs"] = survivor_diffs(work, survivors)
        if rc != 0 and not statuses:
            row["log"] = log
        return row
    finally:
        if keep:
            print(f"# {key}: scratch project kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", choices=[[], *TARGETS], help="default: all")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per module (default 900)")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--keep", action="store_true", help="keep the scratch projects (mutmut browse there)")
    parser.add_argument(
        "--sample",
        metavar="DIGITS",
        help="run only mutants whose number ends in one of DIGITS (e.g. 05: a 20%% sample)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="MUTANT",
        help="run only these mutant names or patterns (e.g. the survivors of a run); modules without one are skipped",
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    if not MUTMUT.is_file():
        print(f"mutmut not found next to {sys.executable}: pip install -e '.[test]'", file=sys.stderr)
        return 2
    rows = []
    print(
        f"{'module':<12} {'mutants':>7} {'checked':>7} {'killed':>6} {'rate':>6}  {'95% CI':>13}  {'survived':>8}"
        "  seconds  other"
    )
    keys = args.modules or list(TARGETS)
    if args.only:
        keys = [k for k in keys if any(p.startswith(TARGETS[k].dotted + ".") for p in args.only)]
    for key in keys:
        row = run_module(key, TARGETS[key], args.timeout, args.keep, args.survivors, args.sample, args.only)
        rows.append(row)
        other = {k: v for k, v in row["counts"].items() if k not in {"killed", "timeout", "survived"}}
        note = "" if row["rc"] == 0 else f"  (mutmut exit: {row['rc']})"
        low, high = row["ci95"]
        print(
            f"{key:<12} {row['mutants']:>7} {row['checked']:>7} {row['killed']:>6} {row['rate']:>6.1%}  "
            f"[{low:>5.1%}, {high:>5.1%}]  {row['counts'].get('survived', 0):>8}  {row['seconds']:>7}  "
            f"{other or ''}{note}",
            flush=True,
        )
        if "log" in row:
            print(row["log"], file=sys.stderr)
        for name in row["survivors"]:
            diff = row.get("diffs", {}).get(name, "")
            print(f"    {name}{'  ' + diff if diff else ''}")
    killed, checked = sum(r["killed"] for r in rows), sum(r["checked"] for r in rows)
    if checked:
        low, high = wilson_interval(killed, checked)
        print(
            f"{'all':<12} {sum(r['mutants'] for r in rows):>7} {checked:>7} {killed:>6} {killed / checked:>6.1%}  "
            f"[{low:>5.1%}, {high:>5.1%}]"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
