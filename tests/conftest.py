"""Fixtures shared by every test folder. pytest puts this folder on sys.path (it holds no
__init__.py), so the helper modules beside it (paths, workflow_helpers, judge_responses, ...)
import by name from any test folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from paths import SHARED_DATA


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """`shared_data("chexpert-labeler/sample_reports.csv")`: the path of a file or folder of the
    public data read in place, or a skip that names it when this checkout has no such data."""

    def find(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"../shared/data/{relative} is absent")
        return path

    return find


def xdist_group(item: pytest.Item) -> str:
    """The group of `--dist loadgroup` (docs/workflow.md, "Tests"): a test file runs on one worker,
    so its module-scoped fixtures (a trained model, a workflow run) are built once; the slurm-marked
    tests of every file share the one localhost cluster and queue there one at a time."""
    if item.get_closest_marker("slurm") is not None:
        return "slurm"
    group = item.path.relative_to(item.config.rootpath).as_posix()
    # a module-scoped fixture with params is built once per param: each param's tests are a group
    # of their own (test_workflow_data.py: the MIMIC-CXR and the IU X-ray runs, minutes each)
    callspec = getattr(item, "callspec", None)
    defs = item._fixtureinfo.name2fixturedefs if callspec is not None else {}
    for name in sorted(callspec.params if callspec is not None else ()):
        if name in defs and defs[name][-1].scope == "module":
            group += f":{name}#{callspec.indices[name]}"  # no "]": xdist takes an id ending in "]" for ungrouped
    return group


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, every test id gets its "@group" suffix, which `--dist loadgroup` schedules
    by. pytest-xdist 3.8 would add it for an xdist_group marker but writes the id attribute of
    pytest < 9.2 (`_nodeid`); pytest 9.2 keeps a parsed NodeId in `_id`, so the suffix is set here
    for both. The groups holding a slow-marked test come first (`make test` keeps this order with
    --no-loadscope-reorder), so the long ones start at once and the quick ones fill the gaps
    instead of one long group running alone at the end."""
    if not hasattr(config, "workerinput") or not config.getvalue("loadgroup"):
        return
    grouped = [(xdist_group(item), item) for item in items]
    slow = {group for group, item in grouped if item.get_closest_marker("slow") is not None}
    grouped.sort(key=lambda pair: pair[0] not in slow)  # stable: file order within each part
    items[:] = [item for _, item in grouped]
    for group, item in grouped:
        grouped_id = f"{item.nodeid}@{group}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(grouped_id)
        else:
            item._nodeid = grouped_id
