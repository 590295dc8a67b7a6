"""The cases page in a real browser: headless Chromium (Debian package `chromium`, installed by
`make test`) opens a page built from tiny run files, and the demo's page (before `make demo`, a page
of the demo's size from synthetic runs), in views set through the URL hash (sort by S-Score, filter
by a finding, the figure view), and the test reads the DOM the script built (`--dump-dom`: row
counts and order). Screenshots go to results/cases/ for a person to look at. Skipped, saying so,
when no Chromium is installed."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from cases_fixtures import cases_command, write_fixture
from paths import REPO

from srrg.cli import main

SHOTS = REPO / "results" / "cases"
DEMO_PAGE = REPO / "results" / "cases" / "transformer_json.html"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no chromium binary on PATH (Debian: apt-get install chromium; .ci/run installs it)"
    ),
]


def chromium(tmp_path: Path, *args: str, timeout: float = 90) -> str:
    profile = tmp_path / "chromium-profile"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class Cases(HTMLParser):
    """The ids and sort keys of the case cards in the list and in the figure, and the summary."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.listed: list[tuple[str, str]] = []
        self.figure: list[str] = []
        self.matching: str | None = None
        self.hidden: set[str] = set()
        self.sort_buttons: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") in ("list-view", "figure") and "hidden" in a:
            self.hidden.add(a["id"])
        if a.get("id") in ("cases", "figure-grid"):
            self.stack.append(a["id"])
        if tag == "li" and "case" in (a.get("class") or "").split():
            (
                self.listed.append((a["data-id"], a.get("data-sort", "")))
                if self.stack[-1] == "cases"
                else self.figure.append(a["data-id"])
            )
        if a.get("id") == "summary":
            self.matching = a.get("data-matching")
        if tag == "button" and "data-sort" in a:
            self.sort_buttons.append(a["data-sort"])


def open_view(tmp_path: Path, page: Path, view: str) -> Cases:
    parser = Cases()
    parser.feed(chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", f"{page.as_uri()}#{view}"))
    return parser


def screenshot(tmp_path: Path, page: Path, view: str, name: str, height: int = 1400) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    out = SHOTS / name
    chromium(
        tmp_path,
        "--virtual-time-budget=5000",
        f"--window-size=1280,{height}",
        f"--screenshot={out}",
        f"{page.as_uri()}#{view}",
    )
    assert out.stat().st_size > 10_000
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cases-browser")
    files = write_fixture(root)
    out = root / "cases.html"
    assert main(cases_command(files, out)) == 0
    return out


def embedded(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(text.split('<script type="application/json" id="cases-data">', 1)[1].split("</script>", 1)[0])


def test_sorted_by_s_score_worst_first(page, tmp_path):
    view = open_view(tmp_path, page, "sort=s_score")
    # S-Scores of the fixture (test_cases.py checks the alignment): s4 0, s3 .25, s2 .396, s5 .926, s1 1
    assert [i for i, _ in view.listed] == ["s4", "s3", "s2", "s5", "s1"]
    keys = [float(k) for _, k in view.listed]
    assert keys == sorted(keys) and view.matching == "5"
    best = open_view(tmp_path, page, "sort=s_score&dir=desc")
    assert [i for i, _ in best.listed] == ["s1", "s5", "s2", "s3", "s4"]
    assert "s_score" in view.sort_buttons  # sort controls are <button>s: focusable, Enter/Space sort


def test_filter_by_a_reference_finding_and_by_status(page, tmp_path):
    view = open_view(tmp_path, page, "sort=s_score&finding=" + quote("pleural effusion"))
    assert [i for i, _ in view.listed] == ["s2", "s5", "s1"] and view.matching == "3"
    missed = open_view(tmp_path, page, "finding=cardiomegaly&fmode=missed")
    assert [i for i, _ in missed.listed] == ["s2"]
    unparseable = open_view(tmp_path, page, "status=" + quote("parse_status=unparseable"))
    assert [i for i, _ in unparseable.listed] == ["s3"]
    truncated = open_view(tmp_path, page, "status=" + quote("green_status=truncated"))
    assert [i for i, _ in truncated.listed] == ["s2"]


def test_comparison_difference_sorts_and_paging_limits_the_rows(page, tmp_path):
    # S-Score of this run minus `other`'s: s4 0 - 1, s3 0.25 - 1, s2 0.396 - 1, s5 0.926 - 0.667, s1 1 - 0.25
    view = open_view(tmp_path, page, "compare=other&sort=" + quote("diff:s_score"))
    assert [i for i, _ in view.listed] == ["s4", "s3", "s2", "s5", "s1"]
    assert [float(k) for _, k in view.listed] == pytest.approx(
        [-1.0, -0.75, 0.3958 - 1.0, 0.9263 - 0.6667, 0.75], abs=1e-3
    )
    paged = open_view(tmp_path, page, "sort=s_score&n=2&page=2")
    assert [i for i, _ in paged.listed] == ["s2", "s5"] and paged.matching == "5"


def test_figure_view_holds_the_chosen_studies_and_prints_on_one_page(page, tmp_path):
    view = open_view(tmp_path, page, "view=figure&figure=s2,s5,s3,s4")
    assert view.figure == ["s2", "s5", "s3", "s4"] and "list-view" in view.hidden
    pdf = tmp_path / "figure.pdf"
    chromium(
        tmp_path,
        "--virtual-time-budget=5000",
        "--no-pdf-header-footer",
        f"--print-to-pdf={pdf}",
        f"{page.as_uri()}#view=figure&figure=s2,s5,s3,s4",
    )
    assert len(re.findall(rb"/Type\s*/Page\b", pdf.read_bytes())) == 1
    screenshot(tmp_path, page, "view=figure&figure=s2,s5,s3,s4", "browser_test_figure.png", height=1100)


def test_screenshot_of_the_sorted_and_filtered_list(page, tmp_path):
    shot = screenshot(
        tmp_path, page, "sort=s_score&compare=other&finding=" + quote("pleural effusion"), "browser_test.png"
    )
    assert shot.is_file()


@pytest.fixture(scope="module")
def demo_sized_page(tmp_path_factory) -> Path:
    """The demo's page when `make demo` wrote one, else a page of the demo's size (200 test studies
    and a comparison run) from the seeded synthetic runs of benchmarks/cases_page.py, written by
    `srrg cases` as the workflow's cases rule does."""
    if DEMO_PAGE.is_file():
        return DEMO_PAGE
    spec = importlib.util.spec_from_file_location("cases_page", REPO / "benchmarks" / "cases_page.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    root = tmp_path_factory.mktemp("demo-sized")
    files = bench.write_inputs(root, 200)
    base, other = files["base"], files["other"]
    out = root / "transformer_json.html"
    command = ["cases", "--predictions", str(base / "predictions.parquet"), "--dataset", str(files["dataset"])]
    command += ["--scores", str(base / "score" / "per_report.parquet"), "--name", "transformer_json"]
    command += ["--compare", "other", str(other / "predictions.parquet"), str(other / "score" / "per_report.parquet")]
    assert main([*command, "--out", str(out)]) == 0
    return out


def test_demo_page_sorts_and_filters(tmp_path, demo_sized_page):
    data = embedded(demo_sized_page)
    col = data["scores"].index("s_score")
    n = len(data["studies"])
    view = open_view(tmp_path, demo_sized_page, f"sort=s_score&n={n}")
    assert len(view.listed) == n and view.matching == str(n)
    keys = [float(k) for _, k in view.listed if k != ""]
    assert keys == sorted(keys)
    counts: dict[str, int] = {}
    for s in data["studies"]:
        for name in {r[0] for r in s["f"] if r[1] and r[2] != 3}:
            counts[name] = counts.get(name, 0) + 1
    finding, expected = max(counts.items(), key=lambda kv: kv[1])
    filtered = open_view(tmp_path, demo_sized_page, f"sort=s_score&n={n}&finding={quote(finding)}")
    assert len(filtered.listed) == expected
    worst = min(s["sc"][col] for s in data["studies"] if s["sc"][col] is not None)
    assert float(view.listed[0][1]) == pytest.approx(worst)
    screenshot(tmp_path, demo_sized_page, f"sort=s_score&finding={quote(finding)}", "demo_browser_test.png")
