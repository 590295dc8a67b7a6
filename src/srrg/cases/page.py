"""The cases page as one self-contained HTML file (docs/cases.md): the packaged template, style and
script with the data as embedded JSON; no external resource (the page's Content-Security-Policy
forbids every request), so it works as a file and inside `snakemake --report`."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from srrg.cases.build import RunTables, case_list, comparison
from srrg.io import write_text


def _asset(name: str) -> str:
    return files("srrg.cases").joinpath(name).read_text(encoding="utf-8")


def embedded_json(data: Any) -> str:
    """JSON that cannot end the <script> element holding it: every '<' is written as \\u003c."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def subtitle(data: Mapping[str, Any]) -> str:
    unscored = ", ".join(f"{n} {status}" for status, n in data["unscored"].items())
    parts = [
        f"run {data['run']}",
        f"target {data['target'] or 'unknown'}",
        f"{len(data['studies'])} scored studies",
        f"images: {data['images']}",
    ]
    if unscored:
        parts.append(f"not scored: {unscored}")
    if data["explanations"]:
        parts.append("judge explanations: " + ", ".join(data["explanations"]))
    if data["compare"]:
        parts.append("comparison runs: " + ", ".join(c["run"] for c in data["compare"]))
    return " · ".join(parts)


def render_page(data: Mapping[str, Any], title: str) -> str:
    page = _asset("page.html")
    for key, value in (
        ("@@TITLE@@", html.escape(title)),
        ("@@SUBTITLE@@", html.escape(subtitle(data))),
        ("@@CSS@@", _asset("page.css")),
        ("@@JS@@", _asset("page.js")),
    ):
        page = page.replace(key, value)
    return page.replace("@@DATA@@", embedded_json(data))


def write_page(data: Mapping[str, Any], out: str | Path, title: str) -> int:
    """Write the page atomically; returns its size in bytes."""
    text = render_page(data, title)
    write_text(out, text)
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class CasesOptions:
    """Everything one cases page is built from (the `srrg cases` options, docs/cases.md), as one
    value: the stage builds it from the command line and run_cases reads it."""

    run: RunTables
    dataset: Path
    out: Path
    title: str
    split: str = "test"
    judge: Path | None = None
    image_root: str | None = None
    thumbnail_size: int = 64
    processes: int = 1
    cache_dir: Path | None = None
    compare: tuple[RunTables, ...] = ()


def run_cases(options: CasesOptions) -> tuple[dict[str, Any], int]:
    """The cases stage: the run's page data (case_list) with the comparison runs, written as one
    page to options.out; returns the data and the page's size in bytes."""
    o = options
    data = case_list(
        o.run,
        o.dataset,
        o.split,
        judge=o.judge,
        image_root=o.image_root,
        thumbnail_size=o.thumbnail_size,
        processes=o.processes,
        cache_dir=o.cache_dir,
    )
    data["compare"] = [comparison(other) for other in o.compare]
    return data, write_page(data, o.out, o.title)
