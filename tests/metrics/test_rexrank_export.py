"""ReXrank in and out (srrg.sources.rexrank; `srrg rexrank-prepare`, `srrg rexrank-export`): a
synthetic test file with exactly the published nesting and keys (invented texts), the references
table with the patient context `srrg score` hands to CRIMSON, and the submission file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main
from srrg.errors import UserError
from srrg.metrics.context import read_contexts
from srrg.sources.rexrank import parse_context, read_test_file

# the keys and nesting of rajpurkarlab/ReXrank data/mimic-cxr/ReXRank_MIMICCXR_test.json (NaN where a
# study has no impression, as the published file writes it); the texts are invented
TEST_TEXT = """{
    "50000001": {
        "image_path": ["/p10/p10000001/s50000001/aaaa.jpg", "/p10/p10000001/s50000001/bbbb.jpg"],
        "section_findings": "Small left pleural effusion.\\nNo pneumothorax.",
        "section_impression": "Small left effusion.",
        "frontal_lateral": ["lateral", "antero-posterior"],
        "split": "test",
        "subject_id": 10000001,
        "context": "Age:50-60.Gender:M.Indication: ___-year-old man with cough.Comparison: ___ radiograph.",
        "key_image_path": "/p10/p10000001/s50000001/bbbb.jpg",
        "report": "Findings: Small left pleural effusion.\\nNo pneumothorax. Impression: Small left effusion."
    },
    "50000002": {
        "image_path": ["/p10/p10000002/s50000002/cccc.jpg"],
        "section_findings": "Mild cardiomegaly.",
        "section_impression": NaN,
        "frontal_lateral": ["antero-posterior"],
        "split": "test",
        "subject_id": 10000002,
        "context": "Indication: Shortness of breath.",
        "key_image_path": "/p10/p10000002/s50000002/cccc.jpg",
        "report": "Findings: Mild cardiomegaly. Impression: None."
    }
}"""
PUBLISHED_KEYS = [
    "image_path",
    "section_findings",
    "section_impression",
    "frontal_lateral",
    "split",
    "subject_id",
    "context",
    "key_image_path",
    "report",
]


@pytest.fixture
def test_file(tmp_path: Path) -> Path:
    path = tmp_path / "ReXRank_MIMICCXR_test.json"
    path.write_text(TEST_TEXT, encoding="utf-8")
    return path


def _predictions(tmp_path: Path, ids: list[str]) -> Path:
    path = tmp_path / "predictions.parquet"
    pl.DataFrame({"study_id": ids, "report": [f"Findings: generated {i}." for i in ids]}).write_parquet(path)
    return path


def test_context_text_splits_into_its_labelled_parts() -> None:
    """Catches the label's period kept in age/sex, comparison swallowed into the indication, or the
    <context> tags of the leaderboard's example file left in a value."""
    assert parse_context("Age:50-60.Gender:M.Indication: ___-year-old man with cough.Comparison: ___ radiograph.") == {
        "age": "50-60",
        "sex": "M",
        "indication": "___-year-old man with cough.",
        "comparison": "___ radiograph.",
    }
    assert parse_context("<context>Indication: Chest pain Comparison: None.</context>") == {
        "indication": "Chest pain",
        "comparison": "None.",
    }
    assert parse_context(float("nan")) == {} and parse_context(None) == {}


def test_prepare_writes_references_with_context_for_crimson(tmp_path, test_file, capsys) -> None:
    """Catches a NaN impression written as text, a reference without the sections, or patient
    context that `srrg score` (read_contexts, what CRIMSON receives) cannot see."""
    out = tmp_path / "refs.parquet"
    assert main(["rexrank-prepare", "--test", str(test_file), "--image-root", "/data/mimic", "--out", str(out)]) == 0
    refs = pl.read_parquet(out)
    assert refs["study_id"].to_list() == ["50000001", "50000002"]
    first, second = refs.to_dicts()
    assert (
        first["report"] == "Findings: Small left pleural effusion.\nNo pneumothorax. Impression: Small left effusion."
    )
    assert second["impression"] is None and second["report"] == "Findings: Mild cardiomegaly."
    assert first["image_paths"] == [
        "/data/mimic/p10/p10000001/s50000001/aaaa.jpg",
        "/data/mimic/p10/p10000001/s50000001/bbbb.jpg",
    ]
    contexts = read_contexts(out, "study_id", ["50000002", "50000001"])
    assert contexts == [
        {"indication": "Shortness of breath."},
        {"age": "50-60", "sex": "M", "indication": "___-year-old man with cough."},
    ]
    assert "2 studies" in capsys.readouterr().out


def test_export_writes_the_published_keys_plus_model_prediction(tmp_path, test_file) -> None:
    """Catches a submission that drops, renames or reorders the test file's keys or studies, loses
    the NaN of a missing section, or names the prediction anything but model_prediction."""
    out = tmp_path / "submission.json"
    preds = _predictions(tmp_path, ["50000002", "50000001"])
    assert main(["rexrank-export", "--test", str(test_file), "--predictions", str(preds), "--out", str(out)]) == 0
    submitted = json.loads(out.read_text(encoding="utf-8"))
    original = json.loads(TEST_TEXT)
    assert list(submitted) == list(original)
    for sid, entry in submitted.items():
        assert list(entry) == [*PUBLISHED_KEYS, "model_prediction"]
        assert entry["model_prediction"] == f"Findings: generated {sid}."
        assert {k: v for k, v in entry.items() if k != "model_prediction" and v == v} == {
            k: v for k, v in original[sid].items() if v == v
        }
    assert "NaN" in out.read_text(encoding="utf-8")


def test_a_study_set_mismatch_is_exit_2_in_one_line(tmp_path, test_file, capsys) -> None:
    """Catches a submission written for the wrong or an incomplete test set (the leaderboard would
    score a different study set)."""
    out = tmp_path / "submission.json"
    for ids in (["50000001"], ["50000001", "50000002", "59999999"]):
        preds = _predictions(tmp_path, ids)
        assert main(["rexrank-export", "--test", str(test_file), "--predictions", str(preds), "--out", str(out)]) == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and "do not match the studies of --test" in err[0]
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2]", "expected a JSON object keyed by study id"),
        ('{"s1": {"image_path": [], "section_findings": "x"}}', "study 's1' lacks key(s) section_impression"),
        ('{"s1": "text"}', "study 's1' is not an object"),
        (
            '{"s1": {"image_path": "a.png", "section_findings": "", "section_impression": ""}}',
            "image_path is not a list",
        ),
        ('{"s1": {', "not readable JSON"),
        (
            '{"s1": {"image_path": [], "section_findings": "", "section_impression": ""}, "s1": {}}',
            "'s1' appears twice",
        ),
    ],
)
def test_a_file_without_the_layout_is_refused(tmp_path, text, why) -> None:
    """Catches a reader that guesses: each refusal is one line naming the file and what is missing."""
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=rf"^{re.escape(str(path))}: not a ReXrank test file: .*{re.escape(why)}"):
        read_test_file(path)
