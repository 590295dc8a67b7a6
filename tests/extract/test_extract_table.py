"""The extract stage's table step: chunk by chunk (serially or in workers), row for row, the same
strings as extracting every report at once."""

from __future__ import annotations

import json

import polars as pl

from srrg.extract.pipeline import Extractor, column_sections
from srrg.extract.table import extract_table
from srrg.settings.extract import ExtractConfig

FINDINGS = ["Mild cardiomegaly.", None, "No pleural effusion. Small left pneumothorax.", "Heart size normal."] * 3
IMPRESSION = ["No acute disease.", "Right lower lobe pneumonia.", None, None] * 3


def _table() -> pl.DataFrame:
    return pl.DataFrame(
        {"study_id": [str(i) for i in range(len(FINDINGS))], "findings": FINDINGS, "impression": IMPRESSION},
        schema={"study_id": pl.Utf8, "findings": pl.Utf8, "impression": pl.Utf8},
    )


def test_chunks_and_workers_give_every_row_its_own_result() -> None:
    config = ExtractConfig(batch_size=1)  # chunks of 4 rows: 3 chunks
    direct = Extractor(config).run(
        column_sections({"findings": f, "impression": i}, config.sections) for f, i in zip(FINDINGS, IMPRESSION)
    )
    expected = [(e.report.to_json(), json.dumps(e.provenance, ensure_ascii=False), e.status) for e in direct]
    for n_process in (1, 2):
        out = extract_table(_table(), ExtractConfig(batch_size=1, n_process=n_process), progress=False)
        assert out.columns == ["study_id", "findings", "impression", "structured", "provenance", "extract_status"]
        assert out.select("structured", "provenance", "extract_status").rows() == expected
        assert out["study_id"].to_list() == _table()["study_id"].to_list()
    assert expected[1][2] == "ok" and json.loads(expected[3][0])["negative"] == ["cardiomegaly"]
