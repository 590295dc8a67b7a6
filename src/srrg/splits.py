"""The splits of every collection and dataset, in their order (docs/workflow.md): the names of the
official MIMIC-CXR split file. Defined here alone, in a module that imports nothing, so the
workflow and argument parsers can name them without loading a table library."""

SPLITS = ("train", "validate", "test")
