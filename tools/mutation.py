"""Mutation testing of the core modules with mutmut: kill rate per module (target >= 85 %).

Each module runs in its own scratch folder (never in the repository, which other people edit) with
only the tests that exercise it, one worker and a wall-clock limit, so a run stays light on a
shared machine. A surviving mutant is a one-line change of the code that no selected test notices:
either a missing test or an equivalent mutant (docs/mutation.md lists the ones judged equivalent).

    .venv/bin/python tools/mutation.py                    # every module
    .venv/bin/python tools/mutation.py report sscore      # some modules
    .venv/bin/python tools/mutation.py --survivors        # also print each survivor's diff
    .venv/bin/python tools/mutation.py --sample 05        # every 5th mutant (by number)
    .venv/bin/python tools/mutation.py --changed-since REV [--changed-until REV2] [--paths P ...]
                                   # srrg's own operators on the lines that change touched only

Not a CI step: a full run takes several minutes per module (tens of minutes for report.py on a busy
machine); --sample gives an estimate in a fraction of the time.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
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
        "src/srrg/metrics/judges/green.py",
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


# --- srrg's own operators on the lines a change touched (docs/mutation.md, "Changed lines") ---------


@dataclass(frozen=True)
class Mutant:
    """One textual change of a module: bytes [start, end) of its UTF-8 source become `new`."""

    path: str
    line: int
    operator: str
    start: int
    end: int
    new: str

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.new.encode("utf-8") + source[self.end :]

    def describe(self, source: bytes) -> str:
        old = source[self.start : self.end].decode("utf-8")
        return f"{self.path}:{self.line} {self.operator}: {_short(old)} -> {_short(self.new)}"


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Source:
    """A module's UTF-8 source with the byte offsets of AST nodes (ast columns count UTF-8 bytes)."""

    def __init__(self, source: bytes) -> None:
        self.data = source
        self.starts = [0]
        for line in source.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.starts[node.lineno - 1] + node.col_offset,  # type: ignore[attr-defined]
            self.starts[node.end_lineno - 1] + node.end_col_offset,  # type: ignore[attr-defined]
        )

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")


def _call_name(node: ast.Call) -> str:
    """The called name: `f` of f(x), `attr` of a.b.attr(x)."""
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def op_swap_args(node: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """f(a, b) -> f(b, a): two positional arguments in the wrong order."""
    if isinstance(node, ast.Call) and len(node.args) >= 2:
        a, b = node.args[:2]
        if not isinstance(a, ast.Starred) and not isinstance(b, ast.Starred) and src.text(a) != src.text(b):
            (s0, e0), (s1, e1) = src.span(a), src.span(b)
            between = src.data[e0:s1].decode("utf-8")
            yield node, s0, e1, src.text(b) + between + src.text(a)


def op_drop_filter(node: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """A comprehension's `if` clause dropped; one operand of an `and` dropped (a forgotten condition)."""
    if isinstance(node, ast.comprehension):
        previous = node.iter
        for cond in node.ifs:
            yield cond, src.span(previous)[1], src.span(cond)[1], ""
            previous = cond
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for i in range(len(node.values)):
            kept = [v for j, v in enumerate(node.values) if j != i]
            parts = [
                f"({src.text(v)})" if isinstance(v, (ast.BoolOp, ast.IfExp, ast.NamedExpr)) else src.text(v)
                for v in kept
            ]
            yield node.values[i], *src.span(node), " and ".join(parts)


def _role_strings(tree: ast.AST) -> list[tuple[ast.Constant, str]]:
    """String constants used as a key or a category: a subscript, the key of .get/.pop/.setdefault,
    a dict display's key, a side of ==, != or `in`."""
    found: list[tuple[ast.Constant, str]] = []

    def add(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
            found.append((node, node.value))

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            add(node.slice)
        elif isinstance(node, ast.Call) and _call_name(node) in {"get", "pop", "setdefault"} and node.args:
            add(node.args[0])
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                add(key)
        elif isinstance(node, ast.Compare) and all(
            isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in node.ops
        ):
            for side in (node.left, *node.comparators):
                add(side)
    return found


def op_wrong_key(tree: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """A key or category string replaced by the module's next one in sorted order (the wrong
    column, status or category of the same code), or by a typo when the module has only one."""
    roles = _role_strings(tree)
    names = sorted({value for _, value in roles})
    for node, value in roles:
        other = names[(names.index(value) + 1) % len(names)] if len(names) > 1 else value + "_"
        quote = src.data[src.span(node)[0] : src.span(node)[0] + 1].decode("utf-8")
        if quote in ("'", '"'):  # a plain literal (not an f-string or implicit concatenation)
            yield node, *src.span(node), json.dumps(other) if quote == '"' else repr(other)


def op_mean_sum(node: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """sum(x) / n -> sum(x); mean -> sum (np.mean, .mean(), statistics.mean/fmean)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        if isinstance(node.left, ast.Call) and _call_name(node.left) == "sum":
            yield node, *src.span(node), src.text(node.left)
    elif isinstance(node, ast.Call) and _call_name(node) in {"mean", "nanmean", "fmean"}:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "statistics":
            yield node, *src.span(func), "sum"
        elif isinstance(func, ast.Attribute):
            start = src.span(func)[1] - len(func.attr.encode("utf-8"))
            yield node, start, src.span(func)[1], "nansum" if func.attr == "nanmean" else "sum"
        else:
            yield node, *src.span(func), "sum"


def op_unresolved_path(node: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """p.resolve() / p.absolute() / os.path.realpath(p) / abspath(p) -> p: a path compared unresolved."""
    if not isinstance(node, ast.Call):
        return
    name = _call_name(node)
    if name in {"resolve", "absolute"} and isinstance(node.func, ast.Attribute) and not node.args:
        yield node, *src.span(node), src.text(node.func.value)
    elif name in {"realpath", "abspath"} and len(node.args) == 1:
        yield node, *src.span(node), src.text(node.args[0])


def op_skip_escape(node: ast.AST, src: _Source) -> Iterator[tuple[ast.AST, int, int, str]]:
    """escape(x) / html.escape(x) / quote(x) / re.escape(x) -> x: a skipped escape."""
    if isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        name = _call_name(node)
        if name.endswith("escape") or name in {"quote", "quote_plus"}:
            yield node, *src.span(node), src.text(node.args[0])


NODE_OPERATORS = {
    "swap_args": op_swap_args,
    "drop_filter": op_drop_filter,
    "mean_sum": op_mean_sum,
    "unresolved_path": op_unresolved_path,
    "skip_escape": op_skip_escape,
}
OPERATORS = (*NODE_OPERATORS, "wrong_key")


def mutants_of(path: str, source: bytes, lines: set[int] | None = None) -> list[Mutant]:
    """Every mutant of the operators whose node starts on one of `lines` (None: anywhere), in
    source order; docstrings and annotations are left alone."""
    tree = ast.parse(source)
    src = _Source(source)
    skip: set[int] = set()
    for node in ast.walk(tree):  # annotations: no runtime behaviour to break
        for ann in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if ann is not None:
                skip.update(id(n) for n in ast.walk(ann))
    found: list[tuple[ast.AST, str, int, int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        for name, operator in NODE_OPERATORS.items():
            found += [(anchor, name, s, e, new) for anchor, s, e, new in operator(node, src)]
    found += [
        (anchor, "wrong_key", s, e, new) for anchor, s, e, new in op_wrong_key(tree, src) if id(anchor) not in skip
    ]
    out = {
        (s, e, new): Mutant(path, anchor.lineno, name, s, e, new)  # type: ignore[attr-defined]
        for anchor, name, s, e, new in found
        if (lines is None or anchor.lineno in lines) and source[s:e].decode("utf-8") != new  # type: ignore[attr-defined]
    }
    return sorted(out.values(), key=lambda m: (m.start, m.end, m.operator, m.new))


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_hunks(diff: str) -> dict[str, list[tuple[int, int, int, int]]]:
    """`git diff -U0` text -> path -> hunks (old start, old count, new start, new count)."""
    out: dict[str, list[tuple[int, int, int, int]]] = {}
    path = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = None if line[4:] == "/dev/null" else line[4:].removeprefix("b/")
            if path is not None:
                out.setdefault(path, [])
        elif path is not None and (m := _HUNK.match(line)):
            a, b, c, d = m.groups()
            out[path].append((int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return out


def added_lines(hunks: list[tuple[int, int, int, int]]) -> set[int]:
    """The new side's line numbers the hunks wrote."""
    return {n for _, _, start, count in hunks for n in range(start, start + count)}


def carry_forward(lines: set[int], hunks: list[tuple[int, int, int, int]]) -> set[int]:
    """Line numbers of an older version moved to a newer one through the hunks between them; a
    line that a later hunk rewrote or removed is dropped (it is no longer the change's line)."""
    out = set()
    for n in lines:
        if any(count and start <= n < start + count for start, count, _, _ in hunks):
            continue
        # hunks wholly before n move it by what they added; count 0 inserts after its start line
        out.add(n + sum(nc - oc for os_, oc, _, nc in hunks if (os_ + oc <= n if oc else os_ < n)))
    return out


def renames(diff: str) -> dict[str, str]:
    """`git diff -M` text -> old path -> new path of every file the diff renames."""
    out, old = {}, None
    for line in diff.splitlines():
        if line.startswith("rename from "):
            old = line.removeprefix("rename from ")
        elif line.startswith("rename to ") and old is not None:
            out[old], old = line.removeprefix("rename to "), None
    return out


def _under(path: str, paths: list[str]) -> bool:
    """Whether `path` is one of `paths` or inside one of them (folders)."""
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in paths)


def changed_lines(repo: Path, since: str, until: str | None, paths: list[str]) -> dict[str, set[int]]:
    """Path -> lines of the working tree that `git diff -U0 since [until]` wrote (Python files
    only); with `until`, carried forward to the working tree through `git diff -U0 until`. Renames
    are followed (`-M`), so a module moved by the change counts only the lines it changed, and one
    moved after `until` is found under its new path."""

    def diff(*revs: str) -> tuple[dict[str, list[tuple[int, int, int, int]]], dict[str, str]]:
        # no pathspec: a rename is only seen with both its paths; `paths` filters afterwards
        cmd = ["git", "-C", str(repo), "diff", "-U0", "-M", "--no-color", "--no-ext-diff", *revs]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return diff_hunks(text), renames(text)

    hunks, _ = diff(since, *([until] if until else []))
    changed = {p: added_lines(h) for p, h in hunks.items() if p.endswith(".py")}
    if until:
        later, moved = diff(until)
        changed = {
            moved.get(p, p): carry_forward(lines, later.get(moved.get(p, p), [])) for p, lines in changed.items()
        }
    return {p: lines for p, lines in changed.items() if lines and _under(p, paths) and (repo / p).is_file()}


def tests_for(repo: Path, path: str) -> list[str]:
    """The module's curated tests (TARGETS) and every test file that imports it by name, so a new
    test file of the module is used without editing the table."""
    curated = [t for target in TARGETS.values() if target.path == path for t in target.tests if (repo / t).is_file()]
    dotted = path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    parent, _, name = dotted.rpartition(".")
    pattern = re.compile(
        rf"(import {re.escape(dotted)}\b|from {re.escape(dotted)} import"
        rf"|from {re.escape(parent)} import [^\n]*\b{name}\b)"
    )
    importing = [
        str(t.relative_to(repo))
        for t in (repo / "tests").rglob("test_*.py")
        if pattern.search(t.read_text(encoding="utf-8"))
    ]
    return sorted(set(curated) | set(importing))


def run_tests(
    repo: Path, tests: list[str], timeout: float, stop: bool = True, deselect: tuple[str, ...] = ()
) -> tuple[int | str, float, list[str]]:
    """pytest on the tests (not the slow ones), stopping at the first failure unless `stop` is
    false, without the `deselect`ed test ids: (exit code or "timeout", seconds, the failed ids)."""
    env = dict(
        os.environ,
        PYTHONPATH=str(repo / "src"),
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        POLARS_MAX_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    cmd = [sys.executable, "-m", "pytest", *(["-x"] if stop else []), "-q", "-rf", "-p", "no:cacheprovider"]
    cmd += ["-m", "not slow", *(f"--deselect={d}" for d in deselect), *tests]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            cmd, cwd=repo, env=env, stdout=out, stderr=subprocess.DEVNULL, start_new_session=True, text=True
        )
        try:
            rc: int | str = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = "timeout"
        out.seek(0)
        failed = [line.split()[1] for line in out.read().splitlines() if line.startswith("FAILED ")]
    return rc, time.perf_counter() - start, failed


def baseline(repo: Path, tests: list[str]) -> tuple[int | str, float, tuple[str, ...]]:
    """The module's tests unmutated: (exit code, seconds, the tests left out). Tests that fail
    unmutated (another change in progress) are left out and said in the row, so they cannot
    count a mutant as killed; the rest must then pass."""
    rc, seconds, _ = run_tests(repo, tests, 1800)
    if rc in (0, "timeout"):
        return rc, seconds, ()
    rc, _, failed = run_tests(repo, tests, 1800, stop=False)
    if rc != 1 or not failed:
        return rc, seconds, ()
    rc, seconds, _ = run_tests(repo, tests, 1800, deselect=tuple(failed))
    return rc, seconds, tuple(failed)


def run_changed(
    repo: Path,
    since: str,
    until: str | None,
    paths: list[str],
    max_mutants: int | None,
    seed: int,
    max_total: int | None = None,
) -> list[dict[str, object]]:
    """Each changed module: baseline run of its tests, then every mutant on its changed lines (or
    a seeded sample of max_mutants; with max_total, a seeded sample of that many of all modules'
    mutants, so a change over many modules runs in bounded time) written into the file in place,
    tested, and the file restored. Run it in a scratch clone: it edits the clone's sources."""
    plan = []
    for path, lines in sorted(changed_lines(repo, since, until, paths).items()):
        mutants = mutants_of(path, (repo / path).read_bytes(), lines)
        if max_mutants is not None and len(mutants) > max_mutants:
            mutants = sorted(random.Random(f"{seed}:{path}").sample(mutants, max_mutants), key=lambda m: m.start)
        plan.append((path, lines, mutants))
    if max_total is not None:
        pool = [m for _, _, mutants in plan for m in mutants]
        chosen = set(random.Random(f"{seed}:all").sample(pool, min(max_total, len(pool))))
        plan = [(p, lines, [m for m in mutants if m in chosen]) for p, lines, mutants in plan]
        plan = [(p, lines, mutants) for p, lines, mutants in plan if mutants]
    rows = []
    for path, lines, mutants in plan:
        file = repo / path
        source = file.read_bytes()
        tests = tests_for(repo, path)
        row: dict[str, object] = {"module": path, "lines": len(lines), "mutants": len(mutants), "tests": tests}
        base, seconds, left_out = baseline(repo, tests) if tests and mutants else (None, 0.0, ())
        if left_out:
            row["left_out"] = list(left_out)
            print(f"# {path}: failing unmutated, left out: {' '.join(left_out)}", file=sys.stderr, flush=True)
        if base != 0:
            row.update(checked=0, killed=0, survivors=[], note=f"baseline: {base or 'no tests or no mutants'}")
            rows.append(row)
            print(f"# {path}: {row['note']}", file=sys.stderr, flush=True)
            continue
        killed, survivors = 0, []
        try:
            for mutant in mutants:
                file.write_bytes(mutant.apply(source))
                rc, _, _ = run_tests(repo, tests, 3 * seconds + 60, deselect=left_out)
                if rc == 0:
                    survivors.append(mutant.describe(source))
                else:
                    killed += 1
        finally:
            file.write_bytes(source)
        row.update(checked=len(mutants), killed=killed, survivors=survivors, baseline_s=round(seconds, 1))
        rows.append(row)
        print(f"# {path}: {killed} of {len(mutants)} killed", file=sys.stderr, flush=True)  # progress
    return rows


def print_changed(rows: list[dict[str, object]], out: Path | None) -> int:
    """The changed-lines table: per module and for all, checked, killed, rate and its 95 % Wilson
    interval, then each survivor (file:line operator: old -> new)."""
    print(f"{'module':<36} {'lines':>5} {'mutants':>7} {'checked':>7} {'killed':>6} {'rate':>6}  {'95% CI':>15}")
    for row in rows:
        checked, killed = int(row["checked"]), int(row["killed"])  # type: ignore[call-overload]
        low, high = wilson_interval(killed, checked)
        rate = f"{killed / checked:>6.1%}" if checked else f"{'-':>6}"
        print(
            f"{row['module']:<36} {row['lines']:>5} {row['mutants']:>7} {checked:>7} {killed:>6} {rate}  "
            f"[{low:>5.1%}, {high:>5.1%}]  {row.get('note', '')}",
            flush=True,
        )
        for test in row.get("left_out", []):  # type: ignore[attr-defined]
            print(f"    left out (fails unmutated): {test}")
        for survivor in row["survivors"]:  # type: ignore[attr-defined]
            print(f"    {survivor}")
    killed = sum(int(r["killed"]) for r in rows)  # type: ignore[call-overload]
    checked = sum(int(r["checked"]) for r in rows)  # type: ignore[call-overload]
    if checked:
        low, high = wilson_interval(killed, checked)
        print(
            f"{'all':<36} {'':>5} {'':>7} {checked:>7} {killed:>6} {killed / checked:>6.1%}  "
            f"[{low:>5.1%}, {high:>5.1%}]"
        )
    if out:
        out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


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
    changed = parser.add_argument_group("changed lines (srrg's own operators, no mutmut; run it in a scratch clone)")
    changed.add_argument("--changed-since", metavar="REV", help="mutate only the lines `git diff -U0 REV` wrote")
    changed.add_argument("--changed-until", metavar="REV2", help="the change is REV..REV2 (lines carried to the tree)")
    changed.add_argument("--paths", nargs="+", default=["src"], help="files or folders to mutate (default: src)")
    changed.add_argument("--max-mutants", type=int, help="a seeded sample of at most this many mutants per module")
    changed.add_argument("--max-total", type=int, help="then a seeded sample of at most this many in all")
    changed.add_argument("--seed", type=int, default=0, help="seed of that sample (default 0)")
    args = parser.parse_args()
    if args.changed_since:
        return print_changed(
            run_changed(
                REPO, args.changed_since, args.changed_until, args.paths, args.max_mutants, args.seed, args.max_total
            ),
            args.json,
        )
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
