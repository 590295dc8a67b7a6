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


rule score_structure:
    """Table 2's structured columns for a run of a method with both targets: its outputs read into
    structured reports (a Structured-First output parsed, a Sentence-Direct one by the extractor
    with the extract section's options) and scored against the structured references (the pairs
    of the method's Structured-First run) at the S-Score's settings (s_score_text with
    SScoreTextConfig.s_rrg(); docs/model.md, "Table 2")."""
    input:
        refs=lambda wc: results("runs", TABLE2_REFS[wc.run], "pairs.parquet"),
        pairs=results("runs", "{run}", "pairs.parquet"),
        code=stage_code("score"),
    output:
        summary=structure_summary("{run}"),
        per_report=results("runs", "{run}", "score", "structure", "per_report.parquet"),
        signatures=results("runs", "{run}", "score", "structure", "signatures.csv"),
    log:
        logs("score_structure", "{run}.log"),
    benchmark:
        benchmarks_dir("score_structure", "{run}.tsv")
    wildcard_constraints:
        run=wildcard_choice(TABLE2_REFS),
    conda:
        "../../envs/score.yaml"
    params:
        options=as_json(structure_score_options(config["extract"])),
        section=config["score"]["section"],
        id_col=SCORE_ID,
        out_dir=lambda wc, output: Path(output.summary).parent,
    shell:
        "python -m srrg score-structure --refs {input.refs:q} --ref-col reference --hyps {input.pairs:q} --hyp-col raw --id-col {params.id_col}"
        " --metrics s_score_text --out {params.out_dir:q} --config {params.options:q} --section {params.section}"
        " > {log:q} 2>&1"
