"""The case page on hostile or careless inputs (docs/cases.md, "Size and speed"): a poisoned or
non-ASCII thumbnail cache entry, a cache file that is no cache, ±inf scores, and markup in every
name the page prints (run names, column names, study ids, statuses, title and subtitle). Issue 39
(a poisoned cache file ran an onerror handler; ±inf and a non-ASCII cache file gave tracebacks) and
issue 38 (markup beyond the report texts). The poisoning also runs through the page in headless
Chromium."""

from __future__ import annotations

import json
import math
import re
import shutil
import sqlite3
import subprocess
from contextlib import closing
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from cases_fixtures import cases_command, write_fixture

from srrg.cases import thumbs
from srrg.cli import main
from srrg.report import StructuredReport

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
# a payload that marks the document when it runs: the browser test looks for the mark
XSS = "<img src=x onerror=\"document.body.dataset.pwned='1'\">"
POISON = "data:image/jpeg;base64,AAAA\" onerror=\"document.body.dataset.pwned='1'"


def embedded(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(text.split('<script type="application/json" id="cases-data">', 1)[1].split("</script>", 1)[0])


def _poison_cache(cache: Path, content: bytes) -> int:
    """Overwrite every cached thumbnail with `content` (text where it decodes, else raw bytes)."""
    try:
        value: str | bytes = content.decode("utf-8")
    except UnicodeDecodeError:
        value = content
    with closing(sqlite3.connect(cache / thumbs.CACHE_FILE)) as conn, conn:
        return conn.execute("UPDATE thumbnails SET uri = ?", (value,)).rowcount


def _cached(cache: Path) -> list[str | bytes]:
    with closing(sqlite3.connect(cache / thumbs.CACHE_FILE)) as conn:
        return [uri for (uri,) in conn.execute("SELECT uri FROM thumbnails")]


@pytest.mark.parametrize(
    "content",
    [POISON.encode(), "data:image/jpeg;base64,ÄÖ".encode(), b"\xff\xfe"],
    ids=["markup", "non-ascii", "bytes"],
)
def test_a_cache_entry_that_is_not_a_drawn_thumbnail_is_drawn_again(tmp_path, content):
    """Bug: the cached text was embedded as read (a quote and an onerror handler end up in <img src>),
    and a non-ASCII file raised UnicodeDecodeError out of the page writer."""
    report = StructuredReport(positive=[], negative=["pneumothorax"])
    first = thumbs.thumbnails("phantom", ["a"], [report], [None], 32, cache_dir=tmp_path)
    assert _poison_cache(tmp_path, content) == 1
    again = thumbs.thumbnails("phantom", ["a"], [report], [None], 32, cache_dir=tmp_path)
    assert again == first and again[0][0].startswith("data:image/jpeg;base64,")
    assert _cached(tmp_path) == [first[0][0]]  # the entry is replaced


@pytest.mark.parametrize("kind", ["text", "folder", "other table"])
def test_a_cache_file_that_is_no_thumbnail_cache_is_one_line(tmp_path, capsys, kind):
    """A damaged cache file (or a folder, or another program's database in its place) is named in
    one line, exit 2, not a traceback from SQLite."""
    files = write_fixture(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    target = cache / thumbs.CACHE_FILE
    if kind == "text":
        target.write_bytes(b"not a database\n" * 100)
    elif kind == "folder":
        target.mkdir()
    else:
        with closing(sqlite3.connect(target)) as conn, conn:
            conn.execute("CREATE TABLE thumbnails (id INTEGER)")
    assert main(cases_command(files, tmp_path / "c.html") + ["--cache-dir", str(cache)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not a usable thumbnail cache" in err and "Traceback" not in err
    assert not (tmp_path / "c.html").exists()


def _with_scores(path: Path, values: dict[str, float]) -> None:
    df = pl.read_parquet(path)
    col = pl.Series("s_score", [values.get(s, v) for s, v in zip(df["study_id"], df["s_score"])], dtype=pl.Float64)
    df.with_columns(col).write_parquet(path)


def test_infinite_scores_are_na_not_a_traceback(tmp_path, capsys):
    """Bug: ±inf in per_report.parquet raised `ValueError: Out of range float values are not JSON
    compliant` out of `srrg cases` (only NaN was mapped to null)."""
    files = write_fixture(tmp_path)
    _with_scores(files["scores"], {"s1": math.inf, "s2": -math.inf})
    out = tmp_path / "cases.html"
    assert main(cases_command(files, out)) == 0, capsys.readouterr().err
    data = embedded(out)
    col = data["scores"].index("s_score")
    by_id = {s["id"]: s["sc"][col] for s in data["studies"]}
    assert by_id["s1"] is None and by_id["s2"] is None and by_id["s4"] == 0.0


def _rename_ids(files: dict[str, Path], new: dict[str, str]) -> None:
    """Give studies other ids in every table of the fixture (dataset, both runs, judge)."""
    paths = [files["dataset"] / "test" / "part-00000.parquet"]
    paths += [files[k] for k in ("predictions", "scores", "judge", "other_predictions", "other_scores")]
    for path in paths:
        df = pl.read_parquet(path)
        df.with_columns(pl.col("study_id").replace(new)).write_parquet(path)


def hostile_page(root: Path) -> tuple[Path, list[str]]:
    """A page whose run names, a score column, a status column, an explanation column, a study id,
    the title and (through the comparison run) the subtitle hold markup, and whose thumbnail cache
    is poisoned; returns the page and the names that must show as text."""
    files = write_fixture(root)
    sid, run, other, title = f"s1{XSS}", f"base{XSS}", f"other{XSS}", f"Cases {XSS}"
    _rename_ids(files, {"s1": sid})
    scores = pl.read_parquet(files["scores"])
    scores.rename({"rouge_l": f"rouge{XSS}"}).write_parquet(files["scores"])
    judge = pl.read_parquet(files["judge"])
    judge.rename({"green_status": f"g{XSS}_status", "green_explanation": f"g{XSS}_explanation"}).write_parquet(
        files["judge"]
    )
    out = root / "cases.html"
    argv = cases_command(files, out)
    argv[argv.index("--compare") + 1] = other
    argv[argv.index("--name") + 1] = run
    cache = root / "thumbs"
    argv += ["--title", title, "--cache-dir", str(cache)]
    assert main(argv) == 0
    assert _poison_cache(cache, POISON.encode()) == 5
    assert main(argv) == 0
    return out, [sid, run, other, title, f"rouge{XSS}", f"g{XSS}_status", f"g{XSS}_explanation"]


def test_markup_in_every_name_and_the_cache_stays_text_in_the_file(tmp_path):
    """Bug: a name printed without escaping (title, subtitle) or a cache text embedded as read;
    the embedded data holds no `</script>` and no cache text that is not a data URI."""
    page, names = hostile_page(tmp_path)
    text = page.read_text(encoding="utf-8")
    static = text.split('<script type="application/json"', 1)[0]
    assert "<img" not in static and "&lt;img src=x onerror=" in static  # title and subtitle, escaped
    data = embedded(page)
    assert all(re.fullmatch(r"data:image/jpeg;base64,[A-Za-z0-9+/]+=*", s["img"]) for s in data["studies"])
    assert {data["run"], *data["scores"], *data["statuses"], *data["explanations"]} >= {names[1], names[4]}
    assert names[0] in {s["id"] for s in data["studies"]} and data["compare"][0]["run"] == names[2]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (Debian: apt-get install chromium)")
def test_no_payload_runs_in_the_browser_and_each_name_shows_as_text(tmp_path):
    """Bug (issue 39): the poisoned cache file's onerror handler ran in the page; (issue 38) a name
    the script inserts without esc() (run, column, id, status, explanation) would run it too. The
    page is opened in every view that prints those names: the list with the comparison and a sort,
    and the figure view."""
    from urllib.parse import quote

    page, names = hostile_page(tmp_path)
    views = ["", f"compare={quote(names[2])}&sort=s_score", f"view=figure&figure={quote(names[0])}"]
    for view in views:
        url = page.as_uri() + (f"#{view}" if view else "")
        proc = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=5000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        tags = Tags()
        tags.feed(proc.stdout)
        assert "pwned" not in tags.body_data, view  # the payload's mark on <body>: it never ran
        assert tags.handlers == [] and tags.images and set(tags.images) == {"thumb"}, view
        assert sum(t.count("<img src=x onerror=") for t in tags.text) >= 3, view  # shown as text


class Tags(HTMLParser):
    """What the browser built: event-handler attributes, the class of each <img>, <body>'s data-*
    attributes and the text shown."""

    def __init__(self) -> None:
        super().__init__()
        self.handlers: list[str] = []
        self.images: list[str] = []
        self.body_data = ""
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.handlers += [f"{tag} {k}" for k, _ in attrs if k.startswith("on")]
        if tag == "img":
            self.images.append(dict(attrs).get("class") or "")
        if tag == "body":
            self.body_data = " ".join(k for k, _ in attrs if k.startswith("data-"))

    def handle_data(self, data):
        self.text.append(data)
