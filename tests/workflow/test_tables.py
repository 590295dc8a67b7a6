"""Result tables: parse rates, Table 1 / Table 2 layouts, Markdown and LaTeX rendering."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.run_tables import RunEntry, latex_escape, parse_rates, run_tables, to_html, to_markdown


def test_parse_rates_hand_values() -> None:
    assert parse_rates(["valid", "repaired", "unparseable", "valid"]) == {"parsed": 0.75, "valid": 0.5}
    assert all(math.isnan(v) for v in parse_rates([None, None]).values())


def _run(
    tmp: Path, name: str, label: str, target: str, metrics: dict[str, float], statuses: list[str | None]
) -> dict[str, str]:
    (tmp / name).mkdir(parents=True)
    signed = {f"signature_{k}": f"{k}|fixture" for k in metrics}  # srrg tables refuses unsigned runs
    pl.DataFrame([{"n_pairs": len(statuses), **metrics, **signed}]).write_csv(tmp / name / "summary.csv")
    pl.DataFrame({"parse_status": statuses}, schema={"parse_status": pl.String}).write_parquet(tmp / name / "p.parquet")
    return {
        "name": name,
        "label": label,
        "target": target,
        "summary": str(tmp / name / "summary.csv"),
        "predictions": str(tmp / name / "p.parquet"),
    }


def test_tables_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nlg = {"bleu_1": 0.5, "bleu_2": 0.4, "bleu_3": 0.3, "bleu_4": 0.2, "meteor": 0.25, "rouge_l": 0.45}
    runs = [
        _run(tmp_path, "q_sent", "Qwen", "sentences", nlg, [None, None]),
        _run(
            tmp_path,
            "q_json",
            "Qwen",
            "json",
            {**nlg, "p_score": 0.6, "d_score": 0.4, "s_score": 0.5},
            ["valid", "unparseable"],
        ),
        _run(tmp_path, "base", "Transformer", "json", {**nlg, "s_score": 0.3}, ["valid", "repaired"]),
    ]
    # base has no p_score (so no signature for it): a mixed column, put together as asked
    args = ["tables", "--runs", json.dumps(runs), "--out-dir", str(tmp_path / "out"), "--allow-mixed"]
    assert srrg_main(args) == 0
    t1 = pl.read_csv(tmp_path / "out" / "table1.csv")
    assert t1.columns == [
        "Method",
        "BLEU-1",
        "BLEU-4",
        "METEOR",
        "ROUGE",
        "P-Score",
        "D-Score",
        "S-Score",
        "Parsed",
        "Valid",
        "Studies",
    ]
    assert t1["Studies"].to_list() == [2, 2]
    assert t1["Method"].to_list() == ["Qwen", "Transformer"] and t1["S-Score"].to_list() == [0.5, 0.3]
    assert t1["Parsed"].to_list() == [0.5, 1.0] and t1["Valid"].to_list() == [0.5, 0.5]
    assert t1["P-Score"][1] is None  # missing metric -> empty cell (and "-" in Markdown)
    t2 = pl.read_csv(tmp_path / "out" / "table2.csv")
    assert t2.select("Method", "Target").rows() == [
        ("Qwen", "Structured-First"),
        ("Qwen", "Sentence-Direct"),
        ("Transformer", "Structured-First"),
    ]
    assert t2.columns[2:8] == ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE"]
    md = (tmp_path / "out" / "table1.md").read_text()
    assert "| Transformer | 0.500 | 0.200 | 0.250 | 0.450 | - | - | 0.300 | 1.000 | 0.500 | 2 |" in md
    tex = (tmp_path / "out" / "table2.tex").read_text()
    assert "<td>Transformer</td><td>0.500</td>" in (tmp_path / "out" / "table1.html").read_text()
    assert r"\begin{tabular}{llrrrrrrrrrrrr}" in tex  # Method, Target, 6 NLG, 3 structured, 3 counts
    assert "Qwen & Sentence-Direct & 0.500" in tex and r"\bottomrule" in tex
    assert "table1:" in capsys.readouterr().out


def test_bad_summary_is_reported(tmp_path: Path) -> None:
    entry = _run(tmp_path, "x", "X", "json", {"bleu_1": 0.1}, ["valid"])
    pl.DataFrame({"bleu_1": [0.1, 0.2]}).write_csv(entry["summary"])
    with pytest.raises(ValueError, match="one summary row"):
        run_tables([RunEntry(**entry)], tmp_path / "out")


def test_predictions_without_parse_status_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A predictions file that is not infer's (here refs/hyps of a scored pair set) is one line
    naming it, exit 2, not a ColumnNotFoundError traceback."""
    entry = _run(tmp_path, "x", "X", "sentences", {"bleu_1": 0.1}, [None])
    pl.DataFrame({"study_id": ["1"], "report": ["Clear lungs."]}).write_parquet(entry["predictions"])
    assert srrg_main(["tables", "--runs", json.dumps([entry]), "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "p.parquet: lacks column 'parse_status'" in err and "srrg infer" in err


def test_markdown_and_latex_helpers() -> None:
    df = pl.DataFrame({"Method": ["a_b"], "S": [float("nan")]})
    assert to_markdown(df) == "| Method | S |\n|---|---|\n| a_b | - |\n"
    assert latex_escape("a_b & 50%") == r"a\_b \& 50\%"


def test_html_table_is_escaped_and_rounded_like_markdown() -> None:
    html = to_html(pl.DataFrame({"Method": ["<b>&"], "S": [0.12345], "P": [float("nan")]}), "Scores < 1")
    assert "<caption>Scores &lt; 1</caption>" in html and "<th>Method</th><th>S</th><th>P</th>" in html
    assert "<tr><td>&lt;b&gt;&amp;</td><td>0.123</td><td>-</td></tr>" in html


def test_full_precision_csv(tmp_path: Path) -> None:
    entry = _run(tmp_path, "r", "R", "json", {"s_score": 0.123456789}, ["valid"])
    run_tables([RunEntry(**entry)], tmp_path / "out")
    assert "0.123456789" in (tmp_path / "out" / "table1.csv").read_text()
