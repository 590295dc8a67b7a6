"""Meta-evaluation (docs/judges.md): how well do metrics agree with human (or LLM-proxy) judgement?

adapters: published rating datasets -> one long ratings table; correlation: Kendall tau-b and
Spearman with p-values and seeded bootstrap CIs, paired bootstrap tests; counts: count-level
per-category precision/recall/F1; ensembles: linear-regression metric ensembles; tables: paper
layouts; prepare: refs/hyps files for `srrg score` (commands in srrg.stages: metaeval-*).
"""
