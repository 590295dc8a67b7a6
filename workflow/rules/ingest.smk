rule ingest:
    """A report collection (IU X-ray or MIMIC-CXR) -> one row per study."""
    input:
        code=srrg_code(
            "ingest",
            "sources",
            "extract/sections",
            "vocab/__init__",
            "vocab/sections.yaml",
            "report",
            "config",
            "io",
        ),
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
