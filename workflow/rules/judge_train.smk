# Fine-tuned LLM judges (VERT LoRA recipe; docs/judge_train.md): for each rating
# dataset named in judge_train.datasets (entries of metaeval.datasets), split the rated pairs by
# case, LoRA/QLoRA-tune a base model on the train split, score the held-out split with the tuned
# judge through the unchanged `vert` (or `green`) metric, and correlate it with the human ratings
# next to the zero-shot metrics of metaeval.smk on the same held-out pairs.
# Off by default (judge_train.datasets = []): training needs a GPU for any useful model.

from srrg.config import from_dict
from srrg.settings.judge_train import JudgeTrainConfig

JT_CFG = from_dict(
    JudgeTrainConfig, JUDGE_TRAIN["train"], "judge_train.train"
).to_dict()  # validated with the whole config (common.smk), typed here


rule judge_train_prepare:
    """Rated pairs -> examples split by case (no case in two splits) + the held-out split files."""
    input:
        data=lambda wc: METAEVAL_DATASETS[wc.dataset]["path"],
        analyses=lambda wc: JUDGE_TRAIN["analyses"].get(wc.dataset, []),
        code=stage_code("judge_train_prepare"),
    output:
        examples=jt("{dataset}", "prepared", "examples.parquet"),
        refs=jt("{dataset}", "prepared", "heldout", "refs.parquet"),
        hyps=jt("{dataset}", "prepared", "heldout", "hyps.parquet"),
        ratings=jt("{dataset}", "prepared", "heldout", "ratings.parquet"),
        summary=jt("{dataset}", "prepared", "prepare.json"),
    log:
        logs("judge_train", "{dataset}_prepare.log"),
    benchmark:
        benchmarks_dir("judge_train_prepare", "{dataset}_prepare.tsv")
    wildcard_constraints:
        dataset=JT_NAMES,
    conda:
        "../../envs/score.yaml"
    params:
        adapter=lambda wc: METAEVAL_DATASETS[wc.dataset]["adapter"],
        options=lambda wc: as_json(METAEVAL_DATASETS[wc.dataset].get("options", {})),
        analyses=lambda wc, input: (
            f"--analyses {shlex.quote(input.analyses)}" if input.analyses else ""
        ),
        cfg=as_json(JT_CFG),
        out_dir=lambda wc: jt(wc.dataset, "prepared"),
    shell:
        "python -m srrg judge-train-prepare --adapter {params.adapter} --data {input.data:q}"
        " --options {params.options:q} {params.analyses} --out-dir {params.out_dir:q}"
        " --config {params.cfg:q} > {log:q} 2>&1"


rule judge_train_fit:
    """LoRA (QLoRA 4-bit NF4 on a CUDA GPU with bitsandbytes) on the train split; checkpoints in
    cache_dir (outside the outputs), so a killed job resumes; writes the adapter and merged model
    and the test split's Kendall tau after each of judge_train.train.eval_epochs.
    """
    input:
        examples=rules.judge_train_prepare.output.examples,
        code=stage_code("judge_train_fit"),
    output:
        adapter=directory(jt("{dataset}", "model", "adapter")),
        merged=directory(jt("{dataset}", "model", "merged")),
        summary=jt("{dataset}", "model", "fit.json"),
        encoded=jt("{dataset}", "model", "encoded.parquet"),
        history=jt("{dataset}", "model", "train_log.jsonl"),
        epoch_tau=jt("{dataset}", "model", "epoch_tau.csv"),
        epoch_tau_md=jt("{dataset}", "model", "epoch_tau.md"),
        epoch_tau_png=jt("{dataset}", "model", "epoch_tau.png"),
    log:
        logs("judge_train", "{dataset}_fit.log"),
    benchmark:
        benchmarks_dir("judge_train_fit", "{dataset}_fit.tsv")
    wildcard_constraints:
        dataset=JT_NAMES,
    conda:
        "../../envs/train.yaml"
    threads: 4
    params:
        cfg=as_json({**JT_CFG, "merge": True}),
        prepared=lambda wc: jt(wc.dataset, "prepared"),
        out_dir=lambda wc: jt(wc.dataset, "model"),
        work_dir=lambda wc: str(Path(config["cache_dir"], "judge_train", wc.dataset)),
        llm_cache=lambda wc: jt_llm_cache(wc.dataset),
    shell:
        "rm -rf {params.llm_cache:q} && python -m srrg judge-train-fit --prepared {params.prepared:q}"
        " --out-dir {params.out_dir:q} --work-dir {params.work_dir:q} --config {params.cfg:q} > {log:q} 2>&1"


rule judge_train_score:
    """The tuned judge on the held-out pairs through the unchanged judge metrics (local backend)."""
    input:
        refs=rules.judge_train_prepare.output.refs,
        hyps=rules.judge_train_prepare.output.hyps,
        model=rules.judge_train_fit.output.merged,
        code=stage_code("judge_train_score"),
    output:
        per_report=jt("{dataset}", "scores", "per_report.parquet"),
    log:
        logs("judge_train", "{dataset}_score.log"),
    benchmark:
        benchmarks_dir("judge_train_score", "{dataset}_score.tsv")
    wildcard_constraints:
        dataset=JT_NAMES,
    conda:
        "../../envs/llm.yaml"
    params:
        metrics=",".join(JUDGE_TRAIN["metrics"]),
        options=jt_score_options,
        out_dir=lambda wc: jt(wc.dataset, "scores"),
    shell:
        "python -m srrg judge-train-score --refs {input.refs:q} --hyps {input.hyps:q} --metrics {params.metrics}"
        " --out {params.out_dir:q} --config {params.options:q} > {log:q} 2>&1"


rule judge_train_compare:
    """Correlation tables (GEMA / S-RRG layouts) of the tuned judge next to the zero-shot metrics
    of metaeval_score, on the held-out pairs only."""
    input:
        finetuned=rules.judge_train_score.output.per_report,
        zero_shot=results("metaeval", "{dataset}", "scores", "per_report.parquet"),
        ratings=rules.judge_train_prepare.output.ratings,
        code=stage_code("judge_train_compare"),
    output:
        gema=jt("{dataset}", "tables", "table_gema.md"),
        srrg=jt("{dataset}", "tables", "table_srrg.md"),
        correlations=jt("{dataset}", "tables", "correlations.csv"),
        per_report=jt("{dataset}", "tables", "per_report.parquet"),
    log:
        logs("judge_train", "{dataset}_compare.log"),
    benchmark:
        benchmarks_dir("judge_train_compare", "{dataset}_compare.tsv")
    wildcard_constraints:
        dataset=JT_NAMES,
    conda:
        "../../envs/score.yaml"
    params:
        cfg=as_json(METAEVAL["correlate"]),
        suffix=JUDGE_TRAIN["suffix"],
        out_dir=lambda wc: jt(wc.dataset, "tables"),
    shell:
        "python -m srrg judge-train-compare --finetuned {input.finetuned:q} --zero-shot {input.zero_shot:q}"
        " --ratings {input.ratings:q} --suffix {params.suffix:q} --out {params.out_dir:q}"
        " --config {params.cfg:q} > {log:q} 2>&1"


add_targets(*expand(rules.judge_train_compare.output.gema, dataset=JT_DATASETS))
