"""Tiny run folders for `srrg cases` tests, in the layouts the workflow writes (docs/workflow.md):
dataset/test/part-00000.parquet, a run's predictions.parquet (srrg infer's columns) and
score/per_report.parquet written by the real `srrg score` code, plus a judge per-report table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from srrg.metrics.score import run_score
from srrg.report import parse_report, render_sentences


def f(name: str, probability: int | None = 3, level: str | None = None, location: str | None = None) -> dict[str, Any]:
    return {"name": name, "probability": probability, "level": level, "location": location}


def rep(positive=(), negative=()) -> str:
    return json.dumps({"positive": list(positive), "negative": list(negative)})


# study -> (reference, baseline prediction, other run's prediction); s6 is outside the view filter
REFERENCES = {
    "s1": rep([f("pleural effusion", 3, "small", "left")], ["pneumothorax"]),
    "s2": rep([f("pleural effusion", 3, None, "right"), f("cardiomegaly", 3, "mild")]),
    "s3": rep([f("edema", 2)]),
    "s4": rep([], ["pneumothorax"]),
    "s5": rep([f("pleural effusion", 3, "large", "bilateral"), f("atelectasis", 2, None, "left lower lobe")]),
    "s6": rep([f("nodule")]),
}
PREDICTIONS = {
    "s1": REFERENCES["s1"],
    "s2": rep([f("pleural effusion", 2, None, "right")], ["pneumothorax"]),
    "s3": "the lungs are clear {",
    "s4": rep([f("nodule")]),
    # a trailing comma: `repaired`, the same report
    "s5": rep([f("pleural effusion", 3, "large", "bilateral"), f("atelectasis", 2, None, "right upper lobe")])[:-1]
    + ",}",
}
OTHER = {
    "s1": rep([], ["pneumothorax"]),
    "s2": REFERENCES["s2"],
    "s3": REFERENCES["s3"],
    "s4": rep([], ["pneumothorax"]),
    "s5": rep([f("pleural effusion", 3, "large", "bilateral")]),
}


def write_dataset(root: Path) -> Path:
    rows = [
        {
            "study_id": s,
            "split": "test",
            "structured": ref,
            "sentences": render_sentences(parse_report(ref)[0]),
            "image_paths": [f"{s}.png"],
        }
        for s, ref in REFERENCES.items()
    ]
    (root / "dataset" / "test").mkdir(parents=True)
    pl.DataFrame(rows).write_parquet(root / "dataset" / "test" / "part-00000.parquet")
    return root / "dataset"


def write_run(
    root: Path, name: str, hyps: dict[str, str], metrics=("s_score", "rouge_l"), target: str = "json"
) -> tuple[Path, Path]:
    """predictions.parquet (every reference study; s6 view_filtered) and the score stage's outputs.
    A run whose predictions are sentences has infer's Sentence-Direct columns: the reference as its
    sentence rendering, no parse status, no structured prediction."""
    folder = root / "runs" / name
    folder.mkdir(parents=True)
    records = []
    for sid, ref in REFERENCES.items():
        raw = hyps.get(sid)
        json_target = target == "json"
        report, status = parse_report(raw) if raw is not None and json_target else (None, None)
        records.append(
            {
                "study_id": sid,
                "target": target,
                "infer_status": "ok" if raw is not None else "view_filtered",
                "images": "phantom",
                "reference": ref if json_target else render_sentences(parse_report(ref)[0]),
                "raw": raw,
                "parse_status": status,
                "structured": report.to_json() if report else None,
                "sentences": render_sentences(report) if report else raw,
                "report": report.to_json() if report else raw,
            }
        )
    preds = pl.DataFrame(records, schema_overrides={"raw": pl.String, "parse_status": pl.String})
    preds.write_parquet(folder / "predictions.parquet")
    pairs = preds.filter(pl.col("infer_status") == "ok").select("study_id", "reference", "report", "raw")
    pairs.write_parquet(folder / "pairs.parquet")
    run_score(
        folder / "pairs.parquet",
        folder / "pairs.parquet",
        list(metrics),
        folder / "score",
        ref_col="reference",
        hyp_col="raw",
    )
    return folder / "predictions.parquet", folder / "score" / "per_report.parquet"


def write_judge(root: Path, name: str) -> Path:
    """A judge per-report table on a two-study subset (GREEN's columns)."""
    path = root / "judge" / name / "per_report.parquet"
    path.parent.mkdir(parents=True)
    pl.DataFrame(
        {
            "study_id": ["s1", "s2"],
            "reference": [REFERENCES["s1"], REFERENCES["s2"]],
            "hypothesis": [PREDICTIONS["s1"], PREDICTIONS["s2"]],
            "green": [1.0, 0.5],
            "green_status": ["ok", "truncated"],
            "green_explanation": ["All findings match.", "Cardiomegaly <b>omitted</b>; effusion less certain."],
        }
    ).write_parquet(path)
    return path


def write_fixture(root: Path) -> dict[str, Path]:
    dataset = write_dataset(root)
    preds, scores = write_run(root, "base", PREDICTIONS)
    other_preds, other_scores = write_run(root, "other", OTHER)
    return {
        "dataset": dataset,
        "predictions": preds,
        "scores": scores,
        "judge": write_judge(root, "base"),
        "other_predictions": other_preds,
        "other_scores": other_scores,
    }


def cases_command(files: dict[str, Path], out: Path) -> list[str]:
    """`srrg cases` over the fixture: the judged run `base` with run `other` as comparison."""
    return [
        "cases",
        "--predictions",
        str(files["predictions"]),
        "--scores",
        str(files["scores"]),
        "--dataset",
        str(files["dataset"]),
        "--judge",
        str(files["judge"]),
        "--compare",
        "other",
        str(files["other_predictions"]),
        str(files["other_scores"]),
        "--name",
        "base",
        "--out",
        str(out),
    ]
