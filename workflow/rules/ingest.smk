rule ingest:
    """A report collection (IU X-ray, MIMIC-CXR or SRRG) -> one row per study."""
    input:
        code=stage_code("ingest"),
        data=ingest_data(),
    output:
        studies=results("ingest", "studies.parquet"),
    log:
        logs("ingest.log"),
    benchmark:
        benchmarks_dir("ingest", "ingest.tsv")
    conda:
        "../../envs/data.yaml"
    # worker processes: ingest.n_process asks, Snakemake grants at most --cores; the CLI gets what was granted
    threads: config["ingest"]["n_process"]
    params:
        cfg=as_json(ingest_slice()),
    shell:
        "python -m srrg ingest --config {params.cfg:q} --n-process {threads} --out {output.studies:q} > {log:q} 2>&1"
