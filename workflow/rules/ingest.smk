rule ingest:
    """A report collection (IU X-ray or MIMIC-CXR) -> one row per study."""
    input:
        code=stage_code("ingest"),
        data=ingest_data(),
    output:
        studies=results("ingest", "studies.parquet"),
    log:
        logs("ingest.log"),
    conda:
        "../../envs/data.yaml"
    params:
        cfg=as_json(ingest_slice()),
    shell:
        "python -m srrg ingest --config {params.cfg:q} --out {output.studies:q} > {log:q} 2>&1"
