# LLM judges (GREEN, VERT, GEMA-Score, proxy rating) on a small subset of one run's predictions,
# scored together with cheap metrics so that metaeval.smk can correlate them with the proxy rating.
# All LLM calls go through srrg.llm with its persistent cache: a rerun with a warm cache sends
# no request. The embedded default uses the local SmolLM2-135M model, which runs anywhere but is
# NOT a meaningful judge of radiology reports (see docs/judges.md).

if JUDGE_RUN is not None:
    # S-Score needs structured reports on both sides: only a Structured-First run has them
    JUDGE_METRICS = JUDGE["metrics"] + [
        m
        for m in JUDGE["extra_metrics"]
        if RUNS[JUDGE_RUN].target in STRUCTURED_TARGETS or m not in STRUCTURED_METRICS
    ]

    rule judge_subset:
        """The first `judge.limit` predictions (by study id) of the judged run."""
        input:
            pairs=results("runs", JUDGE_RUN, "pairs.parquet"),
            code=stage_code("judge_subset"),
        output:
            refs=results("judge", JUDGE_RUN, "subset", "refs.parquet"),
            hyps=results("judge", JUDGE_RUN, "subset", "hyps.parquet"),
        log:
            logs("judge", f"{JUDGE_RUN}_subset.log"),
        benchmark:
            benchmarks_dir("judge_subset", f"{JUDGE_RUN}_subset.tsv")
        conda:
            "../../envs/score.yaml"
        params:
            limit=JUDGE["limit"],
            out_dir=lambda w, output: Path(output.refs).parent,
        shell:
            "python -m srrg judge-subset --predictions {input.pairs:q} --limit {params.limit}"
            " --ref-col reference --hyp-col report --out-dir {params.out_dir:q} > {log:q} 2>&1"

    rule judge:
        """Judges and cheap metrics on the subset: per_report.parquet keeps every judge's counts,
        statuses and explanations."""
        input:
            refs=rules.judge_subset.output.refs,
            hyps=rules.judge_subset.output.hyps,
            code=stage_code("judge"),
        output:
            per_report=results("judge", JUDGE_RUN, "per_report.parquet"),
            summary=report(
                results("judge", JUDGE_RUN, "summary.csv"),
                caption="../report/judge.rst",
                category="LLM judges",
            ),
        log:
            logs("judge", f"{JUDGE_RUN}.log"),
        benchmark:
            benchmarks_dir("judge", f"{JUDGE_RUN}.tsv")
        conda:
            "../../envs/llm.yaml"
        threads: 1
        params:
            metrics=",".join(JUDGE_METRICS),
            options=judge_options(),
            out_dir=lambda w, output: Path(output.summary).parent,
        shell:
            "python -m srrg judge --refs {input.refs:q} --hyps {input.hyps:q} --metrics {params.metrics}"
            " --out {params.out_dir:q} --config {params.options:q} > {log:q} 2>&1"

    add_targets(rules.judge.output.summary)
