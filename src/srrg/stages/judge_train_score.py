"""The same command as `srrg score`, run by the workflow with the tuned judge on the held-out pairs."""

from __future__ import annotations

from srrg.stages.score import add_arguments, run

HELP = "score the held-out pairs with the fine-tuned judge (as `srrg score`)"

__all__ = ["HELP", "add_arguments", "run"]
