"""The splits of every collection and dataset, in their order (docs/workflow.md): the names of the
official MIMIC-CXR split file. A settings constant (ingest.split.fractions has one share per split);
srrg.splits names it for the code that is not settings."""

SPLITS = ("train", "validate", "test")
