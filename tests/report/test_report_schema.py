"""The packaged structured-report JSON Schema accepts what the parser and the extractor write (docs/report.md)."""

from __future__ import annotations

import json

import jsonschema

from srrg import report


def test_report_schema_accepts_a_finding_size():
    schema = json.loads(report.SCHEMA_PATH.read_text())
    parsed, _ = report.parse_report(
        json.dumps({"positive": [{"name": "nodule", "probability": 3, "size": "2 cm"}], "negative": []})
    )
    assert parsed.positive[0].size == "2 cm"
    jsonschema.validate(parsed.to_dict(), schema)
    jsonschema.validate({"positive": [{"name": "nodule", "probability": 3, "size": None}], "negative": []}, schema)
