rule normalize:
    """Raw location phrases -> standardized phrases (rules, or an LLM through srrg.llm)."""
    input:
        extracted=rules.extract.output.extracted,
        code=stage_code("normalize"),
    output:
        normalized=results("normalize", "normalized.parquet"),
        phrases=results("normalize", "phrases.parquet"),
    log:
        logs("normalize.log"),
    benchmark:
        benchmarks_dir("normalize", "normalize.tsv")
    conda:
        "../../envs/llm.yaml"
    resources:
        llm_api=llm_api(config["normalize"]["method"] == "llm"),
    params:
        cfg=as_json(normalize_slice()),
    shell:
        "python -m srrg normalize --in {input.extracted:q} --out {output.normalized:q}"
        " --phrases {output.phrases:q} --config {params.cfg:q} > {log:q} 2>&1"
