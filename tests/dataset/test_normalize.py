"""Location normalization: the rules normalizer's canonical phrases, LLM answer validation and fallback,
the stage (every row accounted for, phrases table, warm rerun) and that no report text is sent."""

from __future__ import annotations

import json
from dataclasses import replace

import polars as pl
import pytest
from openai_stub import Malformed, OpenAIStub, Reply, Status, last_user_message

from srrg.cli import main as cli_main
from srrg.normalize import clean_answer, rules_normalize, run, validate_answer
from srrg.settings.normalize import NormalizeConfig


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("lung right lower", "in the lower zone of the right lung"),  # the S-RRG paper's example
        ("right lower lobe", "in the right lower lobe"),
        ("RLL", "in the right lower lobe"),
        ("Right  Lower-Lobe", "in the right lower lobe"),
        ("right upper and middle lobes", "in the right upper and middle lobes"),
        ("right upper and left lower lobes", "in the right upper lobe and in the left lower lobe"),
        ("bilateral lower lobes", "in both lower lobes"),
        ("upper lobes", "in both upper lobes"),
        ("left middle lobe", "in the lingula"),
        ("lingular", "in the lingula"),
        ("left base", "at the left lung base"),
        ("right lung base", "at the right lung base"),
        ("bibasilar", "at both lung bases"),
        ("left and right bases", "at both lung bases"),
        ("biapical", "at both lung apices"),
        ("right midlung", "in the mid zone of the right lung"),
        ("mid and lower lung zones", "in the mid and lower zones of both lungs"),
        ("left costophrenic angle", "in the left costophrenic angle"),
        ("right perihilar", "in the right perihilar region"),
        ("retrocardiac", "in the retrocardiac region"),
        ("bilateral hilar", "at both hila"),
        ("left hemidiaphragm", "at the left hemidiaphragm"),
        ("left-sided pleural", "in the left pleural space"),
        ("mediastinal", "in the mediastinum"),
        ("lower thoracic spine", "in the lower thoracic spine"),
        ("aortic arch", "at the aortic arch"),
        ("lungs", "in both lungs"),
        ("right", "on the right side"),
        ("bilateral", "on both sides"),
        ("right base and left apex", "at the right lung base and at the left lung apex"),
        ("lateral right lower lobe", "in the right lateral lower lobe"),
        ("right nipple", "in the right nipple"),  # unknown words are kept, not dropped
        ("right humeral head", "in the right humerus head"),
        ("left upper lobe lateral segment", "in the lateral segment of the left upper lobe"),
        ("diffuse bilateral", "diffusely in both lungs"),
        ("multifocal right lower lobe", "multifocally in the right lower lobe"),
        ("aortic knob", "at the aortic arch"),
        ("thoracic aorta", "in the thoracic aorta"),
        ("azygos fissure", "along the azygos fissure"),
        ("right greater than left", "on both sides"),
        ("posteriorly", "in the posterior region"),
        ("right mediastinum", "on the right side of the mediastinum"),
        ("mid right clavicle", "in the right mid clavicle"),
        # comma-separated parts from the extractor; side-only parts join their neighbour
        ("left chest wall, right ventricle", "in the left chest wall and in the right ventricle"),
        ("bilateral, basilar", "at both lung bases"),
        ("scattered, bilaterally", "multifocally in both lungs"),
        ("left upper lobe, posterior, rib", "in the left upper lobe and in the posterior ribs"),
        ("right hilar lymph node", "in the right hilar lymph nodes"),
        ("left base, right", "at both lung bases"),
    ],
)
def test_rules_normalizer_canonical_phrases(raw, expected):
    assert rules_normalize(raw) == expected


def test_rules_normalizer_is_canonical_and_total():
    assert (
        rules_normalize("right lower lung")
        == rules_normalize("lung right lower")
        == rules_normalize("RIGHT LOWER ZONE")
    )
    assert rules_normalize(None) is None and rules_normalize("  ") is None and rules_normalize("of the") is None


@pytest.mark.parametrize(
    "raw, answer, reason",
    [
        ("lung right lower", "in the lower zone of the right lung", None),
        ("left base", "at the left lung base", None),
        ("lung right lower", "in the lower zone of the left lung", "laterality changed"),
        ("retrocardiac", "in the left retrocardiac region", "laterality changed"),
        ("left base", "lung left base", "does not start with a preposition"),
        ("left base", "", "empty"),
        ("left base", "sorry, i cannot help with that", "refusal"),
        (
            "left base",
            "in the left lung base which is where pneumonia appears in elderly patients often",
            "longer than",
        ),
        ("left base", "in the left lung base {json}", "characters"),
        ("left base", "in the left banana", "non-anatomical"),
        ("left base", "on the left side", "no anatomical structure"),
        ("left", "on the left side", None),
        ("lung bases", "at both lung bases", None),
        ("left lingula", "in the lingula", None),
        ("posterior ribs", "in the right posterior ribs", "laterality changed"),
    ],
)
def test_validate_answer(raw, answer, reason):
    got = validate_answer(raw, answer, max_words=12)
    assert got is None if reason is None else (got is not None and reason in got)


def test_clean_answer_takes_the_phrase():
    assert (
        clean_answer('"In the Lower zone of the right lung."\nExplanation: ...')
        == "in the lower zone of the right lung"
    )
    assert (
        clean_answer("lung right lower -> in the lower zone of the right lung") == "in the lower zone of the right lung"
    )


REPORT_TEXT = "Small right pleural effusion. SECRET-REPORT-TEXT mild cardiomegaly."


def extracted_frame() -> pl.DataFrame:
    def report(*locs):
        return json.dumps(
            {
                "positive": [
                    {"name": f"finding{i}", "probability": 3, "level": None, "location": loc}
                    for i, loc in enumerate(locs)
                ],
                "negative": ["pneumothorax"],
            }
        )

    return pl.DataFrame(
        {
            "study_id": ["s1", "s2", "s3", "s4", "s5"],
            "findings": [REPORT_TEXT] * 5,
            "structured": [
                report("lung right lower", "Left Base"),
                report("left base", None),
                None,
                "{not json",
                report(),
            ],
            "extract_status": ["ok", "ok", "empty_text", "ok", "ok"],
        }
    )


def test_stage_rules_keeps_every_row_and_raw_reports():
    df = extracted_frame()
    out, phrases, summary = run(df, NormalizeConfig())
    assert out["study_id"].to_list() == df["study_id"].to_list()
    assert out["normalize_status"].to_list() == ["ok", "ok", "no_report", "unparseable", "ok"]
    assert out["structured_raw"].to_list() == df["structured"].to_list()
    s1 = json.loads(out["structured"][0])
    assert [f["location"] for f in s1["positive"]] == ["in the lower zone of the right lung", "at the left lung base"]
    assert s1["negative"] == ["pneumothorax"]
    assert json.loads(out["structured"][1])["positive"][1]["location"] is None
    assert phrases.select("raw", "normalized", "path", "count").rows() == [
        ("left base", "at the left lung base", "rules", 2),
        ("lung right lower", "in the lower zone of the right lung", "rules", 1),
    ]
    assert summary.unique_phrases == 2 and summary.statuses == {"no_report": 1, "ok": 3, "unparseable": 1}


def llm_config(stub, tmp_path, **over):
    llm = dict(
        backend="openai",
        model="stub",
        base_url=stub.base_url,
        cache_dir=str(tmp_path / "cache"),
        timeout_s=60,  # wide: no stub answer may time out on a loaded machine
        max_retries=2,
        retry_base_delay_s=0.01,
        retry_max_delay_s=0.02,
    )
    llm.update(over)
    return NormalizeConfig.from_dict({"method": "llm", "llm": llm})


def test_stage_llm_validates_falls_back_and_sends_only_phrases(tmp_path):
    answers = {
        "lung right lower": "In the lower zone of the right lung.",
        "left base": "Sure! The left base is a part of the lung",
    }
    with OpenAIStub(responder=lambda body: Reply(answers[last_user_message(body)])) as stub:
        out, phrases, summary = run(extracted_frame(), llm_config(stub, tmp_path))
        sent = json.dumps(stub.requests)
        assert "SECRET-REPORT-TEXT" not in sent and "pleural effusion" not in sent and "finding0" not in sent
        assert sorted(last_user_message(b) for b in stub.requests) == ["left base", "lung right lower"]
        rows = {r["raw"]: r for r in phrases.to_dicts()}
        assert rows["lung right lower"]["path"] == "llm"
        assert rows["lung right lower"]["normalized"] == "in the lower zone of the right lung"
        assert rows["left base"]["path"] == "rules" and rows["left base"]["normalized"] == "at the left lung base"
        assert rows["left base"]["reason"].startswith("invalid answer")
        assert summary.usage["total"]["sent"] == 2 and summary.fallbacks == 1
        assert "requests_sent=2" in summary.line() and "fallbacks=1" in summary.line()

        _, phrases2, summary2 = run(extracted_frame(), llm_config(stub, tmp_path))
        assert len(stub.requests) == 2  # warm cache: zero requests
        assert summary2.usage["total"]["sent"] == 0 and summary2.usage["total"]["cache_hits"] == 2
        assert dict(phrases2.select("raw", "path").rows()) == {"left base": "rules", "lung right lower": "cache"}
        assert phrases2["normalized"].to_list() == phrases["normalized"].to_list()


def test_stage_llm_errors_fall_back_to_rules_when_allowed(tmp_path):
    with OpenAIStub(responder=lambda body: Status(500)) as stub:
        stub.enqueue(Malformed())
        cfg = replace(llm_config(stub, tmp_path, max_retries=1), allow_fallback=True)
        _, phrases, summary = run(extracted_frame(), cfg)
        assert phrases["path"].to_list() == ["rules", "rules"]
        assert all(r.startswith("llm error") for r in phrases["reason"].to_list())
        assert phrases["normalized"].to_list() == ["at the left lung base", "in the lower zone of the right lung"]
        assert summary.usage["total"]["errors"] == 2


def test_llm_method_with_rules_backend_is_a_config_error(tmp_path):
    """issue 25 item 5: method llm with llm.backend rules ran rules only and exited 0."""
    with pytest.raises(ValueError, match="needs an LLM"):
        NormalizeConfig.from_dict({"method": "llm", "llm": {"backend": "rules", "cache_dir": str(tmp_path / "c")}})
    assert not (tmp_path / "c").exists()


def test_config_errors_are_clear():
    with pytest.raises(ValueError, match="method"):
        NormalizeConfig.from_dict({"method": "gpt"})
    with pytest.raises(ValueError, match=r"unknown key\(s\) normalize\.methd "):
        NormalizeConfig.from_dict({"methd": "rules"})
    with pytest.raises(ValueError, match="environment variable"):
        NormalizeConfig.from_dict({"llm": {"api_key": "sk-123"}})


def test_cli_writes_outputs_and_stats(tmp_path, capsys):
    inp = tmp_path / "extracted.parquet"
    extracted_frame().write_parquet(inp)
    rc = cli_main(
        [
            "normalize",
            "--in",
            str(inp),
            "--out",
            str(tmp_path / "n.parquet"),
            "--phrases",
            str(tmp_path / "p.parquet"),
            "--config",
            '{"method": "rules"}',
            "--stats",
            str(tmp_path / "s.json"),
        ]
    )
    assert rc == 0
    assert pl.read_parquet(tmp_path / "n.parquet").height == 5
    assert pl.read_parquet(tmp_path / "p.parquet").height == 2
    assert json.loads((tmp_path / "s.json").read_text())["unique_phrases"] == 2
    assert "unique_phrases=2" in capsys.readouterr().err


def test_rules_phrases_pass_the_llm_answer_validator():
    """The validator must accept what a careful normalizer writes (else good LLM answers would be lost)."""
    raws = [
        "lung right lower",
        "RLL",
        "left base",
        "bibasilar",
        "lung bases",
        "left lingula",
        "right mediastinum",
        "right upper and middle lobes",
        "left costophrenic angle",
        "bilateral hilar",
        "lower thoracic spine",
        "left chest wall, right ventricle",
        "acromioclavicular",
        "coronary",
        "bilateral",
    ]
    assert {raw: validate_answer(raw, rules_normalize(raw), 12) for raw in raws} == {raw: None for raw in raws}
