# Meta-evaluation (docs/metaeval.md): correlation of metrics with human ratings (datasets configured
# under metaeval.datasets, read in their published layouts), RadJudge ranking cases (entries with
# adapter radjudge), and correlation with the LLM-proxy rating of the judge subset (S-RRG Table 3).

METAEVAL_RATING = {
    n: d for n, d in METAEVAL_DATASETS.items() if d["adapter"] != "radjudge"
}
METAEVAL_RANKING = {
    n: d for n, d in METAEVAL_DATASETS.items() if d["adapter"] == "radjudge"
}
METAEVAL_RATING_NAMES = wildcard_choice(METAEVAL_RATING)
METAEVAL_RANKING_NAMES = wildcard_choice(METAEVAL_RANKING)


rule metaeval_prepare:
    """A ratings dataset in its published layout -> refs/hyps for `srrg score` + long ratings table."""
    input:
        data=lambda wc: METAEVAL_RATING[wc.dataset]["path"],
        code=stage_code("metaeval_prepare"),
    output:
        refs=results("metaeval", "{dataset}", "pairs", "refs.parquet"),
        hyps=results("metaeval", "{dataset}", "pairs", "hyps.parquet"),
        ratings=results("metaeval", "{dataset}", "pairs", "ratings.parquet"),
        pairs=results("metaeval", "{dataset}", "pairs", "pairs.parquet"),
        info=results("metaeval", "{dataset}", "pairs", "info.json"),
    log:
        logs("metaeval", "{dataset}_prepare.log"),
    benchmark:
        benchmarks_dir("metaeval_prepare", "{dataset}_prepare.tsv")
    wildcard_constraints:
        dataset=METAEVAL_RATING_NAMES,
    conda:
        "../../envs/score.yaml"
    params:
        adapter=lambda wc: METAEVAL_RATING[wc.dataset]["adapter"],
        options=lambda wc: as_json(METAEVAL_RATING[wc.dataset].get("options", {})),
        out_dir=lambda wc: results("metaeval", wc.dataset, "pairs"),
    shell:
        "python -m srrg metaeval-prepare --adapter {params.adapter} --data {input.data:q}"
        " --options {params.options:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule metaeval_score:
    """Every configured metric on the rated pairs."""
    input:
        refs=rules.metaeval_prepare.output.refs,
        hyps=rules.metaeval_prepare.output.hyps,
        code=stage_code("metaeval_score"),
    output:
        per_report=results("metaeval", "{dataset}", "scores", "per_report.parquet"),
    log:
        logs("metaeval", "{dataset}_score.log"),
    benchmark:
        benchmarks_dir("metaeval_score", "{dataset}_score.tsv")
    wildcard_constraints:
        dataset=METAEVAL_RATING_NAMES,
    conda:
        "../../envs/llm.yaml"
    params:
        metrics=",".join(METAEVAL["metrics"]),
        options=metaeval_dataset_options(),
        out_dir=lambda wc: results("metaeval", wc.dataset, "scores"),
    shell:
        "python -m srrg metaeval-score --refs {input.refs:q} --hyps {input.hyps:q} --metrics {params.metrics}"
        " --out {params.out_dir:q} --config {params.options:q} > {log:q} 2>&1"


rule metaeval_correlate:
    """Kendall/Spearman with case-clustered bootstrap CIs, paired tests, count-level P/R/F1,
    ensembles, agreement, human ceiling, per-rater tables, tests between metrics."""
    input:
        scores=rules.metaeval_score.output.per_report,
        ratings=rules.metaeval_prepare.output.ratings,
        pairs=rules.metaeval_prepare.output.pairs,
        code=stage_code("metaeval_correlate"),
    output:
        gema=report(
            results("metaeval", "{dataset}", "tables", "table_gema.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        srrg=report(
            results("metaeval", "{dataset}", "tables", "table_srrg.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        correlations=report(
            results("metaeval", "{dataset}", "tables", "correlations.csv"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        ceiling=report(
            results("metaeval", "{dataset}", "tables", "human_ceiling.md"),
            caption="../report/metaeval_ceiling.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        figure=report(
            results("metaeval", "{dataset}", "tables", "ceiling.png"),
            caption="../report/metaeval_ceiling.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        better_than=report(
            results("metaeval", "{dataset}", "tables", "better_than.md"),
            caption="../report/metaeval_ceiling.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
    log:
        logs("metaeval", "{dataset}_correlate.log"),
    benchmark:
        benchmarks_dir("metaeval_correlate", "{dataset}_correlate.tsv")
    wildcard_constraints:
        dataset=METAEVAL_RATING_NAMES,
    conda:
        "../../envs/score.yaml"
    params:
        cfg=as_json(METAEVAL["correlate"]),
        out_dir=lambda wc: results("metaeval", wc.dataset, "tables"),
    shell:
        "python -m srrg metaeval-correlate --scores {input.scores:q} --ratings {input.ratings:q}"
        " --pairs {input.pairs:q} --out {params.out_dir:q} --config {params.cfg:q} > {log:q} 2>&1"


rule metaeval_rank:
    """RadJudge ranking cases: pass counts per category for every configured metric."""
    input:
        cases=lambda wc: METAEVAL_RANKING[wc.dataset]["path"],
        code=stage_code("metaeval_rank"),
    output:
        table=report(
            results("metaeval", "{dataset}", "ranking", "rank_categories.md"),
            caption="../report/metaeval_rank.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        cases=results("metaeval", "{dataset}", "ranking", "rank_cases.csv"),
    log:
        logs("metaeval", "{dataset}_rank.log"),
    benchmark:
        benchmarks_dir("metaeval_rank", "{dataset}_rank.tsv")
    wildcard_constraints:
        dataset=METAEVAL_RANKING_NAMES,
    conda:
        "../../envs/llm.yaml"
    params:
        metrics=",".join(METAEVAL["metrics"]),
        options=metaeval_dataset_options(),
        stat_keys=lambda wc: ",".join(
            f"{m}={k}"
            for m, k in METAEVAL_RANKING[wc.dataset]
            .get("options", {})
            .get("keys", {})
            .items()
        ),
        out_dir=lambda wc: results("metaeval", wc.dataset, "ranking"),
    shell:
        "python -m srrg metaeval-rank --cases {input.cases:q} --metrics {params.metrics} --keys {params.stat_keys:q}"
        " --out {params.out_dir:q} --config {params.options:q} > {log:q} 2>&1"


add_targets(
    *expand(rules.metaeval_correlate.output.gema, dataset=list(METAEVAL_RATING)),
    *expand(rules.metaeval_rank.output.table, dataset=list(METAEVAL_RANKING)),
)


# Error injection (metaeval.injection.enabled): on every rating set's references
INJECTION_DATASETS = list(METAEVAL_RATING) if METAEVAL["injection"]["enabled"] else []


rule error_injection:
    """k findings inserted into or dropped from each reference, every metric scored."""
    input:
        refs=rules.metaeval_prepare.output.refs,
        code=stage_code("error_injection"),
    output:
        table=report(
            results("metaeval", "{dataset}", "injection", "error_injection.md"),
            caption="../report/metaeval_injection.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        csv=results("metaeval", "{dataset}", "injection", "error_injection.csv"),
    log:
        logs("metaeval", "{dataset}_injection.log"),
    benchmark:
        benchmarks_dir("error_injection", "{dataset}_injection.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(INJECTION_DATASETS),
    conda:
        "../../envs/llm.yaml"
    resources:
        llm_api=llm_api(),
    params:
        metrics=",".join(METAEVAL["metrics"]),
        cfg=as_json(METAEVAL["injection"]),
        options=metaeval_dataset_options(),
        out_dir=lambda wc: results("metaeval", wc.dataset, "injection"),
    shell:
        "python -m srrg error-injection --refs {input.refs:q} --metrics {params.metrics} --out {params.out_dir:q}"
        " --config {params.cfg:q} --options {params.options:q} > {log:q} 2>&1"


add_targets(*expand(rules.error_injection.output.table, dataset=INJECTION_DATASETS))


# GREEN Table 7's direct preference (metaeval.preference.enabled): on every rating set
PREFERENCE_DATASETS = list(METAEVAL_RATING) if METAEVAL["preference"]["enabled"] else []


rule metaeval_preference:
    """A judge picks the better of two candidates of a case; its accuracy beside the metrics'."""
    input:
        pairs=rules.metaeval_prepare.output.pairs,
        ratings=rules.metaeval_prepare.output.ratings,
        scores=rules.metaeval_score.output.per_report,
        code=stage_code("metaeval_preference"),
    output:
        table=report(
            results("metaeval", "{dataset}", "preference", "preference.md"),
            caption="../report/metaeval_preference.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        csv=results("metaeval", "{dataset}", "preference", "preference.csv"),
    log:
        logs("metaeval", "{dataset}_preference.log"),
    benchmark:
        benchmarks_dir("metaeval_preference", "{dataset}_preference.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(PREFERENCE_DATASETS),
    conda:
        "../../envs/llm.yaml"
    resources:
        llm_api=llm_api(),
    params:
        cfg=as_json({**METAEVAL["preference"], "llm": judge_llm()}),
        out_dir=lambda wc: results("metaeval", wc.dataset, "preference"),
    shell:
        "python -m srrg metaeval-preference --pairs {input.pairs:q} --ratings {input.ratings:q}"
        " --scores {input.scores:q} --out {params.out_dir:q} --config {params.cfg:q} > {log:q} 2>&1"


add_targets(
    *expand(rules.metaeval_preference.output.table, dataset=PREFERENCE_DATASETS)
)


if JUDGE_RUN is not None and METAEVAL["proxy"] and "proxy_rating" in JUDGE["metrics"]:
    # S-RRG Table 3's columns (metaeval.proxy_metrics) that a metric of the judge stage writes
    PROXY_METRICS = [
        c
        for c in METAEVAL["proxy_metrics"]
        if any(c == m or c.startswith(f"{m}_") for m in JUDGE_METRICS)
    ]

    rule metaeval_proxy:
        """S-RRG Table 3: metrics vs the LLM-proxy rating on the judge subset."""
        input:
            scores=rules.judge.output.per_report,
            code=stage_code("metaeval_proxy"),
        output:
            gema=results("metaeval", "proxy", JUDGE_RUN, "table_gema.md"),
            srrg=report(
                results("metaeval", "proxy", JUDGE_RUN, "table_srrg.md"),
                caption="../report/table3.rst",
                category="Result tables",
            ),
        log:
            logs("metaeval", f"proxy_{JUDGE_RUN}.log"),
        benchmark:
            benchmarks_dir("metaeval_proxy", f"proxy_{JUDGE_RUN}.tsv")
        conda:
            "../../envs/score.yaml"
        params:
            cfg=as_json(
                {
                    **METAEVAL["correlate"],
                    "human_column": "proxy_rating",
                    "metrics": PROXY_METRICS,
                    "caveat": METAEVAL["caveat"],
                }
            ),
            out_dir=lambda w, output: Path(output.gema).parent,
        shell:
            "python -m srrg metaeval-proxy --scores {input.scores:q} --out {params.out_dir:q}"
            " --config {params.cfg:q} > {log:q} 2>&1"

    add_targets(rules.metaeval_proxy.output.srrg)
