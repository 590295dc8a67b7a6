# The image cache (docs/model.md, "Image cache"): for the runs that read real images, every image
# of each dataset shard decoded once into <dataset>/image_cache/<size>px/, one job per shard; train
# and infer of those runs read it (common.smk: run_image_cache). Phantom and placeholder runs (the
# embedded default) plan none.


rule image_cache:
    """One cache shard: the images of one dataset shard decoded once (JPEGs at reduced scale),
    with each image's status and the SHA-256 of the array and of the shard it was built from.
    """
    input:
        shard=results("dataset", "{split}", "part-{index}.parquet"),
        checksum=results("dataset", "{split}", "part-{index}.parquet.sha256"),
        code=stage_code("image_cache"),
    output:
        array=results(
            "dataset", "image_cache", "{size}px", "{split}", "part-{index}.npy"
        ),
        index=results(
            "dataset", "image_cache", "{size}px", "{split}", "part-{index}.json"
        ),
    log:
        logs("image_cache", "{size}px-{split}-{index}.log"),
    benchmark:
        benchmarks_dir("image_cache", "{size}px-{split}-{index}.tsv")
    wildcard_constraints:
        split="|".join(SPLITS),
        index=r"\d{5}",
        size=r"\d+",
    conda:
        "../../envs/data.yaml"
    params:
        dataset=lambda w, input: Path(input.shard).parent.parent,
        root=image_root_option,
    shell:
        "python -m srrg image-cache --dataset {params.dataset:q} --size {wildcards.size} {params.root}"
        " {wildcards.split} {wildcards.index} > {log:q} 2>&1"
