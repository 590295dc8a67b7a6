"""The same command as `srrg score`, run by the workflow for Table 2's structured columns: one run of
a method with both targets against the structured references of its Structured-First run, with
`s_score_text` at the S-Score's settings (srrg.run_tables.structure_score_options; docs/model.md,
"Table 2")."""

from __future__ import annotations

from srrg.stages.score import add_arguments, run

HELP = "Table 2's P-, D-, S-Score of what one run's outputs are read into (as `srrg score`)"

__all__ = ["HELP", "add_arguments", "run"]
