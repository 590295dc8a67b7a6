rule extract:
    """Free-text sections -> MIMIC-STRUC structured reports with provenance spans."""
    input:
        studies=rules.ingest.output.studies,
        code=stage_code("extract"),
    output:
        extracted=results("extract", "extracted.parquet"),
    log:
        logs("extract.log"),
    benchmark:
        benchmarks_dir("extract", "extract.tsv")
    conda:
        "../../envs/extract.yaml"
    # worker processes: extract.n_process asks, Snakemake grants at most --cores; the CLI gets what was granted
    threads: config["extract"]["n_process"]
    params:
        cfg=section("extract"),
    shell:
        "python -m srrg extract --in {input.studies:q} --out {output.extracted:q} --config {params.cfg:q} --n-process {threads} > {log:q} 2>&1"
