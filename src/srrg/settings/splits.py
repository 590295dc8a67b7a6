"""The splits of every collection and dataset, in their order (docs/workflow.md): the names of the
official MIMIC-CXR split file. Written once, here (ingest.split.fractions has one share per split),
in a module that imports nothing, so the workflow and argument parsers name them without loading a
table library."""

SPLITS = ("train", "validate", "test")
