rule extract:
    """Free-text sections -> MIMIC-STRUC structured reports with provenance spans."""
    input:
        studies=rules.ingest.output.studies,
        code=stage_code("extract"),
    output:
        extracted=results("extract", "extracted.parquet"),
    log:
        logs("extract.log"),
    conda:
        "../../envs/extract.yaml"
    threads: config["extract"]["n_process"]
    params:
        cfg=section("extract"),
    shell:
        "python -m srrg extract --in {input.studies:q} --out {output.extracted:q} --config {params.cfg:q} > {log:q} 2>&1"
