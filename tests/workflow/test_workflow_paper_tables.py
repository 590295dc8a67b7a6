"""The papers' tables from one workflow run each (workflow/rules/paper_tables.smk, metaeval.smk):
S-RRG Table 3's default columns (dry run), and on the RadPref layout fixture one `snakemake` run
that writes VERT's grid for two judge models served by the loopback OpenAI stub and GEMA Tables
1-2 with both error targets; the grid asks every model x prompt x pair once, and a rebuilt grid
asks nothing (LLM cache)."""

from __future__ import annotations

import json
import math
import re
import shutil
import zlib

import polars as pl
import pytest
from judge_responses import green_answer, stub_llm_config
from openai_stub import OpenAIStub, Reply, last_user_message
from paths import FIXTURES
from workflow_helpers import copy_workflow, snakemake, write_config

pytestmark = pytest.mark.slow

TABLE3 = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "green", "s_score"]


def commands(workdir, config):
    proc = snakemake(workdir, "-n", "-p", "--configfile", str(write_config(workdir, config)))
    return proc.stdout.splitlines()


def test_table3_has_the_papers_columns_by_default(tmp_path):
    """With no setting, the judge stage scores METEOR and the structured S-Score next to BLEU and
    ROUGE-L, and metaeval_proxy correlates exactly S-RRG Table 3's columns, in its order; judging
    a Sentence-Direct run drops s_score from both (bug: s_score on free text, or Table 3 built from
    whatever headline columns happen to exist)."""
    workdir = copy_workflow(tmp_path / "repo")
    lines = commands(workdir, {})
    judge = next(line for line in lines if "-m srrg judge " in line)
    assert re.search(r"--metrics green,vert,gema,proxy_rating,bleu,meteor,rouge_l,s_score,s_score_text ", judge)
    proxy = next(line for line in lines if "-m srrg metaeval-proxy " in line)
    assert json.loads(re.search(r"--config '(.*?)'", proxy).group(1))["metrics"] == TABLE3
    lines = commands(workdir, {"judge": {"run": "smollm2_sentences"}})
    judge = next(line for line in lines if "-m srrg judge " in line)
    assert "s_score," not in judge and "s_score_text" in judge
    proxy = next(line for line in lines if "-m srrg metaeval-proxy " in line)
    assert json.loads(re.search(r"--config '(.*?)'", proxy).group(1))["metrics"] == TABLE3[:-1]


def answer(body):
    """A well-formed GREEN answer (plus a [Score] for VERT prompts) whose counts depend on the
    model and the prompt text, so that every grid column varies over the pairs."""
    text = last_user_message(body)
    h = zlib.crc32(f"{body['model']}|{text}".encode())
    sig = (h % 3, (h >> 3) % 2, 0, 0, 0, 0)
    matched = 1 + (h >> 5) % 3
    score = f"{((h >> 8) % 101) / 100:.2f}" if "[Score]" in text else None
    return Reply(green_answer(sig, matched, insig=((h >> 11) % 2, 0, 0, 0, 0, 0), score=score))


def test_one_run_writes_vert_grid_and_gema_tables(tmp_path, monkeypatch):
    """Two judge models x (GREEN + direct, formula, rubric) on the 8 RadPref fixture pairs: 64
    requests, each (model, prompt text) once; the grid has one row per model and the six columns;
    GEMA Tables 1-2 show both targets; deleting the grid and rebuilding it sends no request."""
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
                "grid": {"models": {"judge_a": {"model": "judge-a"}, "judge_b": {"model": "judge-b"}}},
            },
        })  # fmt: skip
        grid_dir = workdir / "results" / "metaeval" / "rp" / "grid"
        targets = ["results/metaeval/rp/grid/vert_grid.md", "results/metaeval/rp/gema12/table_gema12.md"]
        snakemake(workdir, *targets, "--configfile", str(config))
        asked = [(r["model"], last_user_message(r)) for r in stub.requests]
        assert len(asked) == 2 * 4 * 8 and len(set(asked)) == len(asked)
        assert {m for m, _ in asked} == {"judge-a", "judge-b"}
        assert len({t for _, t in asked}) == 4 * 8  # GREEN and three distinct VERT prompts per pair
        grid = pl.read_csv(grid_dir / "vert_grid.csv")
        assert grid.height == 2 * 6 * 2 and all(math.isfinite(v) for v in grid["value"])
        md = (grid_dir / "vert_grid.md").read_text()
        assert "| Judge model (Kendall τb) | GREEN | GREEN-EC | GREEN-F1 | direct | formula | rubric |" in md
        assert md.count("| judge_a |") == 2 and md.count("| judge_b |") == 2  # Kendall and Spearman blocks
        gema = (workdir / "results" / "metaeval" / "rp" / "gema12" / "table_gema12.md").read_text()
        assert "| Metric | Significant τb | p | Significant ρ | p | Insignificant τb |" in gema
        assert "| bleu_1 |" in gema and "| rouge_l |" in gema
        shutil.rmtree(grid_dir)
        snakemake(workdir, targets[0], "--configfile", str(config))
        assert len(stub.requests) == 2 * 4 * 8  # every answer came from the cache
        assert pl.read_csv(grid_dir / "vert_grid.csv").equals(grid)
