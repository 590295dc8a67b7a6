"""tools/mutation.py's changed-lines mode across renames and its test selection (issue 53): a module
the change moved counts only the lines it changed, one moved after the change is found under its new
path, and a module's tests are its curated list plus every test file that imports it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from paths import REPO

_SPEC = importlib.util.spec_from_file_location("mutation_tool", REPO / "tools" / "mutation.py")
mutation = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = mutation  # dataclasses look their module up there
_SPEC.loader.exec_module(mutation)

BODY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(10))


def git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_renames_and_paths_under():
    """Bug: a rename's old and new paths not read from the diff (a moved module counted as all new
    lines), or a folder in --paths not taken to hold its files."""
    diff = "diff --git a/src/a.py b/src/b/a.py\nsimilarity index 90%\nrename from src/a.py\nrename to src/b/a.py\n"
    assert mutation.renames(diff) == {"src/a.py": "src/b/a.py"}
    assert mutation._under("src/b/a.py", ["src/b"]) and mutation._under("src/b/a.py", ["src/b/a.py"])
    assert not mutation._under("src/bb/a.py", ["src/b"])


def test_a_module_moved_by_the_change_counts_only_its_changed_lines(tmp_path):
    """Bug: without rename detection every line of a moved module is a changed line, and a module
    moved after the change (by a later commit) is lost from the run."""
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(BODY)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "one")
    base = git(tmp_path, "rev-parse", "HEAD").strip()
    (tmp_path / "src" / "pkg").mkdir()
    git(tmp_path, "mv", "src/m.py", "src/pkg/m.py")
    text = (tmp_path / "src" / "pkg" / "m.py").read_text().replace("return x + 3", "return x - 3")
    (tmp_path / "src" / "pkg" / "m.py").write_text(text)
    git(tmp_path, "commit", "-q", "-am", "move and change one line")
    change = git(tmp_path, "rev-parse", "HEAD").strip()
    assert mutation.changed_lines(tmp_path, base, change, ["src"]) == {"src/pkg/m.py": {14}}
    # a later commit moves it again and inserts a line on top: the changed line follows it
    (tmp_path / "src" / "new").mkdir()
    git(tmp_path, "mv", "src/pkg/m.py", "src/new/m.py")
    (tmp_path / "src" / "new" / "m.py").write_text("# moved\n" + text)
    git(tmp_path, "commit", "-q", "-am", "move again")
    assert mutation.changed_lines(tmp_path, base, change, ["src/new"]) == {"src/new/m.py": {15}}
    assert mutation.changed_lines(tmp_path, base, change, ["src/pkg"]) == {}


def test_tests_for_adds_importing_files_to_the_curated_list():
    """Bug: a module with a curated list (TARGETS) never run against a new test file of its own."""
    tests = mutation.tests_for(REPO, "src/srrg/metrics/judges/green.py")
    assert set(mutation.TARGETS["green"].tests) <= set(tests)
    assert "tests/judges/test_green_kinds.py" in tests and "tests/judges/test_green_ec_f1.py" in tests
