# Table 1's reference rows as runs (docs/model.md, "Tables"): written here, scored by rule score
# like the model runs (results/runs/<name>/), laid out by rule tables.
from srrg.reference_runs import LABELS as REFERENCE_LABELS

_clash = sorted(set(REFERENCE_LABELS) & set(RUNS))
if _clash:
    raise WorkflowError(
        f"train.runs {_clash}: these names are the reference runs of Table 1; rename the run"
    )
JSON_RUNS = [name for name, spec in RUNS.items() if spec.target == "json"]
# no Structured-First run: no studies to write reference runs on, and no Table 1 rows to end
REFERENCE_RUNS = list(REFERENCE_LABELS) if JSON_RUNS else []


rule reference_runs:
    """Constant (the most frequent training report) and Ceiling (the phantom round trip of each
    reference) on the test studies of the Structured-First run with the most scored studies, as
    predictions.parquet and pairs.parquet in the layout of infer."""
    input:
        pairs=[results("runs", r, "pairs.parquet") for r in JSON_RUNS],
        manifest=rules.dataset_manifest.output.manifest,
        shards=dataset_shards,
        code=stage_code("reference_runs"),
    output:
        predictions=[
            results("runs", r, "predictions.parquet") for r in REFERENCE_LABELS
        ],
        pairs=[results("runs", r, "pairs.parquet") for r in REFERENCE_LABELS],
    log:
        logs("reference_runs.log"),
    benchmark:
        benchmarks_dir("reference_runs", "reference_runs.tsv")
    conda:
        "../../envs/score.yaml"
    params:
        pairs=lambda w, input: " ".join(
            f"--pairs {shlex.quote(p)}" for p in input.pairs
        ),
        dataset=lambda w, input: Path(input.manifest).parent,
        out_dir=lambda w, output: Path(output.pairs[0]).parent.parent,
    shell:
        "python -m srrg reference-runs {params.pairs} --dataset {params.dataset:q} --out-dir {params.out_dir:q}"
        " > {log:q} 2>&1"
