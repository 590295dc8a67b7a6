"""The temporal-claim measure (issue 49): comparisons with a prior study stated by generated
reports, split by whether the study has a prior. Hand-written fixture with known rates."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.metrics import evaluate
from srrg.metrics.temporal import states_comparison, temporal_claims
from srrg.run_tables import RunEntry, run_tables

# study -> (prior_study_id, generated report); 4 without a prior (1 states a comparison), 2 with one (both do)
FIXTURE = {
    "s1": (None, "Heart size is enlarged. No pleural effusion."),
    "s2": (None, "Unchanged mild cardiomegaly."),  # invented: no prior to compare with
    "s3": (None, "Increased interstitial markings. The lungs are otherwise clear."),
    "s4": (None, "Small left effusion. No pneumothorax."),
    "s5": ("s0", "No new consolidation compared with the prior radiograph."),
    "s6": ("s9", "Left effusion has decreased since the prior study."),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Unchanged cardiomegaly.", True),
        ("No significant change.", True),
        ("Stable small effusion.", True),
        ("Improved aeration at the left base.", True),
        ("Worsening edema.", True),
        ("New right lower lobe opacity.", True),
        ("No new consolidation.", True),
        ("Interval resolution of the effusion.", True),
        ("Persistent atelectasis.", True),
        ("Again seen is a small nodule.", True),
        ("As compared to the previous radiograph, the tube is in place.", True),
        ("Opacity has increased.", True),
        ("Heart size is enlarged.", False),
        ("Increased interstitial markings.", False),  # a density, not a change over time
        ("No pleural effusion or pneumothorax.", False),
        ("", False),
    ],
)
def test_states_comparison(text, expected):
    """A phrase list that misses "no new" or fires on "enlarged" would move both rates."""
    assert states_comparison(text) is expected


def test_rates_hand_counted():
    hyps = [h for _, h in FIXTURE.values()]
    result = temporal_claims(hyps, [p is not None for p, _ in FIXTURE.values()])
    assert result.per_report["temporal_claim"] == [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    assert result.summary == {
        "temporal_claim_rate": 0.5,
        "temporal_claim_rate_no_prior": 0.25,
        "temporal_claim_rate_with_prior": 1.0,
        "temporal_claim_n_no_prior": 4.0,
        "temporal_claim_n_with_prior": 2.0,
    }


def test_without_prior_information_only_the_overall_rate():
    """Refs without a prior column must not count every study as 'no prior' (that would inflate the
    hallucination rate): the split rates are NaN."""
    summary = evaluate(["r"] * 2, ["Stable.", "Clear."], ["temporal_claims"])
    assert summary["temporal_claim_rate"] == 0.5
    assert math.isnan(summary["temporal_claim_rate_no_prior"]) and math.isnan(summary["temporal_claim_rate_with_prior"])


def _fixture_files(tmp_path: Path) -> tuple[Path, Path]:
    refs, hyps = tmp_path / "refs.parquet", tmp_path / "hyps.parquet"
    pl.DataFrame(
        {"study_id": list(FIXTURE), "report": ["ref"] * 6, "prior_study_id": [p for p, _ in FIXTURE.values()]},
        schema_overrides={"prior_study_id": pl.String},
    ).write_parquet(refs)
    pl.DataFrame({"study_id": list(FIXTURE), "report": [h for _, h in FIXTURE.values()]}).write_parquet(hyps)
    return refs, hyps


def test_score_reads_the_prior_column_and_table1_shows_the_rates(tmp_path):
    """End to end: `srrg score` takes has-prior from the refs' prior_study_id (as ingest writes
    it), writes the per-report column, and `srrg tables` adds the two Table 1 columns."""
    refs, hyps = _fixture_files(tmp_path)
    out = tmp_path / "score"
    args = ["score", "--refs", str(refs), "--hyps", str(hyps), "--metrics", "temporal_claims", "--out", str(out)]
    assert srrg_main(args) == 0
    per_report = pl.read_parquet(out / "per_report.parquet")
    assert per_report["temporal_claim"].to_list() == [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    summary = pl.read_csv(out / "summary.csv").row(0, named=True)
    assert summary["temporal_claim_rate_no_prior"] == 0.25 and summary["temporal_claim_rate_with_prior"] == 1.0
    preds = tmp_path / "preds.parquet"
    pl.DataFrame({"study_id": list(FIXTURE), "parse_status": ["valid"] * 6}).write_parquet(preds)
    entry = RunEntry("run", "Model", "json", str(out / "summary.csv"), str(preds))
    t1 = run_tables([entry], tmp_path / "tables", allow_mixed=True)["table1"]
    assert t1["Temporal (no prior)"].to_list() == [0.25] and t1["Temporal (prior)"].to_list() == [1.0]
    assert json.dumps(t1.columns).count("Temporal") == 2


def test_a_study_without_a_date_is_unknown_not_first(tmp_path):
    """IU X-ray publishes no dates (ingest's prior_status no_date): counting its studies as 'no
    prior' would call every comparison in them invented."""
    from srrg.metrics.context import read_contexts

    refs = tmp_path / "refs.parquet"
    pl.DataFrame(
        {
            "study_id": ["a", "b", "c"],
            "report": ["x"] * 3,
            "prior_study_id": [None, "z", None],
            "prior_status": ["no_date", "ok", "first"],
        }
    ).write_parquet(refs)
    assert read_contexts(refs, "study_id", ["a", "b", "c"]) == [{}, {"prior": "yes"}, {"prior": "no"}]


def test_table1_has_no_temporal_columns_unless_scored(tmp_path):
    """Existing tables must keep their columns when the measure was not requested."""
    from srrg.run_tables import requested_columns

    assert requested_columns({"run": {"bleu_1": 0.5}}) == ()
