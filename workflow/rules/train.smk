rule train:
    """Fit one run (model x target). Checkpoints live outside the outputs and a rerun resumes from
    the last one; a job ended by SIGTERM (scancel, preemption) saves it at the step it stopped at
    and exits 143, so Snakemake's retry resumes there (docs/model.md). On SLURM the profile sets `mpi: srun` for this rule, so each of the
    tasks_per_node (= devices) ranks is started by srun and Lightning reads SLURMEnvironment.
    """
    input:
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        images=run_image_cache,
        encoder_init=encoder_init,
        code=stage_code("train"),
    output:
        model=results("runs", "{run}", "model.pt"),
        summary=results("runs", "{run}", "model.pt.json"),
        metrics=results("runs", "{run}", "metrics.csv"),
        loss=report(
            results("runs", "{run}", "loss.png"),
            caption="../report/loss.rst",
            category="Training",
            subcategory="{run}",
        ),
    log:
        logs("train", "{run}.log"),
    benchmark:
        benchmarks_dir("train", "{run}.tsv")
    wildcard_constraints:
        run=RUN_NAMES,
    # training and inference are the demo's longest path (baseline -> SmolLM2 runs that start from
    # its encoder -> their predictions): on a few cores training goes first (before another run's
    # inference: each train job then starts as soon as its input exists), then rl, then inference
    priority: 20
    conda:
        "../../envs/train.yaml"
    # torch's CPU threads: Snakemake sets OMP_NUM_THREADS to a job's threads; the run's `threads`
    # (default 1: on a shared 2-core machine 2 threads made each step 4.7x slower under load 12 and
    # serialized the demo's train jobs). The demo's baseline, which the SmolLM2 runs start from,
    # trains alone and takes both cores: 0.45 s per step against 0.72 s with one
    # (benchmarks/train_step_time.py, quiet machine). The SLURM profile sets the train rule's
    # threads to its cpus_per_task (set-threads)
    threads: lambda wc: RUNS[wc.run].threads
    resources:
        mpi="",
        nodes=lambda wc: int(
            run_config(wc.run, "train").get("trainer", {}).get("num_nodes", 1)
        ),
        tasks_per_node=lambda wc: ddp_tasks_per_node(wc.run),
    params:
        cfg=lambda wc: as_json(run_config(wc.run, "train")),
        dataset=lambda w, input: Path(input.manifest).parent,
    shell:
        "{resources.mpi} env python -m srrg train --dataset {params.dataset:q} --out {output.model:q}"
        " --run {wildcards.run} --config {params.cfg:q} > {log:q} 2>&1"


rule phantoms:
    """A few phantom radiographs next to their reports, for snakemake --report."""
    input:
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("phantoms"),
    output:
        figure=report(
            results("figures", "phantoms.png"),
            caption="../report/phantoms.rst",
            category="Training",
        ),
    log:
        logs("phantoms.log"),
    benchmark:
        benchmarks_dir("phantoms", "phantoms.tsv")
    conda:
        "../../envs/train.yaml"
    params:
        dataset=lambda w, input: Path(input.manifest).parent,
    shell:
        "python -m srrg phantoms --dataset {params.dataset:q} --out {output.figure:q} > {log:q} 2>&1"


add_targets(results("figures", "phantoms.png"))
