"""The same command as `srrg score`, run by the workflow on the pairs of a ratings dataset."""

from __future__ import annotations

from srrg.stages.score import add_arguments, run

HELP = "score the pairs of a ratings dataset with every configured metric (as `srrg score`)"

__all__ = ["HELP", "add_arguments", "run"]
