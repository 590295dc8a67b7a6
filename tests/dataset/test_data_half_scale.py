"""benchmarks/data_half_scale.py at a tiny N: the synthetic MIMIC-CXR layout reads back through the
real reader, and every rule of the data half runs and accounts for every study."""

from __future__ import annotations

import importlib.util
import random
import sys

import polars as pl
import pytest
from paths import BENCHMARKS

from srrg.settings.ingest import MimicConfig
from srrg.sources import mimic_cxr

BENCH = BENCHMARKS / "data_half_scale.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("data_half_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_synthetic_collection_is_read_by_the_mimic_reader(bench, tmp_path):
    paths = bench.build_collection(tmp_path, 30)
    studies = mimic_cxr.read_studies(MimicConfig(**paths), progress=False)
    assert len(studies) == 30 and len({s.study_id for s in studies}) == 30
    assert all(s.text and s.dicom_ids and s.split in ("train", "validate", "test") for s in studies)
    by_patient: dict[str, set[str]] = {}
    for s in studies:
        by_patient.setdefault(s.subject_id, set()).add(s.split)
    assert len(by_patient) == round(30 / bench.STUDIES_PER_PATIENT)
    assert all(len(splits) == 1 for splits in by_patient.values())  # a patient never spans two splits
    assert any(mimic_cxr.findings_impression(s.text)[0] for s in studies)
    assert bench.built_collection(tmp_path, 30) == paths and bench.built_collection(tmp_path, 31) is None


def test_tree_layout_sections_are_mostly_distinct(bench, tmp_path):
    paths = bench.build_collection(tmp_path, 300, layout="tree")
    assert paths["reports"] == str(tmp_path) and (tmp_path / "files").is_dir()
    studies = mimic_cxr.read_studies(MimicConfig(**paths), progress=False)
    assert len(studies) == 300 and all(s.text for s in studies)
    pairs = [mimic_cxr.findings_impression(s.text) for s in studies]
    table = tmp_path / "studies.parquet"
    pl.DataFrame(pairs, schema=["findings", "impression"], orient="row").write_parquet(table)
    shares = bench.distinct_shares(table)
    assert all(distinct >= 0.6 * present and present > 200 for distinct, present in shares.values())
    assert bench.built_collection(tmp_path, 300, layout="tree") == paths
    assert bench.built_collection(tmp_path, 300, layout="zip") is None


def test_recombined_sections_keep_common_sentences(bench):
    base, pool = ["Heart size normal.", "No effusion."], ["Lungs are clear.", "No pneumothorax."]
    got = [bench.recombined(base, pool, random.Random(k), 0.5, 1.0) for k in range(40)]
    sentences = {s for section in got for s in section}
    flipped = {s.replace("left", "right") for s in sentences}
    assert {*base, *pool} <= sentences and all(len(section) >= 3 for section in got)
    assert all(s in {*base, *pool} or " mm " in s or " cm" in s for s in flipped)


@pytest.mark.slow
def test_data_half_accounts_for_every_study(bench, tmp_path, capsys):
    assert bench.main(["--n", "40", "--cores", "2", "--work", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for rule in (
        "ingest",
        "extract",
        "normalize",
        "dataset_plan",
        "dataset_shard",
        "dataset_manifest",
        "stats",
        "total",
    ):
        assert f"  {rule} " in out
    assert out.count(" 40 ok") == 5 and "MISMATCH" not in out
    assert bench.main(["--n", "40", "--cores", "2", "--work", str(tmp_path)]) == 0  # the kept collection again
    out = capsys.readouterr().out
    assert "reusing the 40 synthetic" in out and out.count(" 40 ok") == 5
