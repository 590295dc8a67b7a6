rule tables:
    """S-RRG Table 1 (methods) and Table 2 (Structured-First vs Sentence-Direct) with parse rates."""
    input:
        summaries=[results("runs", r, "score", "summary.csv") for r in RUNS],
        signatures=[results("runs", r, "score", "signatures.csv") for r in RUNS],
        predictions=[results("runs", r, "predictions.parquet") for r in RUNS],
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("tables"),
    output:
        table1_csv=report(
            results("tables", "table1.csv"),
            caption="../report/table1.rst",
            category="Result tables",
        ),
        table1_md=report(
            results("tables", "table1.md"),
            caption="../report/table1.rst",
            category="Result tables",
        ),
        table2_csv=report(
            results("tables", "table2.csv"),
            caption="../report/table2.rst",
            category="Result tables",
        ),
        table2_md=report(
            results("tables", "table2.md"),
            caption="../report/table2.rst",
            category="Result tables",
        ),
        table1_html=report(
            results("tables", "table1.html"),
            caption="../report/table1.rst",
            category="Result tables",
        ),
        table2_html=report(
            results("tables", "table2.html"),
            caption="../report/table2.rst",
            category="Result tables",
        ),
        latex=[results("tables", f"{t}.tex") for t in ("table1", "table2")],
    log:
        logs("tables.log"),
    conda:
        "../../envs/score.yaml"
    params:
        runs=as_json(table_runs()),
        out_dir=lambda w, output: Path(output[0]).parent,
        dataset=lambda w, input: Path(input.manifest).parent,
        metrics=",".join(config["score"]["metrics"]),
        options=as_json(config["score"]["options"]),
        section=config["score"]["section"],
    shell:
        "python -m srrg tables --runs {params.runs:q} --out-dir {params.out_dir:q} --dataset {params.dataset:q}"
        " --metrics {params.metrics} --config {params.options:q} --section {params.section} > {log:q} 2>&1"


add_targets(*rules.tables.output)
