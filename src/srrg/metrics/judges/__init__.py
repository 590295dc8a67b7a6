"""The LLM-judge metrics (docs/judges.md): GREEN, VERT, GEMA, CRIMSON and the proxy rating, their
shared prompt, parsing and failure handling (common) and VERT's few-shot examples (few_shot). Each
registers itself in srrg.metrics.base like every other metric; their options are in
srrg.settings.metrics."""
