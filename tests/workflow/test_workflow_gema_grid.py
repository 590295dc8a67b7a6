"""The papers' grids from one workflow run (workflow/rules/paper_tables.smk): on the RadPref layout
fixture, three judge models served by the loopback OpenAI stub (one a reasoning model with two
thinking levels) give VERT's grid with a row per model and level plus the cross-model ensemble
rows, the over/under-estimation table, GEMA-Score Tables 1-2 with a row per backbone and both
error targets, GEMA Table 3 (the metrics against GEMA), the error-injection table and GREEN
Table 7's direct preference; every request is asked once, and rebuilt tables ask nothing (LLM cache)."""

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

MODELS = {"judge_a": "judge-a", "judge_b": "judge-b", "judge_r": "o3-mini"}  # o3-mini takes reasoning_effort
LEVELS = ("low", "high")
VERT_ROWS = ("judge_a", "judge_b", "judge_r.low", "judge_r.high")
ENTITY = "extracting the clinical entities"
PREFER = "comparing two candidate"  # the direct-preference prompt
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
    if PREFER in text:  # always candidate A
        return Reply("A is closer.\nPreferred: A")
    if SUBJECTIVE in text:
        counts = {f"{a}_errors": (h >> (2 * k)) % 3 for k, a in enumerate(("fluency", "grammar", "terminology"))}
        return Reply(json.dumps({**counts, "explanation": "stub"}))
    return green_or_vert_answer(body)


def injection_requests(injected: pl.DataFrame, seen: set[str]) -> int:
    """GEMA's requests for the error-injection candidates with status ok: the entity agent for each
    distinct candidate text not asked before (`seen`: metaeval_score's texts), the subjective agent
    for each distinct (reference, candidate); texts as the judge sends them (white space joined)."""
    ok = injected.filter(pl.col("status") == "ok")
    norm = [(" ".join(r.split()), " ".join(c.split())) for r, c in zip(ok["reference"], ok["candidate"])]
    return len({c for _, c in norm} - seen) + len(set(norm))


def test_one_run_writes_the_gema_backbone_grid_and_vert_grid(tmp_path, monkeypatch):
    """Bugs caught: GEMA scored with one backbone only, a backbone's row filled from another
    model's answers, a target missing, a thinking level not sent (or sent to a model without
    reasoning_effort), the ensemble rows, the over/under or the error-injection table missing, a
    request asked twice, a rebuilt table asking again. Requests: per VERT row 8 pairs x (GREEN + 3
    VERT variants); per model GEMA's distinct report texts (entity agent) + 8 pairs (subjective
    agent); the default judge's GEMA on the injected candidates (injection_requests)."""
    monkeypatch.setenv("SRRG_JUDGE_TEST_KEY", "sk-test")
    workdir = copy_workflow(tmp_path / "repo")
    with OpenAIStub(responder=answer) as stub:
        llm = {k: v for k, v in stub_llm_config(stub.base_url, "").items() if k != "cache_dir"}
        config = write_config(workdir, {
            "judge": {"llm": llm},
            "metaeval": {
                "datasets": {"rp": {"adapter": "radpref", "path": str(FIXTURES / "rating_layouts" / "radpref")}},
                "metrics": ["bleu", "rouge_l", "gema"],
                "correlate": {"n_boot": 20},
                "grid": {"models": {k: {"model": v} for k, v in MODELS.items()}, "gema": True,
                         "thinking": list(LEVELS), "ensembles": True},
                "injection": {"enabled": True, "k": [1, 2]},
                "preference": {"enabled": True},
            },
        })  # fmt: skip
        results = workdir / "results" / "metaeval" / "rp"
        targets = [
            "results/metaeval/rp/grid/vert_grid.md",
            "results/metaeval/rp/gema_grid/gema_grid.md",
            "results/metaeval/rp/gema3/table_gema.md",
            "results/metaeval/rp/injection/error_injection.md",
            "results/metaeval/rp/preference/preference.md",
        ]
        snakemake(workdir, *targets, "--configfile", str(config))
        texts = {t for f in ("refs", "hyps") for t in pl.read_parquet(results / "pairs" / f"{f}.parquet")["report"]}
        injected = pl.read_parquet(results / "injection" / "injection.parquet")
        extra = injection_requests(injected, {" ".join(t.split()) for t in texts})
        # + metaeval_score's GEMA, the injected candidates' GEMA, one preference request per case (4)
        total = len(VERT_ROWS) * 8 * 4 + (len(MODELS) + 1) * (len(texts) + 8) + extra + 4
        asked = [(r["model"], r.get("reasoning_effort"), last_user_message(r)) for r in stub.requests]
        assert len(asked) == total and len(set(asked)) == len(asked)
        for model in (*MODELS.values(), "stub-judge"):
            gema = [e for m, e, t in asked if m == model and (ENTITY in t or SUBJECTIVE in t)]
            assert len(gema) == len(texts) + 8 + (extra if model == "stub-judge" else 0) and set(gema) == {None}
        efforts = [e for m, e, t in asked if m == "o3-mini" and ENTITY not in t and SUBJECTIVE not in t]
        assert sorted(set(efforts)) == sorted(LEVELS) and all(efforts.count(x) == 8 * 4 for x in LEVELS)
        assert all("reasoning_effort" not in r for r in stub.requests if r["model"] != "o3-mini")
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
        rows = (*VERT_ROWS, "ensemble (mean)", "ensemble (least squares)")
        assert all(vert.count(f"| {name} |") == 2 for name in rows)  # Kendall and Spearman blocks
        over = pl.read_csv(results / "grid" / "over_under.csv", schema_overrides={"human_errors": pl.String})
        assert over["model"].unique().sort().to_list() == sorted(VERT_ROWS)
        assert all(n == 8 for n in over.group_by("model").agg(pl.col("n").sum())["n"])
        table3 = pl.read_csv(results / "gema3" / "correlations.csv")
        assert {"bleu_1", "rouge_l"} <= set(table3["metric"]) and "gema" not in set(table3["metric"])
        # error injection: 4 distinct references (RadPref's 2 candidates share one), 3 of them with 2
        # findings (dropping 2 would leave none), k 1 and 2: 6 candidates each
        statuses = injected["status"].value_counts().sort("status").rows()
        assert injected.height == 8 * 6 and statuses == [("duplicate", 24), ("ok", 21), ("too_few_findings", 3)]
        table = pl.read_csv(results / "injection" / "error_injection.csv")
        assert {"bleu_1", "rouge_l", "gema"} <= set(table["metric"]) and set(table["k"]) == {1, 2}
        assert all(n == (1 if (c, k) == ("dropped", 2) else 4) for c, k, n in table.select("category", "k", "n").rows())
        assert all(math.isfinite(f) for f in table["f1"])
        shutil.rmtree(results / "gema_grid")
        shutil.rmtree(results / "grid")
        preference = pl.read_csv(results / "preference" / "preference.csv")  # experts prefer C1 in 2 of 4
        assert preference.row(0) == ("direct preference (stub-judge)", "judge", 4, 2, 2, 0, 0, 0.5, 0.5)
        assert {"bleu_1", "rouge_l", "gema"} <= set(preference["row"])
        shutil.rmtree(results / "injection")
        shutil.rmtree(results / "preference")
        snakemake(workdir, *targets[:2], *targets[3:], "--configfile", str(config))
        assert len(stub.requests) == total  # every answer came from the cache
        assert pl.read_csv(results / "gema_grid" / "gema_grid.csv").equals(grid)
