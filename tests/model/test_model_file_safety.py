"""Model files are what users share: loading one runs no code, and a file that is not a model of
its own config is one line naming it (issue 46: MF1, MF2)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import torch
from model_fixtures import tiny_generator, write_toy_dataset

from srrg.cli import main as srrg_main
from srrg.errors import UserError
from srrg.model.file import load_model, save_model

torch.set_num_threads(1)


class Planted:
    """An object whose unpickling creates a marker file (what a hostile shared model.pt can carry)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def _model_file(path: Path, **replace: Any) -> Path:
    """A real model file of the tiny network, with some of its entries replaced."""
    net = tiny_generator()
    save_model(path, net, {"images": "phantom"}, {"steps": 0})
    blob = torch.load(path, weights_only=True)
    torch.save({**blob, **replace}, path)
    return path


def test_mf1_a_model_file_that_would_run_code_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """MF1: load_model unpickled with weights_only=False, so an object in a shared model.pt ran its
    __reduce__ during `srrg infer` (a marker file appeared). Now the safe unpickler refuses the file
    in one line naming it, and the marker is never created."""
    marker = tmp_path / "marker"
    model = _model_file(tmp_path / "model.pt", model_config=Planted(marker), summary={"x": Planted(marker)})
    with pytest.raises(UserError, match="would run code") as err:
        load_model(model, torch.device("cpu"))
    assert str(model) in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()
    ds = write_toy_dataset(tmp_path / "ds")
    rc = srrg_main(["infer", "--model", str(model), "--dataset", str(ds), "--out", str(tmp_path / "p.parquet")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and str(model) in lines[0] and "Traceback" not in lines[0]
    assert not marker.exists() and not (tmp_path / "p.parquet").exists()


def test_mf1_a_model_file_holds_only_plain_data_and_loads_back(tmp_path: Path) -> None:
    """MF1: what save_model writes must load under the safe unpickler (configs as plain dicts,
    rebuilt into their classes), else every real model file would be refused."""
    net = tiny_generator()
    save_model(tmp_path / "model.pt", net, {"images": "phantom"}, {"steps": 3})
    loaded, data_cfg = load_model(tmp_path / "model.pt", torch.device("cpu"))
    assert loaded.cfg == net.cfg and data_cfg.images == "phantom"
    for key, value in net.export_state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value)


@pytest.mark.parametrize("case", ["empty state dict", "other config", "state dict not a mapping", "other sizes"])
def test_mf2_weights_that_do_not_fit_the_config_are_one_line(tmp_path: Path, case: str) -> None:
    """MF2: a model file whose weights do not fit its config (another config's, an empty state dict)
    was a 10 kB ValueError/RuntimeError traceback; now one line naming the file."""
    cfg = asdict(tiny_generator().cfg)
    kwargs = cfg["encoder"]["kwargs"]
    replace: dict[str, Any] = {
        "empty state dict": {"state_dict": {}},
        "other config": {"model_config": {**cfg, "arch": "baseline"}},
        "state dict not a mapping": {"state_dict": [1, 2]},
        "other sizes": {"model_config": {**cfg, "encoder": {**cfg["encoder"], "kwargs": {**kwargs, "embed_dim": 32}}}},
    }[case]
    model = _model_file(tmp_path / "model.pt", **replace)
    with pytest.raises(UserError) as err:
        load_model(model, torch.device("cpu"))
    message = str(err.value)
    assert str(model) in message and "\n" not in message and len(message) < 600, message
