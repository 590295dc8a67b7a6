"""`srrg infer-merge` writes the whole test set of one run or nothing (issue 46: S1, S2, S3): every
part records its run (model file, infer settings without the shard count, dataset) and the run's
row total, and a missing, extra, duplicated, foreign or malformed part is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import torch
from model_fixtures import tiny_generator, write_toy_dataset

from srrg.cli import main as srrg_main
from srrg.model.file import save_model
from srrg.model.infer_parts import PART_KEY

torch.set_num_threads(1)

CFG = {"num_beams": 1, "max_new_tokens": 8, "batch_size": 2, "shards": 3}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A tiny model file, a dataset of 9 test studies and the 3 parts of one run."""
    root = tmp_path_factory.mktemp("merge")
    ds = write_toy_dataset(root / "ds", n_test=9)
    model = root / "model.pt"
    save_model(model, tiny_generator(max_target_tokens=8), {"images": "phantom", "views": ["PA"]}, {})
    for k in range(3):
        assert infer(model, ds, root / f"part-{k}.parquet", CFG, k) == 0
    return ds, model, root


def infer(model: Path, ds: Path, out: Path, cfg: dict, shard: int | None = None) -> int:
    args = ["infer", "--model", str(model), "--dataset", str(ds), "--out", str(out), "--config", json.dumps(cfg)]
    return srrg_main([*args, *([] if shard is None else ["--shard", str(shard)])])


def merge(parts: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    rc = srrg_main(["infer-merge", "--parts", *map(str, parts), "--out", str(out)])
    return rc, capsys.readouterr().err.strip().splitlines()


def test_s1_every_part_merges_to_the_one_worker_file(run, tmp_path: Path, capsys) -> None:
    """S1/S2: the run identity rides in the part's metadata, so the merged file is still the one
    worker's, byte for byte (a leftover identity column would fail)."""
    ds, model, root = run
    one = tmp_path / "one.parquet"
    assert infer(model, ds, one, {k: v for k, v in CFG.items() if k != "shards"}) == 0
    rc, err = merge([root / f"part-{k}.parquet" for k in (2, 0, 1)], tmp_path / "m.parquet", capsys)
    assert rc == 0, err
    assert (tmp_path / "m.parquet").read_bytes() == one.read_bytes()


@pytest.mark.parametrize(
    ("shards", "words"), [((0, 1), "shard(s) 2 of 3 missing"), ((0, 2), "shard(s) 1 of 3 missing")]
)
def test_s1_a_missing_part_is_exit_2(run, tmp_path: Path, capsys, shards, words) -> None:
    """S1: with the last part missing the merge exited 0 with 6 of 9 studies (positions 0..k-1
    still looked complete) and scoring reported on a silently smaller test set."""
    _, _, root = run
    rc, err = merge([root / f"part-{k}.parquet" for k in shards], tmp_path / "m.parquet", capsys)
    assert rc == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "m.parquet").exists()


def test_s1_a_part_given_twice_is_exit_2(run, tmp_path: Path, capsys) -> None:
    """S1: a duplicated part (or one more than the run has) is refused, not merged."""
    _, _, root = run
    parts = [root / f"part-{k}.parquet" for k in (0, 1, 2, 1)]
    rc, err = merge(parts, tmp_path / "m.parquet", capsys)
    assert rc == 2 and len(err) == 1 and "both shard 1" in err[0], err


@pytest.mark.parametrize("change", ["beams", "dataset", "model"])
def test_s2_a_part_of_another_run_is_exit_2(run, tmp_path: Path, capsys, change: str) -> None:
    """S2: parts carried no identity, so a part decoded with 2 beams (or on another dataset, or by
    another model file) merged into a 1-beam run with exit 0."""
    ds, model, root = run
    cfg = dict(CFG)
    if change == "beams":
        cfg["num_beams"] = 2
    elif change == "dataset":
        ds = write_toy_dataset(tmp_path / "other", n_test=9, n_train=5)
    else:
        model = tmp_path / "other.pt"
        save_model(model, tiny_generator(seed=1, max_target_tokens=8), {"images": "phantom", "views": ["PA"]}, {})
    foreign = tmp_path / "part-2.parquet"
    assert infer(model, ds, foreign, cfg, 2) == 0
    rc, err = merge([root / "part-0.parquet", root / "part-1.parquet", foreign], tmp_path / "m.parquet", capsys)
    assert rc == 2 and len(err) == 1 and "another infer run" in err[0] and str(foreign) in err[0], err
    assert not (tmp_path / "m.parquet").exists()


@pytest.mark.parametrize("dtype", [pl.Float64, pl.String])
def test_s3_a_float_or_string_position_is_one_line(run, tmp_path: Path, capsys, dtype) -> None:
    """S3: a part whose position column is a float or a string was a polars vstack traceback."""
    _, _, root = run
    src = root / "part-1.parquet"
    with open(src, "rb") as fh:
        meta = {PART_KEY: pl.read_parquet_metadata(fh)[PART_KEY]}
    bad = tmp_path / "part-1.parquet"
    pl.read_parquet(src).with_columns(pl.col("position").cast(dtype)).write_parquet(bad, metadata=meta)
    rc, err = merge([root / "part-0.parquet", bad, root / "part-2.parquet"], tmp_path / "m.parquet", capsys)
    assert rc == 2 and len(err) == 1 and str(bad) in err[0] and "Traceback" not in err[0], err


def test_s1_a_part_without_identity_is_refused(run, tmp_path: Path, capsys) -> None:
    """S1/S2: a part written without a run identity (by hand, or by an older srrg) cannot be checked
    for completeness, so it is refused rather than trusted."""
    _, _, root = run
    bare = tmp_path / "part-0.parquet"
    pl.read_parquet(root / "part-0.parquet").write_parquet(bare)
    rc, err = merge([bare, root / "part-1.parquet", root / "part-2.parquet"], tmp_path / "m.parquet", capsys)
    assert rc == 2 and len(err) == 1 and "run identity" in err[0], err


def test_the_merge_starts_without_torch():
    """`srrg infer-merge` runs once per run of every demo and workflow: its code path must not load
    torch or Lightning (about 5 s and 500 MiB per job before srrg.model.infer_parts existed)."""
    import subprocess
    import sys

    code = (
        "import sys, srrg.stages.infer_merge, srrg.model.infer_parts; "
        "print(sorted({'torch', 'lightning'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
