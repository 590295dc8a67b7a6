"""The ReXrank preset (srrg.metrics.rexrank), the kinds issue 53 found missing: every column's exact
signature parts, the status and count columns, a partial row (one input missing), the explicit BLEU
order argument. RadEval is replaced at srrg's loading boundary by fakes (their numbers test srrg's
mapping, not a measurement). Each test's docstring names the bug it catches."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from srrg.metrics import radeval as rv
from srrg.metrics.base import score_all
from srrg.metrics.rexrank import sentence_bleu


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parts' per-report cache (.cache/srrg/radeval) lands in each test's own folder."""
    monkeypatch.chdir(tmp_path)


class Composite:
    """RadEval's RadCliQ-v1 CompositeMetric stand-in: fixed inputs, identity scaler, v1 = 2 - sum."""

    cols = ["radgraph", "bertscore", "semb_score", "bleu_score"]

    def __init__(self, inputs: dict[str, list[float]]) -> None:
        self.inputs = inputs
        self.scaler = type("Scaler", (), {"transform": lambda self, x: np.asarray(x, dtype=float)})()
        self.coefs = np.array([-1.0, -1.0, -1.0, 0.0, 2.0])

    def _compute_sub_metrics(self, refs: list[str], hyps: list[str]) -> dict[str, Any]:
        return {k: np.array(v) for k, v in self.inputs.items()}

    def _build_matrix(self, metrics: dict[str, Any]) -> Any:
        return np.column_stack([metrics[c] for c in self.cols])


class Raw:
    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self.raw_out = raw

    def _compute_raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        return self.raw_out


def fake_radeval(monkeypatch, inputs: dict[str, list[float]]) -> None:
    composite = type("Adapter", (), {})()
    composite._scorer = Composite(inputs)
    found = {
        "radcliq": composite,
        "ratescore": Raw({"ratescore": {"per_sample": [0.7, 0.5], "aggregate": 0.6}}),
        "green": Raw({"green": {"per_sample": [1.0, 0.0], "aggregate": 0.5}}),
    }
    monkeypatch.setattr(rv, "radeval_metric", lambda name, metric: found[name])


INPUTS = {"radgraph": [0.5, 0.0], "bertscore": [0.2, 0.4], "semb_score": [0.8, 0.6], "bleu_score": [0.1, 0.3]}


def test_every_radcliq_column_carries_its_own_signature_parts(monkeypatch):
    """Bug: a column's signature parts filed under another key (SembScore's under a misspelt key
    falls back to `column:all`; RadCliQ-v1 and its inverse exchanged): a signature that does not
    say what its number is."""
    fake_radeval(monkeypatch, INPUTS)
    sig = score_all(["a", "b"], ["c", "d"], ["rexrank_radcliq"]).signatures
    expected = {
        "rexrank_bertscore": "|model:distilroberta-base|layers:5|rescale:true|idf:refs-of-call|unverified:idf|",
        "rexrank_sembscore": "|model:chexbert|value:cls-cosine|",
        "rexrank_radgraph": "|model:radgraph|value:entity-relation-f1-mean|",
        "rexrank_radcliq_v1": "|version:1|value:mean|direction:lower|",
        "rexrank_radcliq_v1_inverse": "|version:1|value:1/mean|direction:higher|unverified:inversion|",
        "rexrank_radcliq_status": "|column:all|",
    }
    for key, parts in expected.items():
        assert parts in sig[key], key
        assert sig[key].startswith("rexrank_radcliq|"), key
    assert "column:all" not in sig["rexrank_sembscore"] and "value:mean" not in sig["rexrank_radcliq_v1_inverse"]


def test_a_row_missing_one_input_is_no_score_and_counted(monkeypatch):
    """Bug: a row whose BERTScore is missing (NaN) marked ok, or left out of the failure count; the
    means taken over all rows including the NaN."""
    fake_radeval(monkeypatch, {**INPUTS, "bertscore": [0.2, math.nan]})
    result = score_all(["a", "b"], ["c", "d"], ["rexrank_radcliq"])
    assert result.per_report["rexrank_radcliq_status"] == ["ok", "no_score"]
    assert result.summary["rexrank_radcliq_failures"] == 1.0
    assert result.summary["rexrank_bertscore"] == pytest.approx(0.2)
    assert result.summary["rexrank_sembscore"] == pytest.approx(0.7)


def test_the_preset_names_fineradscore_and_keeps_status_counts_out_of_the_scores(monkeypatch, capsys):
    """Bugs: FineRadScore's status written under another key (or a count of unavailable columns
    written as FineRadScore's value). Issue 46 R1: the summary carried a numeric
    `rexrank_unavailable = 7.000` column beside the scores; the unavailable columns are said by their
    `<part>_status` per report and `status:unavailable` signatures, never as a score."""
    fake_radeval(monkeypatch, INPUTS)
    result = score_all(["a", "b"], ["c", "d"], ["rexrank"])
    assert result.per_report["fineradscore_status"] == ["unavailable", "unavailable"]
    assert math.isnan(result.summary["fineradscore_inverse"]) and "fineradscore_status" not in result.summary
    assert "rexrank_unavailable" not in result.summary and "rexrank_unavailable" not in result.signatures
    assert not any(k.endswith("_unavailable") for k in result.summary)
    for key in ("fineradscore_status", "fineradscore_inverse"):
        assert result.signatures[key].startswith("fineradscore|status:unavailable|reason:llm-judge-not-built|")
    assert "rexrank: 1/FineRadScore not scored" in capsys.readouterr().err


def test_sentence_bleu_honours_an_explicit_order():
    """Bug: the order argument ignored (only the default BLEU-2 was ever computed). hyp "a b c", ref
    "a b d": p1 = 2/3, p2 = 1/2, p3 = eps 0.1 / 1; equal lengths, no brevity penalty."""
    ref, hyp = ["a", "b", "d"], ["a", "b", "c"]
    assert sentence_bleu([ref], hyp, order=1) == pytest.approx(2 / 3)
    assert sentence_bleu([ref], hyp) == pytest.approx(math.sqrt(2 / 3 * 1 / 2))
    assert sentence_bleu([ref], hyp, order=3) == pytest.approx((2 / 3 * 1 / 2 * 0.1) ** (1 / 3))
