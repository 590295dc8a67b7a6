"""The workflow scores a run's raw outputs (workflow/rules/score.smk --hyp-col raw): S-Score's parse
rates are the predictions' parse_status, and S-Score itself is the same as on the parsed reports."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from srrg.metrics.score import run_score
from srrg.model.infer import prediction_fields
from srrg.model.infer_parts import OK, VIEW_FILTERED, scoring_pairs

REF = (
    '{"positive": [{"name": "pleural effusion", "probability": 3, "level": null, "location": null}], "negative": '
    '["pneumothorax"]}'
)
CODE = '```python\nimport json\n\ndef report(data):\n    return json.dumps({"path": data})\n```'
PROSE = "This chest x-ray image contains a report for this chest x-ray image."
VALID_OUT = '{"positive": [], "negative": ["pneumothorax"]}'
FENCED = (
    '```json\n{"positive": [{"name": "pleural effusion", "probability": 3, "level": null, "location": null}], '
    '"negative": []}\n```'
)


def predictions(raws: list[str]) -> pl.DataFrame:
    """Prediction rows as srrg infer writes them (JSON target), plus one study outside the view filter."""
    rows = [
        {"study_id": f"s{i}", "infer_status": OK, "reference": REF, "raw": raw, **prediction_fields(raw, "json")}
        for i, raw in enumerate(raws)
    ]
    rows.append(
        {
            "study_id": "lateral",
            "infer_status": VIEW_FILTERED,
            "reference": REF,
            "raw": None,
            "parse_status": None,
            "structured": None,
            "sentences": None,
            "report": None,
        }
    )
    return pl.DataFrame(
        rows, schema_overrides={k: pl.String for k in ("raw", "parse_status", "structured", "sentences", "report")}
    )


def score(preds: pl.DataFrame, tmp_path: Path, hyp_col: str) -> dict[str, float]:
    path = tmp_path / "pairs.parquet"
    scoring_pairs(preds).write_parquet(path)
    return run_score(path, path, ["s_score"], tmp_path / hyp_col, ref_col="reference", hyp_col=hyp_col)


def status_shares(preds: pl.DataFrame) -> dict[str, float]:
    statuses = preds.filter(pl.col("infer_status") == OK)["parse_status"].to_list()
    return {f"s_score_hyp_{s}": statuses.count(s) / len(statuses) for s in ("valid", "repaired", "unparseable")}


def test_unparseable_raw_outputs_are_counted_unparseable(tmp_path: Path) -> None:
    preds = predictions([CODE, PROSE])
    raw = score(preds, tmp_path, "raw")
    assert (
        {k: raw[k] for k in status_shares(preds)}
        == status_shares(preds)
        == {"s_score_hyp_valid": 0.0, "s_score_hyp_repaired": 0.0, "s_score_hyp_unparseable": 1.0}
    )
    parsed = score(preds, tmp_path, "report")  # the re-serialized empty report parses as valid
    assert parsed["s_score_hyp_valid"] == 1.0
    assert raw["s_score"] == parsed["s_score"] and raw["n_pairs"] == 2  # an empty report either way


def test_parse_rates_equal_the_predictions_parse_status(tmp_path: Path) -> None:
    preds = predictions([VALID_OUT, FENCED, CODE, PROSE])
    raw = score(preds, tmp_path, "raw")
    assert (
        {k: raw[k] for k in status_shares(preds)}
        == status_shares(preds)
        == {"s_score_hyp_valid": 0.25, "s_score_hyp_repaired": 0.25, "s_score_hyp_unparseable": 0.5}
    )
    assert raw["s_score"] == pytest.approx(score(preds, tmp_path, "report")["s_score"])


def test_scoring_pairs_keep_the_raw_output_of_predicted_studies() -> None:
    pairs = scoring_pairs(predictions([CODE]))
    assert pairs.columns == ["study_id", "reference", "report", "raw"]
    assert pairs.rows() == [("s0", REF, '{"positive": [], "negative": []}', CODE)]
