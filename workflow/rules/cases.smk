# One static HTML page per run to look at single studies (docs/cases.md): thumbnail, reference and
# prediction, findings aligned by S-Score's matching, per-report scores and statuses, the judges'
# explanations for the judged run, and every other run as a comparison column.


rule cases:
    """The cases page of one run (a self-contained HTML file, also in `snakemake --report`)."""
    input:
        predictions=rules.infer_merge.output.predictions,
        scores=rules.score.output.per_report,
        others=lambda wc: cases_other_runs(wc.run),
        judge=lambda wc: cases_judge(wc.run),
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("cases"),
    output:
        page=report(
            results("cases", "{run}.html"),
            caption="../report/cases.rst",
            category="Cases",
            labels={"run": "{run}"},
        ),
    log:
        logs("cases", "{run}.log"),
    benchmark:
        benchmarks_dir("cases", "{run}.tsv")
    wildcard_constraints:
        run=RUN_NAMES,
    conda:
        "../../envs/score.yaml"
    threads: 1  # phantom thumbnails are drawn in this many processes (a profile's set-threads raises it)
    params:
        dataset=lambda w, input: Path(input.manifest).parent,
        split=lambda wc: {**config["infer"], **RUNS[wc.run].infer}["split"],
        judge=lambda w, input: (
            f"--judge {shlex.quote(input.judge[0])}" if input.judge else ""
        ),
        compare=lambda wc: cases_compare(wc.run),
        image_root=lambda wc: cases_image_root(wc.run),
        cache=str(Path(config["cache_dir"], "cases", "thumbnails")),
    shell:
        "python -m srrg cases --predictions {input.predictions:q} --scores {input.scores:q}"
        " --dataset {params.dataset:q} --split {params.split} --name {wildcards.run} {params.judge}"
        " {params.compare} {params.image_root} --processes {threads}"
        " --cache-dir {params.cache:q} --out {output.page:q} > {log:q} 2>&1"


# a page's rows are studies: runs predicted per image (infer.samples: image) get none (docs/model.md)
add_targets(*(results("cases", f"{r}.html") for r in RUNS if SCORE_ID == "study_id"))
