rule infer:
    """One shard of a run's beam-search predictions on the test split (its share of the batches;
    one SLURM job each)."""
    input:
        model=rules.train.output.model,
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        images=run_image_cache,
        code=stage_code("infer"),
    output:
        part=results("runs", "{run}", "infer", "part-{shard}.parquet"),
    log:
        logs("infer", "{run}-{shard}.log"),
    benchmark:
        benchmarks_dir("infer", "{run}-{shard}.tsv")
    wildcard_constraints:
        run=RUN_NAMES,
        shard=r"\d+",
    priority: 10  # on the longest path, as rule train
    conda:
        "../../envs/train.yaml"
    params:
        cfg=lambda wc: as_json(run_config(wc.run, "infer")),
        dataset=lambda w, input: Path(input.manifest).parent,
    shell:
        "python -m srrg infer --model {input.model:q} --dataset {params.dataset:q} --out {output.part:q}"
        " --shard {wildcards.shard} --config {params.cfg:q} > {log:q} 2>&1"


rule infer_merge:
    """A run's predictions (and the pairs file that is scored) from its shards: the file one
    worker writes."""
    input:
        parts=infer_parts,
        code=stage_code("infer_merge"),
    output:
        predictions=results("runs", "{run}", "predictions.parquet"),
        pairs=results("runs", "{run}", "pairs.parquet"),
    log:
        logs("infer", "{run}-merge.log"),
    benchmark:
        benchmarks_dir("infer_merge", "{run}-merge.tsv")
    wildcard_constraints:
        run=RUN_NAMES,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m srrg infer-merge --parts {input.parts:q} --out {output.predictions:q}"
        " --pairs {output.pairs:q} > {log:q} 2>&1"
