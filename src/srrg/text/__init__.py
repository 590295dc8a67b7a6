"""The bottom layer: plain-text helpers that every stage may import (no spaCy, torch or polars).

text.spelling holds the one spelling rule shared by names, levels and locations; text.sections
cuts free-text reports at their headers. Data stages (ingest, dataset, stats) depend on this layer
only, so they start in well under a second (docs/cli.md, import times).
"""
