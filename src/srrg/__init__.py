"""srrg: structured radiology report generation and radiology report evaluation."""

__version__ = "0.1.0"
