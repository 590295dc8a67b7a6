"""Readers of public chest X-ray collections in their published layouts (one record per study,
every study accounted for): mimic_cxr (free-text reports, split and metadata CSVs, JPG tree) and
iu_xray (the Open-i XML archive)."""
