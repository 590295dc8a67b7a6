"""`srrg score` outputs keep full precision: rounding happens only in Markdown (issue 15)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from srrg.metrics.score import run_score


def js(positive=(), negative=()) -> str:
    return json.dumps(
        {
            "positive": [{"name": n, "probability": 3, "level": None, "location": None} for n in positive],
            "negative": list(negative),
        }
    )


def test_summary_csv_is_not_rounded(tmp_path):
    # per-report S: 1 (identical), 0.25 (positive finding missed), 0.75 twice (negatives differ) -> mean 0.6875
    refs = [js(["edema"]), js(["edema"]), js(negative=["pneumothorax"]), js(negative=["pneumothorax"])]
    hyps = [js(["edema"]), js(), js(negative=["edema"]), js(negative=["edema"])]
    for name, texts in (("refs", refs), ("hyps", hyps)):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps({"study_id": f"s{i}", "report": t}) + "\n" for i, t in enumerate(texts))
        )
    summary = run_score(tmp_path / "refs.jsonl", tmp_path / "hyps.jsonl", ["s_score"], tmp_path / "out")
    assert summary["s_score"] == 0.6875
    csv = pl.read_csv(tmp_path / "out" / "summary.csv")
    assert csv["s_score"][0] == 0.6875 and csv["s_score_hyp_valid"][0] == 1.0
    assert "0.6875" in (tmp_path / "out" / "summary.csv").read_text()
    assert "| 0.688 |" in (tmp_path / "out" / "summary.md").read_text()  # Markdown rounds to 3 decimals
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    assert per["s_score"].to_list() == [1.0, 0.25, 0.75, 0.75]
    assert per["p_score"].to_list() == pytest.approx([1.0, 0.5, 0.5, 0.5])
