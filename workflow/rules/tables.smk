rule tables:
    """S-RRG Table 1 (methods, then the reference runs) and Table 2 (Structured-First vs
    Sentence-Direct) with parse rates, laid out from the runs' score summaries."""
    input:
        summaries=[
            results("runs", r, "score", "summary.csv")
            for r in [*RUNS, *REFERENCE_RUNS]
        ],
        signatures=[
            results("runs", r, "score", "signatures.csv")
            for r in [*RUNS, *REFERENCE_RUNS]
        ],
        predictions=[
            results("runs", r, "predictions.parquet") for r in [*RUNS, *REFERENCE_RUNS]
        ],
        rl=[results("runs", r, "model.pt.json") for r in RL_RUNS],
        structure=[structure_summary(r) for r in TABLE2_REFS],
        structure_signatures=[
            results("runs", r, "score", "structure", "signatures.csv")
            for r in TABLE2_REFS
        ],
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
    benchmark:
        benchmarks_dir("tables", "tables.tsv")
    conda:
        "../../envs/score.yaml"
    params:
        # an RL run's entry also names its model summary (the reward, for the caption)
        runs=as_json(
            [
                (
                    {**e, "rl_summary": results("runs", e["name"], "model.pt.json")}
                    if e["name"] in RL_RUNS
                    else e
                )
                for e in table_runs()
            ]
        ),
        # the reference runs' entries, as table_runs() gives the runs'
        references=as_json(
            [
                {
                    "name": r,
                    "label": REFERENCE_LABELS[r],
                    "target": "json",
                    "summary": results("runs", r, "score", "summary.csv"),
                    "predictions": results("runs", r, "predictions.parquet"),
                }
                for r in REFERENCE_RUNS
            ]
        ),
        out_dir=lambda w, output: Path(output[0]).parent,
    shell:
        "python -m srrg tables --runs {params.runs:q} --references {params.references:q} --out-dir {params.out_dir:q}"
        " > {log:q} 2>&1"


add_targets(*rules.tables.output)
