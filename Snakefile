# srrg: structured radiology report generation and evaluation as one workflow (docs/workflow.md).
#
#   snakemake --profile profiles/local            # workstation
#   snakemake --profile profiles/slurm            # SLURM cluster
#
# The configuration (config.yaml, --config, --configfile) is checked before any job starts
# (srrg.config_tree.check_workflow_config: duplicate keys, the packaged schema, typed sections). Each
# rule runs `python -m srrg <rule>` (the stage module srrg/stages/<rule>.py); common.smk derives
# every shared setting from the config, and the stage files follow in stage order.


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/extract.smk"
include: "workflow/rules/normalize.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/image_cache.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/rl.smk"
include: "workflow/rules/infer.smk"
include: "workflow/rules/reference_runs.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/judge.smk"
include: "workflow/rules/cases.smk"
include: "workflow/rules/metaeval.smk"
include: "workflow/rules/paper_tables.smk"
include: "workflow/rules/judge_train.smk"


rule all:
    default_target: True
    input:
        ALL_TARGETS,
