"""GEMA-Score Table 3: every other metric of a rating set correlated with GEMA as the column (set
`human_column: gema` in --config); no ratings file is read (docs/metaeval.md, "GEMA Table 3")."""

from __future__ import annotations

from srrg.stages.metaeval_correlate import add_arguments, run

HELP = "GEMA Table 3: every other metric of a rating set correlated with GEMA"

__all__ = ["HELP", "add_arguments", "run"]
