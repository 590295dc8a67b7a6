rule infer:
    """Beam-search predictions of one run on the test split (plus the pairs file that is scored)."""
    input:
        model=rules.train.output.model,
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("infer"),
    output:
        predictions=results("runs", "{run}", "predictions.parquet"),
        pairs=results("runs", "{run}", "pairs.parquet"),
    log:
        logs("infer", "{run}.log"),
    wildcard_constraints:
        run=RUN_NAMES,
    conda:
        "../../envs/train.yaml"
    params:
        cfg=lambda wc: as_json(run_config(wc.run, "infer")),
        dataset=lambda w, input: Path(input.manifest).parent,
    shell:
        "python -m srrg infer --model {input.model:q} --dataset {params.dataset:q} --out {output.predictions:q}"
        " --pairs {output.pairs:q} --config {params.cfg:q} > {log:q} 2>&1"
