rule score:
    """Every configured metric on one run's outputs as generated (`raw`): parse rates are those of
    the predictions' parse_status; NLG metrics read sentence renderings of what parses. score.section
    cuts references and hypotheses alike; signatures.csv says what produced each number. The
    reference runs (rule reference_runs) are scored here like the model runs.
    """
    input:
        pairs=results("runs", "{run}", "pairs.parquet"),
        code=stage_code("score"),
    output:
        summary=results("runs", "{run}", "score", "summary.csv"),
        per_report=results("runs", "{run}", "score", "per_report.parquet"),
        signatures=results("runs", "{run}", "score", "signatures.csv"),
    log:
        logs("score", "{run}.log"),
    benchmark:
        benchmarks_dir("score", "{run}.tsv")
    wildcard_constraints:
        run=wildcard_choice([*RUNS, *REFERENCE_RUNS]),
    conda:
        "../../envs/score.yaml"
    params:
        # reference runs are Structured-First: every configured metric
        metrics=lambda wc: (
            run_metrics(wc.run)
            if wc.run in RUNS
            else ",".join(config["score"]["metrics"])
        ),
        options=as_json(config["score"]["options"]),
        section=config["score"]["section"],
        id_col=SCORE_ID,
        out_dir=lambda wc: results("runs", wc.run, "score"),
    shell:
        "python -m srrg score --refs {input.pairs:q} --ref-col reference --hyps {input.pairs:q} --hyp-col raw --id-col {params.id_col}"
        " --metrics {params.metrics} --out {params.out_dir:q} --config {params.options:q} --section {params.section}"
        " > {log:q} 2>&1"
