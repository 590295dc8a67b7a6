"""Outputs never overwrite or delete inputs (docs/cli.md, "Outputs never replace inputs"): issue 39
(cases --out inside --dataset, srrg dataset pruning an input, device nodes) and issue 38 (an output
that is an input through a symbolic link). Each test fails on the code before the fix."""

from __future__ import annotations

import os
import stat

import polars as pl
import pytest

from srrg.cli import main
from srrg.errors import UserError
from srrg.stages._args import check_outputs


def _parquet(path, rows: int = 1):
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({"study_id": [str(i) for i in range(rows)]}).write_parquet(path)
    return path


def test_cases_out_inside_the_dataset_is_refused_and_the_shard_kept(tmp_path, capsys):
    """Bug: `srrg cases --out <dataset>/train/part-00000.parquet` replaced a shard with the HTML page
    (only an output equal to an input, or holding one directly, was refused)."""
    shard = _parquet(tmp_path / "ds" / "train" / "part-00000.parquet")
    before = shard.read_bytes()
    preds, scores = _parquet(tmp_path / "p.parquet"), _parquet(tmp_path / "s.parquet")
    argv = ["cases", "--predictions", str(preds), "--scores", str(scores), "--dataset", str(tmp_path / "ds")]
    assert main([*argv, "--out", str(shard)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--out {shard}: is inside the input folder --dataset {tmp_path / 'ds'};" in err and "\n" not in err
    assert shard.read_bytes() == before


def test_dataset_does_not_prune_an_input_in_its_split_folder(tmp_path, capsys):
    """Bug: `srrg dataset --in ds/train/part-00003.parquet --out-dir ds` deleted its own input as a
    shard no longer planned (only an input directly in --out-dir was refused)."""
    source = _parquet(tmp_path / "ds" / "train" / "part-00003.parquet", rows=3)
    before = source.read_bytes()
    assert main(["dataset", "--in", str(source), "--out-dir", str(tmp_path / "ds"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--out-dir (train split) {tmp_path / 'ds' / 'train'}: holds the input --in {source};" in err
    assert source.read_bytes() == before


@pytest.mark.parametrize("through_link", [False, True], ids=["node", "link-to-node"])
def test_a_file_output_on_a_device_node_is_refused(tmp_path, through_link):
    """Bug: `--out /dev/null` (or a link to it) passed, and the atomic rename replaced the node with a
    regular file (as root, the system's /dev/null)."""
    out = "/dev/null"
    if through_link:
        out = str(tmp_path / "null-link")
        os.symlink("/dev/null", out)
    with pytest.raises(UserError, match=r"is a device, pipe or socket, not a file to write"):
        check_outputs({"--in": str(_parquet(tmp_path / "in.parquet"))}, files={"--out": out})
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_output_is_refused(tmp_path):
    """Bug: a named pipe as --out is opened by the writer, which then blocks forever."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match=r"--out .*pipe: is a device, pipe or socket"):
        check_outputs({}, files={"--out": str(fifo)})


def test_an_output_that_is_an_input_through_a_symbolic_link_is_refused(tmp_path):
    """Bug (issue 38): paths compared as written, so a link to the input is taken for another file
    and the input is replaced; also a link to the folder that holds the input."""
    source = _parquet(tmp_path / "data" / "in.parquet")
    link = tmp_path / "link.parquet"
    link.symlink_to(source)
    with pytest.raises(UserError, match=r"--out .*link\.parquet: is also the input --in; an output must not"):
        check_outputs({"--in": str(source)}, files={"--out": str(link)})
    folder_link = tmp_path / "data-link"
    folder_link.symlink_to(tmp_path / "data")
    with pytest.raises(UserError, match=r"--out-dir .*data-link: holds the input --in"):
        check_outputs({"--in": str(source)}, folders={"--out-dir": str(folder_link)})
    with pytest.raises(UserError, match=r"--out .*: is also the input --in"):
        check_outputs({"--in": str(source)}, files={"--out": str(tmp_path / "x" / ".." / "data" / "in.parquet")})


def test_inputs_below_an_ordinary_output_folder_stay_allowed(tmp_path):
    """Bug: the deeper check applied to every output folder refuses the workflow's judge/<run>/subset/
    inputs of a judge run writing judge/<run>/ (only folders pruned at any depth own their tree)."""
    subset = _parquet(tmp_path / "judge" / "run" / "subset" / "refs.parquet")
    check_outputs({"--refs": str(subset)}, folders={"--out": str(tmp_path / "judge" / "run")})
    with pytest.raises(UserError, match="holds the input --refs"):
        check_outputs({"--refs": str(subset)}, trees={"--out": str(tmp_path / "judge" / "run")})


def test_stale_temp_files_of_the_outputs_are_removed_at_start(tmp_path):
    """Bug: the `.NAME.XXXXXXXX.tmp` files of a killed run stay forever (they are never renamed), or
    the clean-up removes files that are not this command's temporaries."""
    out = tmp_path / "out.parquet"
    mine = tmp_path / ".out.parquet.ab12cd_9.tmp"
    other_output = tmp_path / ".other.parquet.ab12cd_9.tmp"
    not_a_temp = tmp_path / ".out.parquet.tmp"
    folder = tmp_path / "ds"
    deep = folder / "train" / ".part-00000.parquet.zz99yy00.tmp"
    top = folder / ".plan.json.q1w2e3r4.tmp"
    for p in (mine, other_output, not_a_temp, deep, top):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half")
    check_outputs({}, files={"--out": str(out)})
    assert not mine.exists() and other_output.exists() and not_a_temp.exists()
    check_outputs({}, folders={"--out-dir": str(folder)})
    assert not top.exists() and deep.exists()
    check_outputs({}, trees={"--out-dir": str(folder)})
    assert not deep.exists()


def test_checks_fail_before_any_temp_file_is_removed(tmp_path):
    """Bug: the clean-up runs before the checks, so a refused command still deletes files."""
    source = _parquet(tmp_path / "in.parquet")
    temp = tmp_path / ".in.parquet.ab12cd34.tmp"
    temp.write_text("x")
    with pytest.raises(UserError):
        check_outputs({"--in": str(source)}, files={"--out": str(source)})
    assert temp.exists()


def test_a_shard_job_removes_only_its_own_stale_temp_files(tmp_path):
    """Bug: every shard job cleaned the whole split folder, so with two shard jobs running at once
    (`snakemake data --cores 2`) one deleted the other's temporary shard while it was being written,
    and that job failed with "no such file or directory"."""
    from argparse import Namespace

    from srrg.stages._dataset import check_paths

    source = _parquet(tmp_path / "normalized.parquet")
    train = tmp_path / "ds" / "train"
    own = train / ".part-00000.parquet.ab12cd34.tmp"
    own_checksum = train / ".part-00000.parquet.sha256.ab12cd34.tmp"
    live = train / ".part-00001.parquet.zz99yy00.tmp"  # the shard job running beside it
    for p in (own, own_checksum, live):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half")
    args = Namespace(inp=str(source), out_dir=str(tmp_path / "ds"))
    check_paths(args, shard=("train", 0))
    assert not own.exists() and not own_checksum.exists() and live.exists()
    check_paths(args)  # the whole-dataset command owns the folder: every stale temp goes
    assert not live.exists()
