"""`snakemake --report` captions (workflow/report/*.rst): every caption a rule marks exists, renders
with the repository's config the way Snakemake renders it (Jinja, then reStructuredText), and says
what produced its result (issue 15)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from docutils.core import publish_parts
from jinja2 import Environment, StrictUndefined
from paths import REPO

from srrg.config import load_config

REPORT = REPO / "workflow" / "report"


def marked() -> dict[str, list[str]]:
    """Caption file name -> the report categories it is used with, from the rule files."""
    text = "\n".join(p.read_text() for p in sorted((REPO / "workflow" / "rules").glob("*.smk")))
    out: dict[str, list[str]] = {}
    for caption, category in re.findall(r'caption="\.\./report/([\w.]+)",\s*category="([^"]+)"', text):
        out.setdefault(caption, []).append(category)
    return out


def render(name: str) -> str:
    """The caption as Snakemake renders it: Jinja with `snakemake` (config, wildcards), then RST
    to HTML; undefined names and RST errors fail."""
    config = load_config(REPO / "config.yaml")
    snakemake = SimpleNamespace(config=config, wildcards=SimpleNamespace(dataset="rexval", run="baseline"))
    text = (
        Environment(trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
        .from_string((REPORT / name).read_text())
        .render(snakemake=snakemake)
    )
    return publish_parts(text, writer="html", settings_overrides={"halt_level": 2, "report_level": 5})["body"]


@pytest.mark.parametrize("name", sorted(p.name for p in REPORT.glob("*.rst")))
def test_every_caption_renders_with_the_repository_config(name):
    assert render(name).strip()


def test_marked_captions_exist():
    missing = sorted(name for name in marked() if not (REPORT / name).is_file())
    assert not missing, f"captions referenced by rules but missing: {missing}"


def test_top_caption_describes_the_whole_workflow():
    html = render("workflow.rst")
    assert "data workflow" not in html.lower()
    assert "training" in html and "Tables 1 and 2" in html and "meta-evaluation" in html


def test_result_captions_say_what_produced_them():
    for name in (
        "table1.rst",
        "table2.rst",
        "table3.rst",
        "judge.rst",
        "metaeval.rst",
        "findings.rst",
        "probability.rst",
        "severity.rst",
    ):
        assert "Produced by" in render(name), name
    assert "tokenization" in render("table1.rst") and "r2gen" in render("table1.rst")
    assert "positive findings" in render("severity.rst")  # the severity figure counts findings, not studies


def test_results_are_marked_for_the_report():
    captions = marked()
    for name, category in (
        ("table1.rst", "Result tables"),
        ("table2.rst", "Result tables"),
        ("table3.rst", "Result tables"),
        ("judge.rst", "LLM judges"),
        ("metaeval.rst", "Meta-evaluation"),
        ("severity.rst", "Dataset statistics"),
    ):
        assert category in captions.get(name, []), name
