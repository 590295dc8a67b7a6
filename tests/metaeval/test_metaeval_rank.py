"""RadJudge ranking check (`srrg metaeval-rank`): the layout reader on a synthetic fixture with the
published nesting, RadJudge's pass rule on hand-made scores, and the command end to end."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from paths import FIXTURES, SHARED_DATA

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metaeval.radjudge import category_table, check_cases, holds, metric_keys, parse_relations, read_cases

FIXTURE = FIXTURES / "rating_layouts" / "radjudge"
SHARED = SHARED_DATA / "radjudge" / "ranking_tests.json"


def test_relations_and_the_pass_rule():
    assert parse_relations("C1 > C2", "x") == (("C1", ">", "C2"),)
    assert parse_relations(["C3 > C2", "C2 = C1"], "x") == (("C3", ">", "C2"), ("C2", "=", "C1"))
    for bad in ("C1 >= C2", "", [], ["C1 > C2", 3]):
        with pytest.raises(UserError, match="expected_ranking"):
            parse_relations(bad, "x")
    s = {"C1": 0.5, "C2": 0.5, "C3": 0.509, "C4": 0.52, "C5": math.nan}
    assert not holds(("C1", ">", "C2"), s)  # strictly greater
    assert holds(("C4", ">", "C1"), s)
    assert holds(("C1", "=", "C3"), s) and holds(("C3", "=", "C1"), s)  # |0.009| <= 0.01
    assert not holds(("C1", "=", "C4"), s)  # 0.02 apart
    assert not holds(("C5", "=", "C5"), s) and not holds(("C1", ">", "C5"), s)  # NaN never holds


def test_fixture_layout_and_case_checks_on_hand_scores():
    cases = read_cases(FIXTURE)
    assert [c.case_id for c in cases] == ["x1", "x2", "y1", "y2"]
    assert [c.has_context for c in cases] == [False, False, True, False]
    assert cases[3].relations == (("C1", ">", "C2"), ("C2", ">", "C3")) and set(cases[3].candidates) == {
        "C1",
        "C2",
        "C3",
    }
    scores = {
        "m": [
            {"C1": 1.0, "C2": 0.0},
            {"C1": 0.2, "C2": 0.9},
            {"C1": 0.3, "C2": 0.305},
            {"C1": 0.9, "C2": 0.95, "C3": 0.1},
        ]
    }
    checked = check_cases(cases, scores, {"m": "m"})
    assert checked["passed"].to_list() == [True, False, True, False]
    assert checked["failed"].to_list() == ["", "C1 > C2", "", "C1 > C2"]  # y2: one relation of the chain fails
    table = category_table(checked)
    assert table.rows() == [("Invented Exact Match", 2, 1), ("Invented Ties and Chains", 2, 1), ("Total", 4, 2)]
    assert metric_keys(["bleu", "ce", "rouge_l"], {"bleu": "bleu_1"}) == {
        "bleu": "bleu_1",
        "ce": "ce_f1",
        "rouge_l": "rouge_l",
    }


def test_bad_case_files_are_one_line_errors(tmp_path):
    doc = json.loads((FIXTURE / "ranking_tests.json").read_text())
    doc[0]["tests"][0]["expected_ranking"] = "C1 > C9"
    (tmp_path / "ranking_tests.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r"names \['C9'\]"):
        read_cases(tmp_path)
    (tmp_path / "ranking_tests.json").write_text("[]")
    with pytest.raises(UserError, match="no ranking case"):
        read_cases(tmp_path)


def test_rank_command_on_the_fixture(tmp_path, capsys):
    out = tmp_path / "rank"
    assert (
        srrg_main(
            [
                "metaeval-rank",
                "--cases",
                str(FIXTURE / "ranking_tests.json"),
                "--metrics",
                "rouge_l,ce",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "| Total | 4 |" in printed and "ce (ce_f1)" in printed
    cases = pl.read_csv(out / "rank_cases.csv")
    rouge = cases.filter(pl.col("metric") == "rouge_l")
    # x2 puts the unrelated report first; the exact copy scores 1.0, ties hold, the chain is monotone
    assert rouge["passed"].to_list() == [True, False, True, True]
    assert json.loads(rouge["scores"][2]) == {"C1": 1.0, "C2": 1.0}
    table = pl.read_csv(out / "rank_categories.csv")
    assert table.filter(pl.col("category") == "Total")["rouge_l"][0] == 3
    info = json.loads((out / "info.json").read_text())
    assert info["n_cases"] == 4 and info["n_cases_with_context"] == 1 and info["keys"]["ce"] == "ce_f1"
    assert (
        srrg_main(
            [
                "metaeval-rank",
                "--cases",
                str(FIXTURE),
                "--metrics",
                "rouge_l",
                "--keys",
                "rouge_l=nope",
                "--out",
                str(out),
            ]
        )
        == 2
    )


@pytest.mark.skipif(not SHARED.is_file(), reason="../shared/data/radjudge is absent")
def test_reads_the_published_radjudge_cases_in_place():
    cases = read_cases(SHARED)
    assert len(cases) == 30 and len({c.category for c in cases}) == 10
    assert sum(len(c.relations) > 1 for c in cases) == 6 and sum(c.has_context for c in cases) == 5
