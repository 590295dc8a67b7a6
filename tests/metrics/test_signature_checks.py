"""Signatures cannot be bypassed (docs/metrics.md, "Signatures"): a missing, empty or header-only
signatures.csv falls back to summary.csv's signature_<metric> columns, an unsigned or half-signed
run is refused by `srrg compare --per-report` and `srrg tables` unless --allow-mixed, and the
packaged vocabulary's hash is part of the signature of the metrics that read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.compare import run_compare_tables
from srrg.errors import UserError
from srrg.metrics import signature as S
from srrg.metrics.base import get_metric
from srrg.metrics.score import run_score
from srrg.metrics.signature_files import read_signatures
from srrg.run_tables import RunEntry, run_tables
from srrg.settings.compare import CompareConfig

CFG = CompareConfig(n_boot=10, n_rounds=8)
R2GEN, NONE = "bleu|tok:r2gen|srrg:0.1.0", "bleu|tok:none|srrg:0.1.0"


def _score(tmp: Path, name: str, tokenization: str) -> Path:
    refs = ["Small left pleural effusion.", "Heart size is normal, lungs clear."]
    hyps = ["small effusion", "heart normal"]
    for side, texts in (("refs", refs), ("hyps", hyps)):
        rows = [json.dumps({"study_id": f"s{i}", "report": t}) for i, t in enumerate(texts)]
        (tmp / f"{name}_{side}.jsonl").write_text("\n".join(rows) + "\n")
    out = tmp / name
    run_score(
        tmp / f"{name}_refs.jsonl", tmp / f"{name}_hyps.jsonl", ["bleu"], out, {"bleu": {"tokenization": tokenization}}
    )
    pl.DataFrame({"parse_status": ["valid", "valid"]}).write_parquet(out / "preds.parquet")
    return out


def _paths(*folders: Path) -> dict[str, str]:
    return {f.name: str(f / "per_report.parquet") for f in folders}


def _entries(*folders: Path) -> list[RunEntry]:
    return [RunEntry(f.name, f.name, "json", str(f / "summary.csv"), str(f / "preds.parquet")) for f in folders]


@pytest.mark.parametrize("damage", ["missing", "empty", "header_only"])
def test_mixed_runs_are_refused_when_signatures_csv_is_missing_empty_or_header_only(tmp_path, damage):
    """Bug: without a readable signatures.csv both runs counted as unsigned and a r2gen-tokenized
    BLEU was compared with an untokenized one (exit 0); an empty file was a polars traceback. The
    signature_bleu column of summary.csv must stand in."""
    a, b = _score(tmp_path, "a", "r2gen"), _score(tmp_path, "b", "none")
    for folder in (a, b):
        path = folder / "signatures.csv"
        {"missing": path.unlink, "empty": lambda p=path: p.write_text(""),
         "header_only": lambda p=path: p.write_text("key,signature\n")}[damage]()  # fmt: skip
    assert read_signatures(b / "per_report.parquet")["bleu_4"] == NONE
    with pytest.raises(
        UserError, match=rf"bleu_1 was computed differently \(a: {R2GEN}; b: {NONE}\)".replace("|", r"\|")
    ):
        run_compare_tables(_paths(a, b), str(tmp_path / "c"), CFG)
    with pytest.raises(UserError, match="tables: bleu_1 was computed differently"):
        run_tables(_entries(a, b), tmp_path / "t")
    same = _score(tmp_path, "same", "r2gen")
    (same / "signatures.csv").unlink()
    rows = run_compare_tables(_paths(a, same), str(tmp_path / "c2"), CFG)
    assert {r.signature for r in rows} == {R2GEN}  # alike runs still compare, signed from summary.csv


def _unsign(folder: Path) -> None:
    (folder / "signatures.csv").unlink()
    summary = pl.read_csv(folder / "summary.csv")
    summary.select(c for c in summary.columns if not c.startswith("signature_")).write_csv(folder / "summary.csv")


def test_an_unsigned_run_is_refused_by_compare_and_tables_unless_allow_mixed(tmp_path, capsys):
    """Bug: a run scored before signatures existed (no signatures.csv, no signature columns) was
    compared with a signed one and only marked `+unknown`: the check was bypassed by deleting a file."""
    a, old = _score(tmp_path, "a", "r2gen"), _score(tmp_path, "old", "none")
    _unsign(old)
    with pytest.raises(UserError, match=r"compare: old has no signature \(no signatures.csv"):
        run_compare_tables(_paths(a, old), str(tmp_path / "c"), CFG)
    args = [
        "compare",
        "--per-report",
        f"a={a / 'per_report.parquet'}",
        "--per-report",
        f"old={old / 'per_report.parquet'}",
    ]
    args += ["--out", str(tmp_path / "cli"), "--n-boot", "10", "--n-rounds", "8"]
    capsys.readouterr()
    assert srrg_main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "old has no signature" in err and "--allow-mixed" in err
    assert srrg_main([*args, "--allow-mixed"]) == 0
    assert set(pl.read_csv(tmp_path / "cli" / "compare.csv")["signature"]) == {f"{R2GEN}+unknown"}
    with pytest.raises(UserError, match="tables: old has no signature"):
        run_tables(_entries(a, old), tmp_path / "t")
    _unsign(a)
    with pytest.raises(UserError, match="tables: a, old have no signature"):
        run_tables(_entries(a, old), tmp_path / "t")
    run_tables(_entries(a, old), tmp_path / "t", allow_mixed=True)


def test_a_signed_run_lacking_a_compared_column_is_refused(tmp_path):
    """Bug: b's signatures.csv lacks bleu_4 (half-signed); its bleu_4 must not pass as alike."""
    a, b = _score(tmp_path, "a", "r2gen"), _score(tmp_path, "b", "r2gen")
    sigs = read_signatures(b / "signatures.csv")
    S.write_signatures(b / "signatures.csv", {k: v for k, v in sigs.items() if k != "bleu_4"})
    with pytest.raises(
        UserError, match=rf"bleu_4 was computed differently \(a: {R2GEN}; b: unknown\)".replace("|", r"\|")
    ):
        run_compare_tables(_paths(a, b), str(tmp_path / "c"), CFG)
    S.write_signatures(a / "signatures.csv", {k: v for k, v in sigs.items() if k != "bleu_4"})
    with pytest.raises(UserError, match="compare: bleu_4 has no signature in a, b"):
        run_compare_tables(_paths(a, b), str(tmp_path / "c"), CFG)
    rows = run_compare_tables(_paths(a, b), str(tmp_path / "c"), CFG, allow_mixed=True)
    assert {r.key: r.signature for r in rows}["bleu_4"] == "unknown"


def test_column_signatures_refuse_a_key_no_system_signed() -> None:
    """Bug: every signed system lacking one key gave the single variant `unknown`, which passed."""
    sigs = {"a": {"bleu_1": R2GEN}, "b": {"bleu_1": R2GEN}}
    assert S.column_signatures(sigs, ["bleu_1"], False, "x") == {"bleu_1": R2GEN}
    with pytest.raises(UserError, match="x: rouge_l has no signature in a, b"):
        S.column_signatures(sigs, ["bleu_1", "rouge_l"], False, "x")


def test_summary_signature_columns_map_to_the_keys_of_their_metric(tmp_path):
    """Which metric made a summary key: the one declaring it (p_score is S-Score's, p_score_text
    s_score_text's), else the longest metric name that prefixes it (s_score_hyp_valid: s_score, not
    a shorter name); counts of no metric stay unsigned. Bug it catches: a prefix match giving
    p_score_text to s_score, or n_pairs a signature."""
    row = {
        "n_pairs": 2, "bleu_4": 0.1, "p_score": 0.5, "s_score_hyp_valid": 1.0, "p_score_text": 0.2,
        "s_score_text_failures": 0, "signature_bleu": "B", "signature_s_score": "S", "signature_s_score_text": "T",
    }  # fmt: skip
    pl.DataFrame([row]).write_csv(tmp_path / "summary.csv")
    assert read_signatures(tmp_path / "summary.csv") == {
        "bleu_4": "B", "p_score": "S", "s_score_hyp_valid": "S", "p_score_text": "T", "s_score_text_failures": "T",
    }  # fmt: skip
    (tmp_path / "signatures.csv").write_text("key,signature\nbleu_4,X\n")
    assert read_signatures(tmp_path / "summary.csv") == {"bleu_4": "X"}  # signatures.csv first
    (tmp_path / "signatures.csv").write_text('key,signature\n"bleu_4\n')
    with pytest.raises(UserError, match="signatures.csv: not a readable signature table"):
        read_signatures(tmp_path / "summary.csv")


def test_the_vocabulary_hash_is_in_the_signatures_of_ce_and_s_score_text(tmp_path, monkeypatch):
    """Bug: an edited findings.yaml changed s_score_text and ce with the same signature. Both
    signatures carry vocab:<hash8> of the packaged vocabulary files; an edit of one byte in a copy
    changes it; BLEU (no vocabulary) keeps its signature."""
    packaged = S.vocabulary_hash()
    for metric, key in (("ce", "ce_f1_micro"), ("s_score_text", "s_score_text")):
        assert f"|vocab:{packaged}|" in get_metric(metric).signature(key)
    copy = Path(shutil.copytree(Path(S.vocabulary_folder()), tmp_path / "vocab"))
    assert S.vocabulary_hash(copy) == packaged
    findings = copy / "findings.yaml"
    findings.write_text(findings.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert S.vocabulary_hash(copy) != packaged
    before = {
        m: get_metric(m).signature(k)
        for m, k in (("ce", "ce_f1"), ("s_score_text", "p_score_text"), ("bleu", "bleu_4"))
    }
    monkeypatch.setattr(S, "vocabulary_folder", lambda: copy)
    after = {
        m: get_metric(m).signature(k)
        for m, k in (("ce", "ce_f1"), ("s_score_text", "p_score_text"), ("bleu", "bleu_4"))
    }
    assert after["ce"] != before["ce"] and after["s_score_text"] != before["s_score_text"]
    assert f"|vocab:{S.vocabulary_hash(copy)}|" in after["ce"] and after["bleu"] == before["bleu"]
