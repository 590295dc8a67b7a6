"""Reinforcement fine-tuning runs (docs/model.md, "Reinforcement fine-tuning"): a run of
train.runs with `rl: {from: <run>, ...}` is made by `srrg rl` from that run's model file instead of
by `srrg train`; infer, score and tables then treat it like any run."""

from srrg.settings.rl import rl_base, workflow_rl_settings

RL_RUNS = {name: rl_base(spec.rl) for name, spec in RUNS.items() if spec.rl is not None}


# each RL run's settings as its job gets them
RL_SETTINGS = {name: workflow_rl_settings(config, RUNS[name].rl) for name in RL_RUNS}


# an RL run's model file comes from this rule, never from `srrg train`
ruleorder: rl > train


rule rl:
    """Fine-tune one run's model with a metric reward (group-relative or self-critical policy
    gradient, KL towards the starting model). Checkpoints live outside the outputs; a job ended by
    SIGTERM saves its step and exits 143, and the rerun resumes there (like rule train).
    """
    input:
        base=lambda wc: results("runs", RL_RUNS[wc.run], "model.pt"),
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("rl"),
    output:
        model=results("runs", "{run}", "model.pt"),
        summary=results("runs", "{run}", "model.pt.json"),
        metrics=results("runs", "{run}", "metrics.csv"),
        reward=report(
            results("runs", "{run}", "reward.png"),
            caption="../report/reward.rst",
            category="Training",
            subcategory="{run}",
        ),
    log:
        logs("rl", "{run}.log"),
    benchmark:
        benchmarks_dir("rl", "{run}.tsv")
    wildcard_constraints:
        run=wildcard_choice(RL_RUNS),
    # after the train jobs, before inference and the judges: the RL run's chain (rl -> infer ->
    # score -> the reference rows, which wait for every run's pairs) is the demo's second longest path
    priority: 15
    conda:
        "../../envs/train.yaml"
    threads: 1
    params:
        cfg=lambda wc: as_json(RL_SETTINGS[wc.run]),
        dataset=lambda w, input: Path(input.manifest).parent,
    shell:
        "python -m srrg rl --dataset {params.dataset:q} --model {input.base:q} --out {output.model:q}"
        " --run {wildcards.run} --config {params.cfg:q} > {log:q} 2>&1"


add_targets(*(results("runs", r, "reward.png") for r in RL_RUNS))
