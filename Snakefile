# srrg: structured radiology report generation and evaluation as one workflow.
#
#   snakemake --profile profiles/local            # workstation
#   snakemake --profile profiles/slurm            # SLURM cluster
#
# The configuration (config.yaml) is validated against workflow/schemas/config.schema.yaml
# before any job starts. Every stage lives in workflow/rules/<stage>.smk; common.smk (included
# first) defines the helpers they share and the list of final targets each stage adds to.

from pathlib import Path


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


# Stage files in DAG order (a stage may refer to the rules of earlier ones), then any others.
STAGE_ORDER = [
    "ingest",
    "extract",
    "normalize",
    "dataset",
    "stats",
    "train",
    "infer",
    "score",
    "tables",
    "judge",
    "metaeval",
]
_rule_files = {
    p.stem: p for p in Path(workflow.basedir, "workflow", "rules").glob("*.smk")
}
for _stage in [s for s in STAGE_ORDER if s in _rule_files] + sorted(
    set(_rule_files) - set(STAGE_ORDER) - {"common"}
):

    include: str(_rule_files[_stage].relative_to(workflow.basedir))


rule all:
    default_target: True
    input:
        ALL_TARGETS,
