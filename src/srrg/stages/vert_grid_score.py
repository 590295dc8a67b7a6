"""The same command as `srrg score`, run by the workflow for one cell of VERT's grid: one judge
model and one prompt (GREEN or a VERT variant) on the pairs of a rating set (docs/judges.md)."""

from __future__ import annotations

from srrg.stages.score import add_arguments, run

HELP = "one judge model x prompt of VERT's grid on a rating set's pairs (as `srrg score`)"

__all__ = ["HELP", "add_arguments", "run"]
