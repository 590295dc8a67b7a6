"""The splits of every collection and dataset, in their order (docs/workflow.md). Written once, in
srrg.settings.splits (the ingest settings' fractions name them), a module that imports nothing, so
the workflow and argument parsers can name them without loading a table library."""

from srrg.settings.splits import SPLITS

__all__ = ["SPLITS"]
