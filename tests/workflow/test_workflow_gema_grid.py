"""GEMA's backbone grid from one workflow run (workflow/rules/paper_tables.smk, metaeval.grid.gema):
on the RadPref layout fixture, three judge models served by the loopback OpenAI stub give VERT's
grid with three rows and GEMA-Score Tables 1-2 with a row per backbone and both error targets;
every request is asked once, and a rebuilt grid asks nothing (LLM cache)."""

from __future__ import annotations

import json
import math
import shutil
import zlib

import polars as pl
import pytest
from judge_responses import stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message
from paths import FIXTURES
from test_workflow_paper_tables import answer as green_or_vert_answer
from workflow_helpers import copy_workflow, snakemake, write_config

pytestmark = pytest.mark.slow

MODELS = {"judge_a": "judge-a", "judge_b": "judge-b", "judge_c": "judge-c"}
ENTITY = "extracting the clinical entities"
SUBJECTIVE = "Count the candidate's problems"
DISEASES = ("pleural effusion", "atelectasis", "cardiomegaly", "pneumothorax", "edema")


def answer(body):
    """GEMA's two agents answer JSON whose content depends on the model and the text (so GEMA
    varies over pairs and models); every other prompt gets the GREEN/VERT answer."""
    text = last_user_message(body)
    h = zlib.crc32(f"{body['model']}|{text}".encode())
    if ENTITY in text:
        picked = [d for k, d in enumerate(DISEASES) if (h >> k) & 1] or [DISEASES[h % 5]]
        entities = [{"disease": d, "location": None, "severity": None, "uncertainty": "certain"} for d in picked]
        return Reply(json.dumps({"entities": entities}))
    if SUBJECTIVE in text:
        counts = {f"{a}_errors": (h >> (2 * k)) % 3 for k, a in enumerate(("fluency", "grammar", "terminology"))}
        return Reply(json.dumps({**counts, "explanation": "stub"}))
    return green_or_vert_answer(body)


def test_one_run_writes_the_gema_backbone_grid_and_vert_grid(tmp_path, monkeypatch):
    """Bugs caught: GEMA scored with one backbone only, a backbone's row filled from another
    model's answers, a target missing, an entity text or pair asked twice, the rebuilt grid asking
    again. Requests: per model 8 pairs x (GREEN + 3 VERT variants) + GEMA's distinct report texts
    (entity agent) + 8 pairs (subjective agent)."""
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    workdir = copy_workflow(tmp_path / "repo")
    with OpenAIStub(responder=answer) as stub:
        llm = {k: v for k, v in stub_llm_config(stub.base_url, "").items() if k != "cache_dir"}
        config = write_config(workdir, {
            "judge": {"llm": llm},
            "metaeval": {
                "datasets": {"rp": {"adapter": "radpref", "path": str(FIXTURES / "rating_layouts" / "radpref")}},
                "metrics": ["bleu", "rouge_l"],
                "correlate": {"n_boot": 20},
                "grid": {"models": {k: {"model": v} for k, v in MODELS.items()}, "gema": True},
            },
        })  # fmt: skip
        results = workdir / "results" / "metaeval" / "rp"
        targets = ["results/metaeval/rp/grid/vert_grid.md", "results/metaeval/rp/gema_grid/gema_grid.md"]
        snakemake(workdir, *targets, "--configfile", str(config))
        texts = {t for f in ("refs", "hyps") for t in pl.read_parquet(results / "pairs" / f"{f}.parquet")["report"]}
        per_model = 8 * 4 + len(texts) + 8
        asked = [(r["model"], last_user_message(r)) for r in stub.requests]
        assert len(asked) == 3 * per_model and len(set(asked)) == len(asked)
        for model in MODELS.values():
            mine = [t for m, t in asked if m == model]
            assert sum(ENTITY in t for t in mine) == len(texts) and sum(SUBJECTIVE in t for t in mine) == 8
        md = (results / "gema_grid" / "gema_grid.md").read_text()
        assert "| Judge model | Significant τb | p | Significant ρ | p | Insignificant τb |" in md
        assert all(md.count(f"| {name} |") == 1 for name in MODELS)
        grid = pl.read_csv(results / "gema_grid" / "gema_grid.csv")
        assert grid["model"].unique().sort().to_list() == sorted(MODELS)
        assert set(grid["target"]) == {"errors_significant", "errors_insignificant"}
        assert all(math.isfinite(v) for v in grid["value"])
        # each backbone's row is its own GEMA column correlated as metaeval-gema does it
        for name in MODELS:
            own = pl.read_csv(results / "gema_grid" / name / "errors_significant" / "correlations.csv")
            want = own.filter((pl.col("metric") == "gema") & (pl.col("method") == "kendall"))["value"].item()
            got = grid.filter(
                (pl.col("model") == name) & (pl.col("target") == "errors_significant") & (pl.col("method") == "kendall")
            )["value"].item()
            assert got == pytest.approx(want, abs=1e-12)
        vert = (results / "grid" / "vert_grid.md").read_text()
        assert all(vert.count(f"| {name} |") == 2 for name in MODELS)  # Kendall and Spearman blocks
        shutil.rmtree(results / "gema_grid")
        shutil.rmtree(results / "grid")
        snakemake(workdir, *targets, "--configfile", str(config))
        assert len(stub.requests) == 3 * per_model  # every answer came from the cache
        assert pl.read_csv(results / "gema_grid" / "gema_grid.csv").equals(grid)
