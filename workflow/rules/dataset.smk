checkpoint dataset_plan:
    """Rows and shard files per split; the shard jobs are named from this plan."""
    input:
        normalized=rules.normalize.output.normalized,
        code=stage_code("dataset_plan"),
    output:
        plan=results("dataset", "plan.json"),
    log:
        logs("dataset", "plan.log"),
    benchmark:
        benchmarks_dir("dataset_plan", "plan.tsv")
    conda:
        "../../envs/data.yaml"
    params:
        cfg=section("dataset"),
        out_dir=lambda w, output: Path(output.plan).parent,
    shell:
        "python -m srrg dataset-plan --in {input.normalized:q} --out-dir {params.out_dir:q}"
        " --config {params.cfg:q} > {log:q} 2>&1"


rule dataset_shard:
    """One Parquet shard: a pure function of (input, split, index, config), and the SHA-256 of
    the bytes it wrote, which the manifest verifies."""
    input:
        normalized=rules.normalize.output.normalized,
        plan=rules.dataset_plan.output.plan,
        code=stage_code("dataset_shard"),
    output:
        shard=results("dataset", "{split}", "part-{index}.parquet"),
        checksum=results("dataset", "{split}", "part-{index}.parquet.sha256"),
    log:
        logs("dataset", "{split}-{index}.log"),
    benchmark:
        benchmarks_dir("dataset_shard", "{split}-{index}.tsv")
    wildcard_constraints:
        split="|".join(SPLITS),
        index=r"\d{5}",
    conda:
        "../../envs/data.yaml"
    params:
        cfg=section("dataset"),
        out_dir=lambda w, output: Path(output.shard).parent.parent,
    shell:
        "python -m srrg dataset-shard --in {input.normalized:q} --out-dir {params.out_dir:q}"
        " --config {params.cfg:q} {wildcards.split} {wildcards.index} > {log:q} 2>&1"


rule dataset_manifest:
    """manifest.json: counts, statuses, schema and config hash read back from the shards, each
    checked against the checksum its shard job wrote (a changed shard stops the run)."""
    input:
        normalized=rules.normalize.output.normalized,
        plan=rules.dataset_plan.output.plan,
        shards=dataset_shards,
        checksums=dataset_checksums,
        code=stage_code("dataset_manifest"),
    output:
        manifest=results("dataset", "manifest.json"),
    log:
        logs("dataset", "manifest.log"),
    benchmark:
        benchmarks_dir("dataset_manifest", "manifest.tsv")
    conda:
        "../../envs/data.yaml"
    params:
        cfg=section("dataset"),
        upstream=as_json(
            {
                "ingest": ingest_slice(),
                "extract": config["extract"],
                "normalize": normalize_slice(),
            }
        ),
        out_dir=lambda w, output: Path(output.manifest).parent,
    shell:
        "python -m srrg dataset-manifest --in {input.normalized:q} --out-dir {params.out_dir:q}"
        " --config {params.cfg:q} --upstream-config {params.upstream:q} > {log:q} 2>&1"


rule stats:
    """The S-RRG Fig. 5 distributions (findings, probability, severity) as CSV + PNG."""
    input:
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("stats"),
    output:
        findings_png=report(
            results("stats", "findings.png"),
            caption="../report/findings.rst",
            category="Dataset statistics",
        ),
        probability_png=report(
            results("stats", "probability.png"),
            caption="../report/probability.rst",
            category="Dataset statistics",
        ),
        severity_png=report(
            results("stats", "severity.png"),
            caption="../report/severity.rst",
            category="Dataset statistics",
        ),
        findings_csv=report(
            results("stats", "findings.csv"),
            caption="../report/findings.rst",
            category="Dataset statistics",
        ),
        probability_csv=report(
            results("stats", "probability.csv"),
            caption="../report/probability.rst",
            category="Dataset statistics",
        ),
        severity_csv=report(
            results("stats", "severity.csv"),
            caption="../report/severity.rst",
            category="Dataset statistics",
        ),
    log:
        logs("stats.log"),
    benchmark:
        benchmarks_dir("stats", "stats.tsv")
    conda:
        "../../envs/data.yaml"
    params:
        cfg=section("stats"),
        dataset=lambda w, input: Path(input.manifest).parent,
        out_dir=lambda w, output: Path(output.findings_png).parent,
    shell:
        "python -m srrg stats --dataset {params.dataset:q} --out-dir {params.out_dir:q}"
        " --config {params.cfg:q} > {log:q} 2>&1"


rule eval_extraction:
    """The extractor's per-label P/R/F1 against the NIH gold of Open-i reports (stats.extraction_gold),
    with the workflow's extract settings, for the dataset statistics of the report."""
    input:
        gold=lambda w: config["stats"]["extraction_gold"],
        code=stage_code("eval_extraction"),
    output:
        table=report(
            results("stats", "extraction_accuracy.csv"),
            caption="../report/extraction_accuracy.rst",
            category="Dataset statistics",
        ),
    log:
        logs("eval_extraction.log"),
    benchmark:
        benchmarks_dir("eval_extraction", "eval_extraction.tsv")
    conda:
        "../../envs/data.yaml"
    params:
        cfg=section("extract"),
        half=config["stats"].get("extraction_half", "heldout"),
    shell:
        "python -m srrg eval-extraction --gold openi14 --gold-file {input.gold:q} --half {params.half}"
        " --examples 0 --table {output.table:q} --config {params.cfg:q} > {log:q} 2>&1"


# The shards are targets themselves: Snakemake does not rebuild a missing intermediate file whose
# downstream outputs exist, so a deleted shard is regenerated only when it is requested.
add_targets(
    dataset_shards,
    dataset_checksums,
    rules.dataset_manifest.output.manifest,
    *rules.stats.output,
    *extraction_table(),
)


rule data:
    """Target for the data half alone (snakemake data): shards, manifest and statistics."""
    input:
        dataset_shards,
        dataset_checksums,
        rules.dataset_manifest.output.manifest,
        rules.stats.output,
        extraction_table(),
