# The papers' meta-evaluation tables from one run each (docs/judges.md, docs/metaeval.md): GEMA-Score
# Tables 1-2 (both human error targets side by side) for every rating set that counts errors, and
# VERT's grid (metaeval.grid.models x GREEN and the VERT prompt variants) on every rating set, and
# with metaeval.grid.gema GEMA's backbone grid (Tables 1-2 with a row per grid model) on every rating
# set that counts errors.
# Grid answers go through the judges' LLM cache: a model, prompt and pair already asked (by
# metaeval_score or an earlier grid) is not asked again.

from srrg.metaeval.gema_tables import ERROR_COUNT_ADAPTERS
from srrg.metaeval.grid import grid_cell_options, grid_rows, prompt_metric

GEMA12 = [n for n, d in METAEVAL_RATING.items() if d["adapter"] in ERROR_COUNT_ADAPTERS]
GRID = METAEVAL["grid"]
GRID_PROMPTS = ["green", *GRID["variants"]]
GRID_DATASETS = list(METAEVAL_RATING) if GRID["models"] else []
# VERT's grid rows: a model, or with metaeval.grid.thinking <model>.<level> for reasoning models
GRID_ROWS = list(grid_rows(config))
GEMA_GRID = [n for n in GEMA12 if n in GRID_DATASETS] if GRID["gema"] else []
GRID_CELL_PROMPTS = GRID_PROMPTS + (["gema"] if GEMA_GRID else [])


rule metaeval_gema:
    """GEMA Tables 1-2: correlation with significant and insignificant human error counts."""
    input:
        scores=rules.metaeval_score.output.per_report,
        ratings=rules.metaeval_prepare.output.ratings,
        pairs=rules.metaeval_prepare.output.pairs,
        code=stage_code("metaeval_gema"),
    output:
        table=report(
            results("metaeval", "{dataset}", "gema12", "table_gema12.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        csv=results("metaeval", "{dataset}", "gema12", "table_gema12.csv"),
    log:
        logs("metaeval", "{dataset}_gema12.log"),
    benchmark:
        benchmarks_dir("metaeval_gema", "{dataset}_gema12.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(GEMA12),
    conda:
        "../../envs/score.yaml"
    params:
        cfg=as_json(METAEVAL["correlate"]),
        out_dir=lambda wc: results("metaeval", wc.dataset, "gema12"),
    shell:
        "python -m srrg metaeval-gema --scores {input.scores:q} --ratings {input.ratings:q}"
        " --pairs {input.pairs:q} --out {params.out_dir:q} --config {params.cfg:q} > {log:q} 2>&1"


rule vert_grid_score:
    """One cell of VERT's grid: one judge model and one prompt on a rating set's pairs."""
    input:
        refs=rules.metaeval_prepare.output.refs,
        hyps=rules.metaeval_prepare.output.hyps,
        code=stage_code("vert_grid_score"),
    output:
        per_report=results(
            "metaeval",
            "{dataset}",
            "grid",
            "{model}",
            "{prompt}",
            "per_report.parquet",
        ),
    log:
        logs("metaeval", "{dataset}_grid_{model}_{prompt}.log"),
    benchmark:
        benchmarks_dir("vert_grid_score", "{dataset}_grid_{model}_{prompt}.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(GRID_DATASETS),
        model=wildcard_choice(dict.fromkeys([*GRID_ROWS, *GRID["models"]])),
        prompt=wildcard_choice(GRID_CELL_PROMPTS),
    conda:
        "../../envs/llm.yaml"
    resources:
        llm_api=llm_api(),
    params:
        metric=lambda wc: prompt_metric(wc.prompt),
        options=lambda wc: as_json(grid_cell_options(config, wc.model, wc.prompt)),
        out_dir=lambda w, output: Path(output.per_report).parent,
    shell:
        "python -m srrg vert-grid-score --refs {input.refs:q} --hyps {input.hyps:q} --metrics {params.metric}"
        " --out {params.out_dir:q} --config {params.options:q} > {log:q} 2>&1"


rule vert_grid:
    """VERT's grid: judge models (rows) x GREEN and the VERT variants (columns)."""
    input:
        cells=lambda wc: expand(
            rules.vert_grid_score.output.per_report,
            dataset=wc.dataset,
            model=GRID_ROWS,
            prompt=GRID_PROMPTS,
        ),
        ratings=rules.metaeval_prepare.output.ratings,
        pairs=rules.metaeval_prepare.output.pairs,
        code=stage_code("vert_grid"),
    output:
        table=report(
            results("metaeval", "{dataset}", "grid", "vert_grid.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        csv=results("metaeval", "{dataset}", "grid", "vert_grid.csv"),
        over_under=results("metaeval", "{dataset}", "grid", "over_under.md"),
    log:
        logs("metaeval", "{dataset}_grid.log"),
    benchmark:
        benchmarks_dir("vert_grid", "{dataset}_grid.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(GRID_DATASETS),
    conda:
        "../../envs/score.yaml"
    params:
        cells=lambda wc: " ".join(
            f"--cell {m} {p} "
            + shlex.quote(
                results("metaeval", wc.dataset, "grid", m, p, "per_report.parquet")
            )
            for m in GRID_ROWS
            for p in GRID_PROMPTS
        ),
        cfg=as_json(METAEVAL["correlate"]),
        ensembles=(
            f"--ensembles --ensemble-train {GRID['ensemble_train']}"
            if GRID["ensembles"]
            else ""
        ),
        out_dir=lambda wc: results("metaeval", wc.dataset, "grid"),
    shell:
        "python -m srrg vert-grid {params.cells} --ratings {input.ratings:q} --pairs {input.pairs:q}"
        " --out {params.out_dir:q} --config {params.cfg:q} {params.ensembles} > {log:q} 2>&1"


rule gema_grid:
    """GEMA's backbone grid: Tables 1-2 with a row per judge model (metaeval.grid.gema)."""
    input:
        cells=lambda wc: expand(
            rules.vert_grid_score.output.per_report,
            dataset=wc.dataset,
            model=list(GRID["models"]),
            prompt="gema",
        ),
        ratings=rules.metaeval_prepare.output.ratings,
        pairs=rules.metaeval_prepare.output.pairs,
        code=stage_code("gema_grid"),
    output:
        table=report(
            results("metaeval", "{dataset}", "gema_grid", "gema_grid.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
        csv=results("metaeval", "{dataset}", "gema_grid", "gema_grid.csv"),
    log:
        logs("metaeval", "{dataset}_gema_grid.log"),
    benchmark:
        benchmarks_dir("gema_grid", "{dataset}_gema_grid.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(GEMA_GRID),
    conda:
        "../../envs/score.yaml"
    params:
        cells=lambda wc: " ".join(
            f"--cell {m} "
            + shlex.quote(
                results(
                    "metaeval", wc.dataset, "grid", m, "gema", "per_report.parquet"
                )
            )
            for m in GRID["models"]
        ),
        cfg=as_json(METAEVAL["correlate"]),
        out_dir=lambda wc: results("metaeval", wc.dataset, "gema_grid"),
    shell:
        "python -m srrg gema-grid {params.cells} --ratings {input.ratings:q} --pairs {input.pairs:q}"
        " --out {params.out_dir:q} --config {params.cfg:q} > {log:q} 2>&1"


# GEMA Table 3 on every rating set whose metaeval.metrics include gema
GEMA3 = list(METAEVAL_RATING) if "gema" in METAEVAL["metrics"] else []


rule metaeval_gema3:
    """GEMA Table 3: every other metric of a rating set correlated with GEMA, with CheXbert's
    P/R/F1 (labelled from the pairs' reports when the scores lack them; unavailable without the
    radeval extra)."""
    input:
        scores=rules.metaeval_score.output.per_report,
        refs=rules.metaeval_prepare.output.refs,
        hyps=rules.metaeval_prepare.output.hyps,
        code=stage_code("metaeval_gema3"),
    output:
        table=report(
            results("metaeval", "{dataset}", "gema3", "table_gema.md"),
            caption="../report/metaeval.rst",
            category="Meta-evaluation",
            subcategory="{dataset}",
        ),
    log:
        logs("metaeval", "{dataset}_gema3.log"),
    benchmark:
        benchmarks_dir("metaeval_gema3", "{dataset}_gema3.tsv")
    wildcard_constraints:
        dataset=wildcard_choice(GEMA3),
    conda:
        "../../envs/score.yaml"
    params:
        cfg=as_json(
            {
                **METAEVAL["correlate"],
                "human_column": "gema",
                "metrics": [],
                "lower_is_better": [],
                "paired_reference": None,
                "ensembles": {},
            }
        ),
        out_dir=lambda wc: results("metaeval", wc.dataset, "gema3"),
    shell:
        "python -m srrg metaeval-gema3 --scores {input.scores:q} --refs {input.refs:q} --hyps {input.hyps:q}"
        " --out {params.out_dir:q}"
        " --config {params.cfg:q} > {log:q} 2>&1"


add_targets(
    *expand(rules.metaeval_gema3.output.table, dataset=GEMA3),
    *expand(rules.metaeval_gema.output.table, dataset=GEMA12),
    *expand(rules.vert_grid.output.table, dataset=GRID_DATASETS),
    *expand(rules.gema_grid.output.table, dataset=GEMA_GRID),
)
