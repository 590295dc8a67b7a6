"""The ReXrank preset (srrg.metrics.rexrank, docs/metrics.md "ReXrank preset"): per-report BLEU-2
for real with hand-computed values and fast_bleu's published ones; the model parts with RadEval
replaced at srrg's loading boundary (`radeval_metric`) by fakes whose numbers test srrg's mapping
(they are not measurements); and the one line per part whose weights are missing."""

from __future__ import annotations

import importlib.util
import json
import math
from typing import Any

import numpy as np
import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metrics import radeval as rv
from srrg.metrics import rexrank as rx
from srrg.metrics.base import score_all
from srrg.models_fetch import catalog, metric_needs


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parts' per-report cache (.cache/srrg/radeval) lands in each test's own folder."""
    monkeypatch.chdir(tmp_path)


# ---- BLEU: CXR-Report-Metric's tokens and fast_bleu's BLEU-2 ----


def test_tokens_split_periods_off_and_only_on_spaces() -> None:
    # lower case; "." -> " ."; split on " " only, so the newline stays inside its token
    assert rx.cxr_tokens("The heart.Normal\nsize. ") == ["the", "heart", ".normal\nsize", "."]
    assert rx.cxr_tokens("   ") == []


def test_sentence_bleu_hand_computed() -> None:
    ref = rx.cxr_tokens("The heart is normal.")  # the heart is normal .  (5 tokens)
    assert rx.sentence_bleu([ref], ref) == pytest.approx(1.0)
    # heart is enlarged . : unigrams 3/4, bigrams 1/3 (heart is), c=4 < r=5: BP exp(1 - 5/4)
    assert rx.sentence_bleu([ref], rx.cxr_tokens("Heart is enlarged.")) == pytest.approx(
        math.exp(-0.25) * math.sqrt(3 / 4 * 1 / 3)
    )
    # normal heart: unigrams 2/2, bigram 0/1 -> epsilon 0.1/1, BP exp(1 - 5/2)
    assert rx.sentence_bleu([ref], ["normal", "heart"]) == pytest.approx(math.exp(-1.5) * math.sqrt(0.1))
    # longer than the reference: no brevity penalty; unigrams 5/6, bigrams 4/5
    assert rx.sentence_bleu([ref], [*ref, "today"]) == pytest.approx(math.sqrt(5 / 6 * 4 / 5))
    assert rx.sentence_bleu([ref], ["effusion"]) == 0.0  # no unigram matches
    assert rx.sentence_bleu([ref], []) == 0.0


def test_sentence_bleu_equals_fast_bleu_published_values() -> None:
    """fast_bleu's README example (three references, weights (1/2, 1/2)) prints these two BLEU-2."""
    ref1 = "It is a guide to action that ensures that the military will forever heed Party commands".split()
    ref2 = "It is the guiding principle which guarantees the military forces always being under the command of the"
    ref2 = f"{ref2} Party".split()
    ref3 = "It is the practical guide for the army always to heed the directions of the party".split()
    hyp1 = "It is a guide to action which ensures that the military always obeys the commands of the party".split()
    hyp2 = "he read the book because he was interested in world history".split()
    refs = [ref1, ref2, ref3]
    assert rx.sentence_bleu(refs, hyp1) == pytest.approx(0.7453559924999299, abs=1e-12)
    assert rx.sentence_bleu(refs, hyp2) == pytest.approx(0.0191380231127159, abs=1e-12)


def test_rexrank_bleu_is_the_mean_of_per_report_bleu2() -> None:
    refs = ["The heart is normal.", "No effusion."]
    hyps = ["The heart is normal.", "Pneumothorax."]
    result = score_all(refs, hyps, ["rexrank_bleu"])
    # pneumothorax . / no effusion . : the period matches (1/2), bigrams 0/1 -> 0.1, BP exp(1 - 3/2)
    second = math.exp(-0.5) * math.sqrt(0.5 * 0.1)
    assert result.per_report["rexrank_bleu"] == pytest.approx([1.0, second])
    assert result.summary["rexrank_bleu"] == pytest.approx((1 + second) / 2)  # per-report mean, not corpus BLEU
    assert result.signatures["rexrank_bleu"].startswith(
        "rexrank_bleu|n:2|tok:cxr-report-metric|smoothing:epsilon0.1|avg:report|srrg:"
    )


# ---- RadCliQ-v1 and its inputs (fakes at the loading boundary) ----


class IdentityScaler:
    def transform(self, x: Any) -> Any:
        return np.asarray(x, dtype=float)


class FakeComposite:
    """Stands in for RadEval's RadCliQ-v1 CompositeMetric: fixed inputs per report, the texts it saw."""

    cols = ["radgraph", "bertscore", "semb_score", "bleu_score"]

    def __init__(self, inputs: dict[str, list[float]]) -> None:
        self.inputs, self.seen = inputs, []
        self.scaler, self.coefs = IdentityScaler(), np.array([-1.0, -1.0, -1.0, 0.0, 2.0])

    def _compute_sub_metrics(self, refs: list[str], hyps: list[str]) -> dict[str, Any]:
        self.seen += [*refs, *hyps]
        return {k: np.array(v) for k, v in self.inputs.items()}

    def _build_matrix(self, metrics: dict[str, Any]) -> Any:
        return np.column_stack([metrics[c] for c in self.cols])


class Adapter:
    def __init__(self, scorer: Any) -> None:
        self._scorer = scorer


class FakeRaw:
    """A RadEval MetricBase giving fixed `_compute_raw` outputs."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self.raw_out = raw

    def _compute_raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        return self.raw_out


INPUTS = {"radgraph": [0.5, 0.0], "bertscore": [0.2, 0.4], "semb_score": [0.8, 0.6], "bleu_score": [0.1, 0.3]}


def boundary(monkeypatch: pytest.MonkeyPatch, **by_name: Any) -> list[str]:
    """RadEval's metric of each RadEval name is the given fake, or raises the given UserError."""
    asked: list[str] = []

    def load(name: str, metric: str) -> Any:
        asked.append(metric)
        found = by_name[name]
        if isinstance(found, UserError):
            raise found
        return found

    monkeypatch.setattr(rv, "radeval_metric", load)
    return asked


def test_radcliq_pass_gives_four_columns_and_the_inverse(monkeypatch: pytest.MonkeyPatch) -> None:
    composite = FakeComposite(INPUTS)
    boundary(monkeypatch, radcliq=Adapter(composite))
    result = score_all(["a  b", "c"], ["d   e", "f"], ["rexrank_radcliq"])
    assert composite.seen == ["a b", "c", "d e", "f"]  # runs of spaces collapsed, as CXR-Report-Metric does
    assert result.per_report["rexrank_radgraph"] == [0.5, 0.0]
    assert result.per_report["rexrank_bertscore"] == [0.2, 0.4]
    assert result.per_report["rexrank_sembscore"] == [0.8, 0.6]
    # 2 - (radgraph + bertscore + semb), the BLEU weight 0: 0.5 and 1.0
    assert result.per_report["rexrank_radcliq_v1"] == pytest.approx([0.5, 1.0])
    assert result.summary["rexrank_radcliq_v1"] == pytest.approx(0.75)
    assert result.summary["rexrank_radcliq_v1_inverse"] == pytest.approx(1 / 0.75)  # 1 / mean
    assert result.summary["rexrank_bertscore"] == pytest.approx(0.3)
    assert result.per_report["rexrank_radcliq_status"] == ["ok", "ok"]
    sig = result.signatures
    assert "|value:1/mean|direction:higher|unverified:inversion|" in sig["rexrank_radcliq_v1_inverse"]
    assert (
        "|model:distilroberta-base|layers:5|rescale:true|idf:refs-of-call|unverified:idf|" in sig["rexrank_bertscore"]
    )
    assert "|model:radgraph|value:entity-relation-f1-mean|" in sig["rexrank_radgraph"]


@pytest.mark.skipif(importlib.util.find_spec("radeval") is None, reason="RadEval is not installed")
def test_radcliq_v1_equals_radeval_predict_with_its_coefficients(monkeypatch: pytest.MonkeyPatch) -> None:
    """srrg's RadCliQ-v1 from the inputs is RadEval's own prediction (its scaler and coefficients)."""
    rv._alias_old_package_name()
    from radeval.metrics.RadCliQv1 import radcliq as radeval_radcliq

    for model in ("RadGraph", "F1CheXbert", "Bleu"):  # no weights: the sub-models are never asked
        monkeypatch.setattr(radeval_radcliq, model, lambda *a, **k: None)
    composite = radeval_radcliq.CompositeMetric()
    inputs = {k: np.array(v) for k, v in INPUTS.items()}
    monkeypatch.setattr(composite, "_compute_sub_metrics", lambda refs, hyps: inputs)
    inverse, per = composite.predict(["a", "b"], ["c", "d"])
    ours = rx.radcliq_v1(composite, composite._build_matrix(inputs))
    assert ours == pytest.approx(list(per))
    assert 1 / np.mean(ours) == pytest.approx(inverse)


# ---- the preset: every column, its signature, and one line per part that cannot load ----


def parts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return boundary(
        monkeypatch,
        radcliq=Adapter(FakeComposite(INPUTS)),
        ratescore=FakeRaw({"ratescore": {"per_sample": [0.7, 0.5], "aggregate": 0.6}}),
        green=FakeRaw({"green": {"per_sample": [1.0, 0.0], "aggregate": 0.5}}),
    )


def test_preset_writes_every_rexrank_column_with_its_signature(monkeypatch, capsys) -> None:
    parts(monkeypatch)
    result = score_all(["The heart is normal.", "No effusion."], ["The heart is normal.", "Pneumothorax."], ["rexrank"])
    for column in rx.COLUMNS:
        assert column.key in result.summary and column.key in result.signatures, column
    assert result.summary["ratescore"] == pytest.approx(0.6)
    assert result.summary["green_model"] == pytest.approx(0.5)
    assert result.summary["rexrank_bleu"] == pytest.approx((1 + math.exp(-0.5) * math.sqrt(0.05)) / 2)
    assert math.isnan(result.summary["fineradscore_inverse"])
    assert result.per_report["fineradscore_status"] == ["unavailable", "unavailable"]
    assert "rexrank_unavailable" not in result.summary  # issue 46 R1: no status count among the scores
    sig = result.signatures
    assert sig["ratescore"].startswith("ratescore|radeval:") and "status:unavailable" not in sig["ratescore"]
    assert sig["fineradscore_inverse"].startswith("fineradscore|status:unavailable|reason:llm-judge-not-built|")
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"rexrank: 1/FineRadScore not scored: {rx.FINERADSCORE_REASON}"]


def test_missing_weights_leave_their_columns_unavailable_with_one_line_each(monkeypatch, capsys) -> None:
    missing = UserError("radcliq: RadEval could not load its weights (...); run `srrg models fetch ...`")
    boundary(
        monkeypatch,
        radcliq=missing,
        ratescore=UserError("RadEval metric 'ratescore' needs the module 'medspacy', which is not installed"),
        green=FakeRaw({"green": {"per_sample": [1.0, 0.0], "aggregate": 0.5}}),
    )
    result = score_all(["The heart is normal.", "x"], ["The heart is normal.", "y"], ["rexrank"])
    for key in ("rexrank_bertscore", "rexrank_sembscore", "rexrank_radgraph", "rexrank_radcliq_v1_inverse"):
        assert math.isnan(result.summary[key]) and "|status:unavailable|srrg:" in result.signatures[key], key
    assert result.per_report["rexrank_radcliq_status"] == ["unavailable", "unavailable"]
    assert math.isnan(result.summary["ratescore"]) and result.summary["green_model"] == pytest.approx(0.5)
    assert result.summary["rexrank_bleu"] == pytest.approx(0.5)  # the part without weights still scores
    assert result.per_report["ratescore_status"] == ["unavailable", "unavailable"]  # said per part, not counted
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"rexrank: BERTScore, SembScore, RadGraph, 1/RadCliQ-v1 not scored: {missing}",
        "rexrank: RaTEScore not scored: RadEval metric 'ratescore' needs the module 'medspacy', which is not installed",
        f"rexrank: 1/FineRadScore not scored: {rx.FINERADSCORE_REASON}",
    ]


def test_score_preset_writes_summary_and_signatures(tmp_path, monkeypatch, capsys) -> None:
    parts(monkeypatch)
    for name, texts in (("refs", ["The heart is normal.", "No effusion."]), ("hyps", ["The heart.", "Effusion."])):
        rows = [json.dumps({"study_id": s, "report": t}) for s, t in zip("ab", texts)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(rows) + "\n")
    args = ["score", "--refs", "refs.jsonl", "--hyps", "hyps.jsonl", "--preset", "rexrank", "--out", "out"]
    assert srrg_main(args) == 0
    summary = pl.read_csv(tmp_path / "out" / "summary.csv").row(0, named=True)
    assert {c.key for c in rx.COLUMNS} <= set(summary)
    assert summary["signature_rexrank_bleu"].startswith("rexrank_bleu|n:2|")
    assert summary["signature_fineradscore"].startswith("fineradscore|status:unavailable|")
    signatures = dict(pl.read_csv(tmp_path / "out" / "signatures.csv").iter_rows())
    assert {c.key for c in rx.COLUMNS} <= set(signatures)
    assert "signature_rexrank_radcliq:" in capsys.readouterr().out


def test_preset_and_metrics_exclude_each_other(capsys) -> None:
    args = ["score", "--refs", "r.jsonl", "--hyps", "h.jsonl", "--out", "o"]
    assert srrg_main([*args, "--preset", "rexrank", "--metrics", "bleu"]) == 2
    assert "argument --metrics: not allowed with argument --preset" in capsys.readouterr().err
    assert srrg_main(args) == 2
    assert "one of the arguments --metrics --preset is required" in capsys.readouterr().err


# ---- weights: listed by `srrg models fetch`; a missing one is one line ----


def test_preset_parts_and_their_weights_are_listed() -> None:
    assert tuple(catalog()["parts"]["rexrank"]) == rx.PARTS
    repos = {n.repo for n in metric_needs("rexrank")}
    assert {r for part in rx.PARTS for r in catalog()["metrics"].get(part, [])} == repos
    assert {"distilroberta-base", "StanfordAIMI/RRG_scorers", "StanfordAIMI/GREEN-radllama2-7b"} <= repos


@pytest.mark.skipif(importlib.util.find_spec("radeval") is None, reason="RadEval is not installed")
def test_a_weight_error_radeval_rewraps_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """RadEval's vendored RadGraph turns the hub's OSError into a bare Exception; still one line."""
    from radeval.metrics import _registry

    class NoWeights:
        def __init__(self) -> None:
            try:
                raise FileNotFoundError("cannot find the requested files in the local cache")
            except OSError as err:
                raise Exception(f"Cannot download the file {err}") from err

    from srrg import models_fetch

    monkeypatch.setattr(models_fetch, "prepare_offline", lambda metric: None)  # no hub probe
    monkeypatch.setattr(_registry, "get_metric_class", lambda name: NoWeights)
    with pytest.raises(UserError, match=r"^rexrank_radcliq: RadEval could not load its weights \(cannot find"):
        rv.radeval_metric("radcliq", "rexrank_radcliq")

    class Broken:
        def __init__(self) -> None:
            raise RuntimeError("a bug, not a missing weight")

    monkeypatch.setattr(_registry, "get_metric_class", lambda name: Broken)
    with pytest.raises(RuntimeError, match="a bug"):
        rv.radeval_metric("radcliq", "rexrank_radcliq")
