"""The reference runs of Table 1 (docs/model.md, "Tables"): Constant and Ceiling written as runs in
the layout of `srrg infer`, scored by `srrg score`, laid out by `srrg tables`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metrics.base import get_metric
from srrg.metrics.signature import write_signatures
from srrg.reference_runs import base_run, most_frequent_report
from srrg.run_tables import RunEntry, run_tables

EMPTY_PTX = '{"positive": [], "negative": ["pneumothorax"]}'
EFFUSION = (
    '{"positive": [{"name": "pleural effusion", "probability": 3, "level": "small", '
    '"location": "in the lower zone of the right lung"}], "negative": []}'
)
# the columns of infer's predictions.parquet (docs/model.md) and of its pairs.parquet
PREDICTIONS = [
    "study_id",
    "target",
    "infer_status",
    "images",
    "reference",
    "raw",
    "candidates",
    "parse_status",
    "structured",
    "sentences",
    "report",
]
PAIRS = ["study_id", "reference", "report", "raw"]


def test_most_frequent_report_ties_on_the_smaller_json_string() -> None:
    assert most_frequent_report([EMPTY_PTX, EFFUSION, EMPTY_PTX]).negative == ("pneumothorax",)
    assert most_frequent_report([EFFUSION, EMPTY_PTX]).negative == ("pneumothorax",)  # tie
    with pytest.raises(UserError, match="no structured reports"):
        most_frequent_report([])


def test_base_run_has_the_most_studies_first_on_ties() -> None:
    assert base_run({"a": 2, "b": 3, "c": 3}) == "b"
    with pytest.raises(UserError, match="no Structured-First run"):
        base_run({})


def _model_run(root: Path, name: str, images: str, refs: list[str], s_score: float) -> dict[str, str]:
    """A scored Structured-First run: predictions (one study outside the view filter), pairs, summary."""
    folder = root / name
    (folder / "score").mkdir(parents=True)
    ids = [f"s{i}" for i in range(len(refs))]
    pl.DataFrame(
        {
            "study_id": [*ids, "filtered"],
            "infer_status": ["ok"] * len(refs) + ["view_filtered"],
            "images": [images] * (len(refs) + 1),
            "reference": [*refs, EFFUSION],
            "parse_status": ["valid"] * len(refs) + [None],
        }
    ).write_parquet(folder / "predictions.parquet")
    pairs = pl.DataFrame({"study_id": ids, "reference": refs, "report": refs, "raw": refs})
    pairs.write_parquet(folder / "pairs.parquet")
    pl.DataFrame([{"n_pairs": len(refs), "s_score": s_score}]).write_csv(folder / "score" / "summary.csv")
    signature = get_metric("s_score").signature("s_score")  # as srrg score signs it: tables refuse unsigned runs
    write_signatures(folder / "score" / "signatures.csv", dict.fromkeys(("s_score", "p_score", "d_score"), signature))
    return _entry(root, name, "Transformer")


def _entry(root: Path, name: str, label: str) -> dict[str, str]:
    return {
        "name": name,
        "label": label,
        "target": "json",
        "summary": str(root / name / "score" / "summary.csv"),
        "predictions": str(root / name / "predictions.parquet"),
    }


@pytest.fixture()
def scored_references(tmp_path: Path) -> Path:
    """Two Structured-First runs (the second has more studies, so it is the base), the reference
    runs written and scored on S-Score with the ordinary commands."""
    (tmp_path / "ds" / "train").mkdir(parents=True)
    train = pl.DataFrame({"study_id": ["t1", "t2", "t3", "t4"], "structured": [EMPTY_PTX, EFFUSION, EMPTY_PTX, None]})
    train.write_parquet(tmp_path / "ds" / "train" / "part-00000.parquet")
    runs = tmp_path / "runs"
    _model_run(runs, "small", "phantom", [EFFUSION], 0.25)
    _model_run(runs, "base", "phantom", [EMPTY_PTX, EFFUSION], 0.75)
    args = [
        "reference-runs",
        "--pairs",
        str(runs / "small" / "pairs.parquet"),
        "--pairs",
        str(runs / "base" / "pairs.parquet"),
        "--dataset",
        str(tmp_path / "ds"),
        "--out-dir",
        str(runs),
    ]
    assert srrg_main(args) == 0
    for name in ("constant", "ceiling"):
        pairs = runs / name / "pairs.parquet"
        assert (
            srrg_main(
                [
                    "score",
                    "--refs",
                    str(pairs),
                    "--ref-col",
                    "reference",
                    "--hyps",
                    str(pairs),
                    "--hyp-col",
                    "raw",
                    "--metrics",
                    "s_score",
                    "--out",
                    str(runs / name / "score"),
                ]
            )
            == 0
        )
    return runs


def test_reference_runs_are_written_in_the_layout_of_infer(scored_references: Path) -> None:
    constant = pl.read_parquet(scored_references / "constant" / "predictions.parquet")
    ceiling = pl.read_parquet(scored_references / "ceiling" / "predictions.parquet")
    for preds in (constant, ceiling):
        assert preds.columns == PREDICTIONS
        assert preds["study_id"].to_list() == ["s0", "s1"]  # the base run's scored studies, not the filtered one
        assert preds["reference"].to_list() == [EMPTY_PTX, EFFUSION]
        assert set(preds["infer_status"]) == {"ok"} and set(preds["target"]) == {"json"}
        assert preds["parse_status"].null_count() == 2  # written, not generated: nothing was parsed
        assert preds["raw"].to_list() == preds["report"].to_list() == preds["structured"].to_list()
        assert preds["candidates"].to_list() == [[r] for r in preds["raw"]]
    assert json.loads(constant["raw"][0]) == json.loads(constant["raw"][1]) == json.loads(EMPTY_PTX)
    assert constant["images"].null_count() == 2 and set(ceiling["images"]) == {"phantom"}
    assert constant["sentences"][0] == "no evidence of pneumothorax."  # render_sentences
    assert pl.read_parquet(scored_references / "ceiling" / "pairs.parquet").columns == PAIRS


def test_tables_lay_out_the_scored_reference_runs(scored_references: Path, tmp_path: Path) -> None:
    """Hand values: Constant (the empty-pneumothorax report) gets S 1 on the study whose reference it
    is and 0 on the effusion study (P_pos, P_neg and D all 0), so 0.5; both references are fully
    drawable, so Ceiling is 1. Parse rates of reference runs are "-"."""
    runs = [_entry(scored_references, n, "Transformer") for n in ("small", "base")]
    refs = [
        _entry(scored_references, "constant", "Constant (most frequent training report)"),
        _entry(scored_references, "ceiling", "Ceiling (phantom round trip)"),
    ]
    out = tmp_path / "tables"
    args = ["tables", "--runs", json.dumps(runs), "--references", json.dumps(refs), "--out-dir", str(out)]
    assert srrg_main(args) == 0
    t1 = pl.read_csv(out / "table1.csv")
    assert t1["Method"].to_list() == [
        "Transformer",
        "Transformer",
        "Constant (most frequent training report)",
        "Ceiling (phantom round trip)",
    ]
    assert t1["S-Score"].to_list() == [0.25, 0.75, 0.5, 1.0] and t1["Studies"].to_list() == [1, 2, 2, 2]
    assert t1["Parsed"].to_list()[:2] == [1.0, 1.0] and t1["Parsed"].to_list()[2:] == [None, None]
    md = (out / "table1.md").read_text()
    assert "| Constant (most frequent training report) | - | - | - | - | 0.500 | 0.500 | 0.500 | - | - | 2 |" in md
    assert "PHANTOM radiographs" in md and "Constant: the most frequent training report" in md
    assert pl.read_csv(out / "table2.csv")["Method"].to_list() == ["Transformer", "Transformer"]


def test_ceiling_stands_only_beside_runs_that_saw_phantoms(scored_references: Path, tmp_path: Path) -> None:
    pl.read_parquet(scored_references / "base" / "predictions.parquet").with_columns(
        images=pl.lit("real")
    ).write_parquet(scored_references / "base" / "predictions.parquet")
    refs = [RunEntry(**_entry(scored_references, n, n)) for n in ("constant", "ceiling")]
    t1 = run_tables([RunEntry(**_entry(scored_references, "base", "B"))], tmp_path / "t", refs)["table1"]
    assert t1["Method"].to_list() == ["B", "constant"]
    assert math.isclose(t1["S-Score"][1], 0.5)


def test_references_scored_on_other_studies_or_without_a_structured_run_are_refused(
    scored_references: Path, tmp_path: Path
) -> None:
    refs = [RunEntry(**_entry(scored_references, "constant", "Constant"))]
    with pytest.raises(UserError, match="scored on 2 studies, the run small on 1"):
        run_tables([RunEntry(**_entry(scored_references, "small", "S"))], tmp_path / "t", refs)
    sentences = RunEntry(**{**_entry(scored_references, "base", "B"), "target": "sentences"})
    with pytest.raises(UserError, match="no Structured-First run"):
        run_tables([sentences], tmp_path / "t", refs)


def test_reference_runs_without_training_shards_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ds" / "train").mkdir(parents=True)
    _model_run(tmp_path / "runs", "base", "phantom", [EMPTY_PTX], 0.5)
    args = [
        "reference-runs",
        "--pairs",
        str(tmp_path / "runs" / "base" / "pairs.parquet"),
        "--dataset",
        str(tmp_path / "ds"),
        "--out-dir",
        str(tmp_path / "runs"),
    ]
    assert srrg_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"no Parquet shards in {tmp_path / 'ds' / 'train'}" in err


def test_a_reference_named_like_a_run_is_one_line(scored_references: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_entry(scored_references, "base", "B")]
    args = [
        "tables",
        "--runs",
        json.dumps(runs),
        "--references",
        json.dumps(runs),
        "--out-dir",
        str(scored_references / "t"),
    ]
    assert srrg_main(args) == 2
    assert "run name(s) base given twice" in capsys.readouterr().err
