"""srrg's own mutation operators and the changed-lines mode of tools/mutation.py (docs/mutation.md,
"Changed lines"): each operator's exact mutant, the diff parsing, the carrying of line numbers
forward, and a whole run on a two-file git repository."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from paths import TOOLS

_SPEC = importlib.util.spec_from_file_location("mutation_tool", TOOLS / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = mutation  # dataclasses look their module up there
_SPEC.loader.exec_module(mutation)


def mutated(source: str, operator: str) -> list[str]:
    """Every mutant of one operator, as the whole mutated source."""
    data = source.encode()
    return [m.apply(data).decode() for m in mutation.mutants_of("m.py", data) if m.operator == operator]


def test_swap_args_swaps_the_first_two_positional_arguments() -> None:
    assert mutated("x = f(a, b=1)\ny = g(ref, hyp, 3)\nz = h(a, a)\n", "swap_args") == [
        "x = f(a, b=1)\ny = g(hyp, ref, 3)\nz = h(a, a)\n"  # f has one positional; h(a, a) is the same
    ]


def test_drop_filter_drops_each_comprehension_condition_and_each_and_operand() -> None:
    src = "k = [r for r in rows if r.ok if r.n > 1]\nif a and (b or c):\n    pass\n"
    assert mutated(src, "drop_filter") == [
        "k = [r for r in rows if r.n > 1]\nif a and (b or c):\n    pass\n",
        "k = [r for r in rows if r.ok]\nif a and (b or c):\n    pass\n",
        "k = [r for r in rows if r.ok if r.n > 1]\nif (b or c):\n    pass\n",
        "k = [r for r in rows if r.ok if r.n > 1]\nif a:\n    pass\n",
    ]


def test_wrong_key_takes_the_modules_next_key_or_category_in_sorted_order() -> None:
    src = "v = row['name']\nif s == \"valid\":\n    d = {\"count\": 1}\nw = row.get('name')\n"
    assert mutated(src, "wrong_key") == [
        "v = row['valid']\nif s == \"valid\":\n    d = {\"count\": 1}\nw = row.get('name')\n",
        "v = row['name']\nif s == \"count\":\n    d = {\"count\": 1}\nw = row.get('name')\n",
        "v = row['name']\nif s == \"valid\":\n    d = {\"name\": 1}\nw = row.get('name')\n",
        "v = row['name']\nif s == \"valid\":\n    d = {\"count\": 1}\nw = row.get('valid')\n",
    ]
    assert mutated("v = row['only']\n", "wrong_key") == ["v = row['only_']\n"]  # one key: a typo
    assert mutated('v = f"{x}"\nprint("text")\n', "wrong_key") == []  # neither a key nor a category


def test_mean_sum_turns_a_mean_into_a_sum() -> None:
    src = "a = sum(xs) / len(xs)\nb = statistics.mean(xs)\nc = arr.nanmean()\nd = total / n\n"
    assert mutated(src, "mean_sum") == [
        "a = sum(xs)\nb = statistics.mean(xs)\nc = arr.nanmean()\nd = total / n\n",
        "a = sum(xs) / len(xs)\nb = sum(xs)\nc = arr.nanmean()\nd = total / n\n",
        "a = sum(xs) / len(xs)\nb = statistics.mean(xs)\nc = arr.nansum()\nd = total / n\n",
    ]


def test_unresolved_path_and_skipped_escape() -> None:
    src = "same = out.resolve() == os.path.realpath(src)\nhtml = escape(name) + quote(url) + re.escape(w)\n"
    assert mutated(src, "unresolved_path") == [
        "same = out == os.path.realpath(src)\nhtml = escape(name) + quote(url) + re.escape(w)\n",
        "same = out.resolve() == src\nhtml = escape(name) + quote(url) + re.escape(w)\n",
    ]
    assert mutated(src, "skip_escape") == [
        "same = out.resolve() == os.path.realpath(src)\nhtml = name + quote(url) + re.escape(w)\n",
        "same = out.resolve() == os.path.realpath(src)\nhtml = escape(name) + url + re.escape(w)\n",
        "same = out.resolve() == os.path.realpath(src)\nhtml = escape(name) + quote(url) + w\n",
    ]


def test_only_the_given_lines_and_never_annotations_or_non_ascii_offsets() -> None:
    src = 'def f(p: dict["k", int]) -> None:\n    s = "é" + escape(p)\n    return g(a, b)\n'
    data = src.encode()
    assert [m.line for m in mutation.mutants_of("m.py", data, {3})] == [3]
    mutants = mutation.mutants_of("m.py", data, {1, 2})  # the annotation's "k" is no key
    assert [m.apply(data).decode().splitlines()[1] for m in mutants] == ['    s = "é" + p']  # byte offsets after é


DIFF = """diff --git a/src/m.py b/src/m.py
--- a/src/m.py
+++ b/src/m.py
@@ -3,0 +4,2 @@ def f():
@@ -10 +12 @@ def g():
@@ -20,3 +22,0 @@ def h():
diff --git a/old.py b/old.py
--- a/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
"""


def test_diff_hunks_and_the_lines_they_wrote() -> None:
    hunks = mutation.diff_hunks(DIFF)
    assert hunks == {"src/m.py": [(3, 0, 4, 2), (10, 1, 12, 1), (20, 3, 22, 0)]}  # a deleted file has none
    assert mutation.added_lines(hunks["src/m.py"]) == {4, 5, 12}


def test_carry_forward_moves_lines_past_later_hunks_and_drops_rewritten_ones() -> None:
    # later change: 2 lines inserted after line 3, line 10 rewritten, lines 20-22 removed
    later = [(3, 0, 4, 2), (10, 1, 12, 1), (20, 3, 22, 0)]
    assert mutation.carry_forward({1, 3, 4, 9, 10, 11, 19, 21, 23}, later) == {1, 3, 6, 11, 13, 21, 22}


def git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path):
    """A git repository: src/calc.py with a test that checks only `total`, two commits."""
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "calc.py").write_text("def total(xs):\n    return sum(xs)\n")
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import mean, total\n\n\ndef test_calc():\n    assert total([1, 2, 3]) == 6\n"
    )
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "src" / "calc.py").write_text(
        "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n\n\n"
        "def ratio(a, b):\n    return divmod(a, b)[0]\n"
    )
    test = tmp_path / "tests" / "test_calc.py"
    test.write_text(test.read_text() + "    assert mean([2, 4]) == 3\n")
    git(tmp_path, "commit", "-q", "-am", "two")
    return tmp_path


@pytest.mark.slow
def test_changed_lines_mode_mutates_only_the_new_lines_and_counts_survivors(repo) -> None:
    """The second commit added mean (tested) and ratio (not): the mean's sum mutant is killed, the
    swapped divmod arguments survive; total's line is older and not mutated."""
    assert mutation.changed_lines(repo, "HEAD~1", None, ["src"]) == {"src/calc.py": {3, 4, 5, 6, 7, 8, 9, 10}}
    assert mutation.tests_for(repo, "src/calc.py") == ["tests/test_calc.py"]
    [row] = mutation.run_changed(repo, "HEAD~1", None, ["src"], None, 0)
    assert (row["checked"], row["killed"]) == (2, 1)
    assert row["survivors"] == ["src/calc.py:10 swap_args: a, b -> b, a"]
    assert (repo / "src" / "calc.py").read_text().endswith("return divmod(a, b)[0]\n")  # restored
    # the same change seen from a later commit that inserted two lines on top: carried forward
    calc = repo / "src" / "calc.py"
    calc.write_text("# one\n# two\n" + calc.read_text())
    git(repo, "commit", "-q", "-am", "three")
    assert mutation.changed_lines(repo, "HEAD~2", "HEAD~1", ["src"]) == {"src/calc.py": set(range(5, 13))}
