"""Signatures beside every number (srrg.metrics.signature) and the score.section cut
(srrg.metrics.section): what summary.csv, the tables and `srrg compare` carry, and their refusal to
put numbers made differently in one column."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.compare import run_compare_tables
from srrg.errors import UserError
from srrg.metrics.base import get_metric
from srrg.metrics.score import run_score
from srrg.metrics.section import select_section
from srrg.metrics.signature import column_signatures, compose, hash8, with_section
from srrg.metrics.signature_files import read_signatures
from srrg.run_tables import RunEntry, run_tables
from srrg.settings.compare import CompareConfig

CFG = CompareConfig(n_boot=20, n_rounds=20)


def test_signature_names_the_options_and_version() -> None:
    assert get_metric("bleu").signature("bleu_4") == "bleu|tok:r2gen|srrg:0.1.0"
    assert get_metric("bleu", tokenization="none").signature("bleu_1") == "bleu|tok:none|srrg:0.1.0"
    assert get_metric("rouge_l", max_tokens=50).signature("rouge_l") == "rouge_l|tok:r2gen|max_tokens:50|srrg:0.1.0"
    ce = get_metric("ce").signature("ce_f1_micro")
    assert ce.startswith("ce|definite_only:false|smoothing:1|significance:weighted|extract:")
    assert ce.endswith("|srrg:0.1.0")
    assert len(ce.split("extract:")[1].split("|")[0]) == 8
    assert hash8("abc") == "ba7816bf"  # sha256("abc") starts ba7816bf
    judge = get_metric("green", llm={"backend": "local", "model": "StanfordAIMI/GREEN-radllama2-7b"}).signature("green")
    assert judge.startswith("green|model:StanfordAIMI/GREEN-radllama2-7b|llm:") and "|max_tokens:1024|" in judge
    assert get_metric("green", llm={"concurrency": 2}).signature("green") == get_metric("green").signature("green")


def test_section_goes_before_the_version() -> None:
    assert with_section(compose("bleu", [("tok", "r2gen")]), "findings") == "bleu|tok:r2gen|section:findings|srrg:0.1.0"
    assert with_section("bleu|tok:r2gen|srrg:0.1.0", "both") == "bleu|tok:r2gen|srrg:0.1.0"


def test_column_signatures_refuse_mixed_unless_allowed() -> None:
    sigs = {"a": {"bleu_4": "bleu|tok:r2gen"}, "b": {"bleu_4": "bleu|tok:ptb"}}
    with pytest.raises(UserError, match=r"bleu_4 was computed differently \(a: bleu\|tok:r2gen; b: bleu\|tok:ptb\)"):
        column_signatures(sigs, ["bleu_4"], False, "compare")
    assert column_signatures(sigs, ["bleu_4"], True, "compare") == {"bleu_4": "bleu|tok:r2gen vs bleu|tok:ptb"}
    with pytest.raises(UserError, match="x: old has no signature"):
        column_signatures({"a": sigs["a"], "old": {}}, ["bleu_4"], False, "x")
    unsigned = column_signatures({"a": sigs["a"], "old": {}}, ["bleu_4"], True, "x")
    assert unsigned == {"bleu_4": "bleu|tok:r2gen+unknown"}


def _score(tmp: Path, name: str, tokenization: str, hyps: list[str], section: str = "both") -> Path:
    refs = ["FINDINGS: Small left pleural effusion. IMPRESSION: Effusion.", "Heart size is normal, lungs clear."]
    for side, texts in (("refs", refs), ("hyps", hyps)):
        rows = [json.dumps({"study_id": f"s{i}", "report": t}) for i, t in enumerate(texts)]
        (tmp / f"{name}_{side}.jsonl").write_text("\n".join(rows) + "\n")
    out = tmp / name
    options = {"bleu": {"tokenization": tokenization}}
    run_score(tmp / f"{name}_refs.jsonl", tmp / f"{name}_hyps.jsonl", ["bleu"], out, options, section=section)
    return out


def test_summary_csv_and_signatures_csv_carry_the_signature(tmp_path: Path) -> None:
    out = _score(tmp_path, "run", "none", ["small effusion", "heart normal"])
    assert pl.read_csv(out / "summary.csv")["signature_bleu"][0] == "bleu|tok:none|srrg:0.1.0"
    sigs = read_signatures(out / "per_report.parquet")
    assert sigs["bleu_4"] == "bleu|tok:none|srrg:0.1.0" and set(sigs) >= {"bleu_1", "bleu_4"}


def test_compare_refuses_runs_scored_with_different_tokenizations(tmp_path: Path, capsys) -> None:
    a = _score(tmp_path, "a", "r2gen", ["small effusion", "heart normal"])
    b = _score(tmp_path, "b", "none", ["left pleural effusion", "lungs clear"])
    paths = {"a": str(a / "per_report.parquet"), "b": str(b / "per_report.parquet")}
    with pytest.raises(UserError, match=r"a: bleu\|tok:r2gen\|srrg:0.1.0; b: bleu\|tok:none\|srrg:0.1.0"):
        run_compare_tables(paths, str(tmp_path / "cmp"), CFG)
    args = [
        "compare",
        "--per-report",
        f"a={paths['a']}",
        "--per-report",
        f"b={paths['b']}",
        "--out",
        str(tmp_path / "cmp"),
        "--n-boot",
        "20",
        "--n-rounds",
        "20",
    ]
    assert srrg_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "tok:r2gen" in err and "tok:none" in err and "--allow-mixed" in err
    assert srrg_main([*args, "--allow-mixed"]) == 0
    mixed = "mixed signatures in bleu_1: bleu|tok:r2gen|srrg:0.1.0 vs bleu|tok:none|srrg:0.1.0"
    assert mixed in capsys.readouterr().out
    rows = pl.read_csv(tmp_path / "cmp" / "compare.csv")
    assert set(rows["signature"]) == {"bleu|tok:r2gen|srrg:0.1.0 vs bleu|tok:none|srrg:0.1.0"}
    assert "Signatures:" in (tmp_path / "cmp" / "compare.md").read_text()


def test_compare_of_alike_runs_prints_the_one_signature(tmp_path: Path) -> None:
    a = _score(tmp_path, "a", "none", ["small effusion", "heart normal"])
    b = _score(tmp_path, "b", "none", ["left pleural effusion", "lungs clear"])
    paths = {"a": str(a / "per_report.parquet"), "b": str(b / "per_report.parquet")}
    rows = run_compare_tables(paths, str(tmp_path / "c"), CFG)
    assert {r.signature for r in rows} == {"bleu|tok:none|srrg:0.1.0"}
    assert "- bleu_4: `bleu|tok:none|srrg:0.1.0`" in (tmp_path / "c" / "compare.md").read_text()


def _entry(out: Path, name: str) -> RunEntry:
    pl.DataFrame({"parse_status": ["valid", "valid"]}).write_parquet(out / "preds.parquet")
    return RunEntry(name, name, "json", str(out / "summary.csv"), str(out / "preds.parquet"))


def test_tables_refuse_mixed_columns_and_name_signatures_in_captions(tmp_path: Path) -> None:
    a = _entry(_score(tmp_path, "a", "r2gen", ["small effusion", "heart normal"]), "a")
    b = _entry(_score(tmp_path, "b", "none", ["small effusion", "heart normal"]), "b")
    with pytest.raises(UserError, match="tables: bleu_1 was computed differently"):
        run_tables([a, b], tmp_path / "t")
    run_tables([a, b], tmp_path / "t", allow_mixed=True)
    caption = (tmp_path / "t" / "table1.md").read_text()
    assert "Signatures: bleu|tok:r2gen|srrg:0.1.0 vs bleu|tok:none|srrg:0.1.0 (BLEU-1, BLEU-4)." in caption
    run_tables([a], tmp_path / "one")
    tex = (tmp_path / "one" / "table2.tex").read_text()
    assert r"without both targets. Signatures: bleu|tok:r2gen|srrg:0.1.0 (BLEU-1, BLEU-2, BLEU-3, BLEU-4)." in tex


def test_select_section_cuts_headers_and_keeps_headerless_text() -> None:
    text = "INDICATION: cough.\nFINDINGS: Small left effusion.\nIMPRESSION: Effusion."
    assert select_section(text, "findings") == ("Small left effusion.", "cut")
    assert select_section(text, "impression") == ("Effusion.", "cut")
    assert select_section(text, "both") == (text, "whole")
    assert select_section("Small effusion.", "findings") == ("Small effusion.", "whole")  # a model's output: no headers
    assert select_section("FINDINGS: Clear lungs.", "impression") == ("", "missing")
    js = json.dumps({"positive": [], "negative": ["pneumothorax"]})
    assert select_section(js, "findings") == (js, "whole")


def test_score_section_applies_to_both_sides_and_is_named(tmp_path: Path) -> None:
    hyps = ["IMPRESSION: effusion.", "Heart size is normal, lungs clear."]
    out = _score(tmp_path, "f", "none", hyps, section="findings")
    per = pl.read_parquet(out / "per_report.parquet")
    assert per["section_ref_status"].to_list() == ["cut", "whole"]
    assert per["section_hyp_status"].to_list() == ["missing", "whole"]
    summary = pl.read_csv(out / "summary.csv")
    assert summary["section_missing_hyp"][0] == 1 and summary["section_missing_ref"][0] == 0
    assert summary["signature_bleu"][0] == "bleu|tok:none|section:findings|srrg:0.1.0"
    # pair 2 is identical after the cut on both sides: sentence BLEU-1 = 1
    assert per["bleu_1"][1] == pytest.approx(1.0)


def test_compare_systems_rows_carry_the_metrics_signatures() -> None:
    from srrg.compare import compare_systems

    refs = ["small left pleural effusion", "heart size is normal"]
    rows = compare_systems(refs, {"a": ["small effusion", "heart normal"], "b": refs}, ["bleu", "rouge_l"], cfg=CFG)
    sigs = {r.key: r.signature for r in rows}
    assert sigs["bleu_4"] == "bleu|tok:r2gen|srrg:0.1.0"  # corpus BLEU from the n-gram statistics columns
    assert sigs["rouge_l"] == "rouge_l|tok:r2gen|max_tokens:1000|srrg:0.1.0"


JUDGES = {"green": "green", "vert": "vert", "gema": "gema", "proxy_rating": "proxy_rating"}  # metric -> a key


def _parts(signature: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in signature.split("|")[1:])


@pytest.mark.parametrize("metric", list(JUDGES))
def test_a_changed_prompt_text_changes_the_judge_signature_and_only_its_prompt_part(metric, monkeypatch) -> None:
    import srrg.metrics.judges.common as jc

    key = JUDGES[metric]
    before = get_metric(metric).signature(key)
    parts = _parts(before)
    assert len(parts["prompt"]) == 8 and before.endswith(f"|prompt:{parts['prompt']}|srrg:0.1.0")
    assert get_metric(metric).signature(key) == before  # deterministic
    # options that change no prompt leave the prompt part alone; the option's own part changes
    other = _parts(get_metric(metric, max_words=50).signature(key))
    assert other["prompt"] == parts["prompt"] and other["max_words"] == "50"
    assert get_metric(metric, llm={"concurrency": 3, "timeout_s": 5.0}).signature(key) == before  # runtime only
    packaged = jc.load_prompt
    monkeypatch.setattr(jc, "load_prompt", lambda name: packaged(name) + "\nBe brief.")  # one edited prompt text
    edited = get_metric(metric).signature(key)
    assert _parts(edited)["prompt"] != parts["prompt"]
    rest = {k: v for k, v in parts.items() if k != "prompt"}
    assert {k: v for k, v in _parts(edited).items() if k != "prompt"} == rest


def test_prompt_hash_covers_the_templates_not_the_reports() -> None:
    from srrg.metrics.judges.common import template
    from srrg.metrics.signature import prompt_hash, with_prompts

    t = template("x", ("reference",), "Compare {reference}.")
    a = [t.render(purpose="p", reference="left effusion"), t.render(purpose="p", reference="normal")]
    assert prompt_hash(a) == prompt_hash(a[:1]) == hash8([f"x@{t.version}"])  # same template, other reports
    edited = template("x", ("reference",), "Compare {reference}!")
    assert prompt_hash([edited.render(purpose="p", reference="")]) != prompt_hash(a)
    assert with_prompts("m|a:1|srrg:0.1.0", lambda structured: a) == f"m|a:1|prompt:{prompt_hash(a)}|srrg:0.1.0"
    # vert's variant picks another prompt: its prompt part differs as well as its variant part
    rubric, direct = (_parts(get_metric("vert", variant=v).signature("vert")) for v in ("rubric", "direct"))
    assert rubric["prompt"] != direct["prompt"]


def test_the_structured_answer_prompt_is_in_the_hash(monkeypatch) -> None:
    import srrg.metrics.judges.common as jc

    before = get_metric("green").signature("green")
    packaged = jc.load_prompt
    # only the JSON answer instruction of structured requests changes; the published text prompt stays
    monkeypatch.setattr(jc, "load_prompt", lambda name: packaged(name) + (" " if name == "answer_error_counts" else ""))
    after = get_metric("green").signature("green")
    assert _parts(after)["prompt"] != _parts(before)["prompt"]
    assert after.split("|prompt:")[0] == before.split("|prompt:")[0]
