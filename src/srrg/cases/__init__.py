"""`srrg cases`: one self-contained HTML page per run to look at single studies (docs/cases.md):
image, reference and generated report, their findings aligned as S-Score matches them, per-report
scores, statuses and judge explanations, with sorting, filtering, a comparison run and a figure view."""
