"""srrg.model.train.check_resumable, a kind issue 53 found missing on this round's code: a readable
checkpoint that lacks the state_dict is refused, not only garbage."""

from __future__ import annotations

import pytest
import torch

from srrg.errors import UserError
from srrg.model.train import check_resumable


def test_a_checkpoint_without_state_dict_is_refused(tmp_path):
    """Bug: only the dict type checked (the state_dict test dropped), so a readable checkpoint
    without weights is resumed from and fails deep inside Lightning."""
    path = tmp_path / "last.ckpt"
    torch.save({"epoch": 1, "global_step": 3}, path)
    with pytest.raises(UserError, match="no state_dict in it"):
        check_resumable(path)
    torch.save(["state_dict"], path)  # not a dict at all
    with pytest.raises(UserError, match="no state_dict in it"):
        check_resumable(path)
    torch.save({"state_dict": {"w": torch.zeros(1)}}, path)
    check_resumable(path)
