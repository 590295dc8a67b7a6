"""RadEval-backed metrics (srrg.metrics.radeval): RadEval's lexical metrics for real when RadEval is
installed; the model-backed ones with RadEval's scorer replaced at srrg's loading boundary
(`radeval_metric`) by fakes with known outputs. The fakes' numbers test srrg's mapping of keys,
per-report values, corpus values, directions and statuses; they are not measurements."""

from __future__ import annotations

import importlib.metadata
import json
import math
from typing import Any

import polars as pl
import pytest

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.metrics import radeval as rv
from srrg.metrics.base import get_metric, score_all
from srrg.metrics.score import run_score

CX = rv.CHEXBERT_14


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default per-report cache (.cache/srrg/radeval) lands in each test's own folder."""
    monkeypatch.chdir(tmp_path)


def vector(*names: str) -> list[int]:
    return [1 if n in names else 0 for n in CX]


class FakeLabeler:
    """Stands in for RadEval's F1CheXbert scorer: fixed labels per text, counting its calls."""

    def __init__(self, table: dict[str, list[int]]) -> None:
        self.table, self.seen = table, []

    def get_labels(self, reports: list[str]) -> list[list[int]]:
        self.seen.extend(reports)
        return [self.table[r] for r in reports]


class FakeMetric:
    """Stands in for a RadEval MetricBase: `_compute_raw` / `compute(per_sample=True)` give the
    outputs it was built with."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self.raw_out = raw

    def _compute_raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        return self.raw_out

    def compute(self, refs: list[str], hyps: list[str], per_sample: bool = False) -> dict[str, Any]:
        assert per_sample
        return {k: v["per_sample"] for k, v in self.raw_out.items()}


def fake_boundary(monkeypatch: pytest.MonkeyPatch, **by_name: Any) -> None:
    """RadEval's metric of each RadEval name is the given fake."""

    def load(name: str, metric: str) -> Any:
        assert metric in rv.RADEVAL_METRICS
        return by_name[name]

    monkeypatch.setattr(rv, "radeval_metric", load)


class _Scorer:
    def __init__(self, labeler: FakeLabeler) -> None:
        self._scorer = labeler


def test_chexbert_counts_micro_macro_and_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    labeler = FakeLabeler(
        {
            "cardiomegaly and edema.": vector("Cardiomegaly", "Edema"),
            "normal chest.": vector("No Finding"),
            "cardiomegaly.": vector("Cardiomegaly"),
            "small effusion.": vector("Pleural Effusion"),
        }
    )
    fake_boundary(monkeypatch, f1chexbert=_Scorer(labeler))
    refs, hyps = ["cardiomegaly and edema.", "normal chest."], ["cardiomegaly.", "small effusion."]
    result = score_all(refs, hyps, ["chexbert"])
    per, summary = result.per_report, result.summary
    # pair 1: tp Cardiomegaly, fn Edema; pair 2: fp Pleural Effusion, fn No Finding
    assert per["chexbert_tp_14"] == [1.0, 0.0] and per["chexbert_fp_14"] == [0.0, 1.0]
    assert per["chexbert_fn_14"] == [1.0, 1.0]
    assert per["chexbert_fn_5"] == [1.0, 0.0]  # No Finding is not one of the 5
    assert per["chexbert_f1_14"] == pytest.approx([2 / 3, 0.0])
    assert per["chexbert_ref_labels"] == ["Cardiomegaly; Edema", "No Finding"]
    assert summary["chexbert_14_micro_f1"] == pytest.approx(2 / 5)  # 2*1 / (2*1 + 1 + 2)
    assert summary["chexbert_14_macro_f1"] == pytest.approx(1 / 14)  # only Cardiomegaly has F1 1
    assert summary["chexbert_5_micro_f1"] == pytest.approx(2 / 4)
    assert summary["chexbert_5_macro_f1"] == pytest.approx(1 / 5)
    assert sorted(labeler.seen) == sorted(set(refs + hyps))  # each distinct text labeled once
    assert result.signatures["chexbert_5_micro_f1"] == (
        "chexbert|radeval:2.2.1|labels:5|avg:micro|uncertain:positive"
        "|weights:bert-base-uncased@main|weights:StanfordAIMI/RRG_scorers@main|srrg:0.1.0"
    )  # nothing fetched here
    assert "labels:14|avg:macro" in result.signatures["chexbert_14_macro_f1"]


def test_chexbert_reads_structured_reports_as_sentences(monkeypatch: pytest.MonkeyPatch) -> None:
    js = json.dumps({"positive": [{"name": "pleural effusion", "probability": 3}], "negative": []})
    (sentence,) = rv.texts([js])
    assert "pleural effusion" in sentence and not sentence.startswith("{")
    labeler = FakeLabeler({sentence: vector("Pleural Effusion")})
    fake_boundary(monkeypatch, f1chexbert=_Scorer(labeler))
    per = score_all([js], [js], ["chexbert"]).per_report
    assert labeler.seen == [sentence] and per["chexbert_tp_14"] == [1.0]


def test_radcliq_direction_and_both_corpus_values(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_boundary(monkeypatch, radcliq=FakeMetric({"radcliq_v1": {"per_sample": [2.0, 4.0], "aggregate": 1 / 3}}))
    result = score_all(["a", "b"], ["a", "c"], ["radcliq"])
    assert result.per_report["radcliq_v1"] == [2.0, 4.0]
    assert result.summary["radcliq_v1"] == 3.0  # mean predicted error count: lower is better
    assert result.summary["radcliq_v1_inverse"] == pytest.approx(1 / 3)  # RadEval's printed 1 / mean
    assert rv.RadCliQ.directions() == {"radcliq_v1": "lower", "radcliq_v1_inverse": "higher"}
    assert "value:mean|direction:lower" in result.signatures["radcliq_v1"]
    assert "value:1/mean|direction:higher" in result.signatures["radcliq_v1_inverse"]


def test_green_model_unscored_report_is_nan_with_status(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_boundary(monkeypatch, green=FakeMetric({"green": {"per_sample": [0.5, None, 1.0], "aggregate": 0.5}}))
    result = score_all(["a", "b", "c"], ["a", "b", "c"], ["green_model"])
    values = result.per_report["green_model"]
    assert values[0] == 0.5 and math.isnan(values[1]) and values[2] == 1.0
    assert result.per_report["green_model_status"] == ["ok", "no_score", "ok"]
    assert result.summary["green_model"] == 0.75 and result.summary["green_model_failures"] == 1.0
    assert "model:StanfordAIMI/GREEN-radllama2-7b" in result.signatures["green_model"]


def test_srrbert_corpus_is_radeval_aggregate_not_the_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = {f"srrbert_weighted_{m}": {"per_sample": [1.0, 0.0], "aggregate": 0.8} for m in ("f1", "precision", "recall")}
    fake_boundary(monkeypatch, srrbert=FakeMetric(raw))
    result = score_all(["a", "b"], ["a", "b"], ["srrbert"])
    assert result.per_report["srrbert_weighted_f1"] == [1.0, 0.0] and result.summary["srrbert_weighted_f1"] == 0.8


def test_radgraph_three_levels_per_report_and_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = {
        "radgraph_simple": {"per_sample": [1.0, 0.5]},
        "radgraph_partial": {"per_sample": [0.5, 0.5]},
        "radgraph_complete": {"per_sample": [0.0, 0.5]},
    }
    fake_boundary(monkeypatch, radgraph=FakeMetric(raw))
    result = score_all(["a", "b"], ["a", "b"], ["radgraph"])
    assert result.summary["radgraph_simple"] == 0.75 and result.summary["radgraph_complete"] == 0.25
    assert result.per_report["radgraph_status"] == ["ok", "ok"]
    assert "model:radgraph-xl|reward:partial" in result.signatures["radgraph_partial"]


def test_bertscore_and_ratescore_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_boundary(
        monkeypatch,
        bertscore=FakeMetric({"bertscore": {"per_sample": [0.2, 0.4], "aggregate": 0.3}}),
        ratescore=FakeMetric({"ratescore": {"per_sample": [0.6, 0.8], "aggregate": 0.7}}),
    )
    result = score_all(["a", "b"], ["a", "b"], ["bertscore", "ratescore"])
    assert result.summary["bertscore"] == pytest.approx(0.3) and result.summary["ratescore"] == pytest.approx(0.7)
    assert result.per_report["ratescore"] == [0.6, 0.8]
    assert "model:distilbert-base-uncased|layers:5|rescale:true|idf:false" in result.signatures["bertscore"]


def test_wrong_number_of_values_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_boundary(monkeypatch, bertscore=FakeMetric({"bertscore": {"per_sample": [0.2], "aggregate": 0.2}}))
    with pytest.raises(ValueError, match="1 values for 2 pairs"):
        score_all(["a", "b"], ["a", "b"], ["bertscore"])


def test_score_writes_radeval_columns_and_signatures(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_boundary(monkeypatch, radcliq=FakeMetric({"radcliq_v1": {"per_sample": [1.0, 3.0], "aggregate": 0.5}}))
    for name in ("refs", "hyps"):
        rows = [json.dumps({"study_id": s, "report": "x"}) for s in ("a", "b")]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(rows) + "\n")
    run_score(tmp_path / "refs.jsonl", tmp_path / "hyps.jsonl", ["radcliq"], tmp_path / "out")
    per = pl.read_parquet(tmp_path / "out" / "per_report.parquet")
    assert per["radcliq_v1"].to_list() == [1.0, 3.0]
    summary = pl.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["radcliq_v1"][0] == 2.0
    assert summary["signature_radcliq"][0].startswith("radcliq|radeval:2.2.1|version:1|value:mean|direction:lower")
    sigs = pl.read_csv(tmp_path / "out" / "signatures.csv")
    assert set(sigs["key"]) == {"radcliq_v1", "radcliq_status", "radcliq_failures", "radcliq_v1_inverse"}


def test_without_the_extra_one_line_naming_the_install(tmp_path, monkeypatch, capsys) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    for name in ("refs", "hyps"):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({"study_id": "a", "report": "x"}) + "\n")
    code = srrg_main(
        [
            "score",
            "--refs",
            str(tmp_path / "refs.jsonl"),
            "--hyps",
            str(tmp_path / "hyps.jsonl"),
            "--metrics",
            "chexbert",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "pip install 'srrg[radeval]'" in err


def test_every_radeval_metric_is_registered_with_keys() -> None:
    for name, cls in rv.RADEVAL_METRICS.items():
        assert type(get_metric(name)) is cls and cls.keys


# ---- RadEval itself (no weights): its lexical metrics through srrg, for real ----


def test_real_radeval_rouge_and_bleu() -> None:
    pytest.importorskip("radeval")
    pytest.importorskip("rouge_score")
    refs = ["the heart is enlarged", "no pleural effusion is seen today"]
    hyps = ["the heart is enlarged", "no effusion"]
    result = score_all(refs, hyps, ["radeval_rouge", "radeval_bleu"])
    # pair 2: rouge1 unigrams: hyp {no, effusion} both in ref (6 tokens): P = 1, R = 2/6 -> F = 0.5
    assert result.per_report["radeval_rouge1"] == pytest.approx([1.0, 0.5])
    assert result.summary["radeval_rouge1"] == pytest.approx(0.75)
    assert result.per_report["radeval_bleu"][0] == pytest.approx(1.0)  # identical 4-token texts
    assert result.per_report["radeval_rouge_status"] == ["ok", "ok"]


class Counting(FakeMetric):
    """A fake that records how many pairs each call scored."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        super().__init__(raw)
        self.calls: list[int] = []

    def _compute_raw(self, refs: list[str], hyps: list[str]) -> dict[str, dict[str, Any]]:
        self.calls.append(len(refs))
        values = {("a", "a"): 0.5, ("b", "b"): None, ("c", "c"): 1.0}
        return {"green": {"per_sample": [values[(r, h)] for r, h in zip(refs, hyps)], "aggregate": math.nan}}


def test_per_report_cache_scores_only_unseen_pairs_and_never_stores_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Counting({})
    fake_boundary(monkeypatch, green=fake)
    first = score_all(["a", "b"], ["a", "b"], ["green_model"])
    again = score_all(["a", "b", "c", "c"], ["a", "b", "c", "c"], ["green_model"])
    assert fake.calls == [2, 2]  # second run: b (not stored: no score) and c (once for two rows)
    assert again.per_report["green_model"][0] == first.per_report["green_model"][0] == 0.5
    assert again.per_report["green_model_status"] == ["ok", "no_score", "ok", "ok"]
    assert again.summary["green_model"] == pytest.approx((0.5 + 1.0 + 1.0) / 3)
    score_all(["a"], ["a"], ["green_model"], {"green_model": {"cache_dir": None}})
    assert fake.calls == [2, 2, 1]  # without the cache RadEval is asked again
    moved = get_metric("green_model", cache_dir="elsewhere").signature("green_model")
    assert moved == get_metric("green_model").signature("green_model")  # where it is cached is not in it


def test_chexbert_labels_are_cached_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    labeler = FakeLabeler({"edema.": vector("Edema"), "clear.": vector("No Finding")})
    fake_boundary(monkeypatch, f1chexbert=_Scorer(labeler))
    score_all(["edema."], ["clear."], ["chexbert"])
    result = score_all(["clear."], ["edema."], ["chexbert"])
    assert labeler.seen == ["edema.", "clear."] and result.per_report["chexbert_hyp_labels"] == ["Edema"]


def test_chexbert_micro_macro_equal_radeval_own_report_code() -> None:
    """The same labels through RadEval's own evaluator (its forward, with the labeler's output
    given instead of the model's) and through srrg: equal micro and macro F1 over 5 and 14 labels."""
    pytest.importorskip("sklearn")
    module = pytest.importorskip("radeval.metrics.f1chexbert.f1chexbert")
    refs = [vector("Cardiomegaly", "Edema"), vector("No Finding"), vector("Pleural Effusion", "Atelectasis"), vector()]
    hyps = [vector("Cardiomegaly"), vector("Pleural Effusion"), vector("Pleural Effusion"), vector("Fracture")]
    import torch

    scorer = object.__new__(module.F1CheXbert)  # no model: its labels are given below
    torch.nn.Module.__init__(scorer)
    scorer.refs_filename = scorer.hyps_filename = None
    scorer.top5_idx = [CX.index(n) for n in rv.CHEXBERT_5]
    table = {id(r): r for r in refs} | {id(h): h for h in hyps}
    scorer.get_labels = lambda texts, on_batch_done=None: [table[t] for t in texts]
    _, _, cr_all, cr_5, _, _ = scorer.forward([id(h) for h in hyps], [id(r) for r in refs])
    idx14 = list(range(14))
    idx5 = [CX.index(n) for n in rv.CHEXBERT_5]
    ours = {**rv.chexbert_summary(refs, hyps, idx14, 14), **rv.chexbert_summary(refs, hyps, idx5, 5)}
    assert ours["chexbert_14_micro_f1"] == pytest.approx(cr_all["micro avg"]["f1-score"])
    assert ours["chexbert_14_macro_f1"] == pytest.approx(cr_all["macro avg"]["f1-score"])
    assert ours["chexbert_5_micro_f1"] == pytest.approx(cr_5["micro avg"]["f1-score"])
    assert ours["chexbert_5_macro_f1"] == pytest.approx(cr_5["macro avg"]["f1-score"])


def test_unreachable_hub_is_one_line_naming_the_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = pytest.importorskip("radeval.metrics._registry")
    from huggingface_hub import constants

    from srrg.models_fetch import hub_unreachable

    # the reachability probe asks a closed loopback port (never the real hub); its offline switch is undone after
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub_unreachable.cache_clear()

    class NoWeights:
        def __init__(self) -> None:
            raise OSError("We couldn't connect to 'https://huggingface.co' to load the files.\nCheck your connection.")

    monkeypatch.setattr(registry, "get_metric_class", lambda name: NoWeights)
    with pytest.raises(
        UserError,
        match=r"^bertscore: RadEval could not load its weights \(the hub http://127.0.0.1:9 "
        r"does not answer \(ConnectError.* We couldn't connect.*srrg models fetch",
    ):
        score_all(["a"], ["a"], ["bertscore"])
